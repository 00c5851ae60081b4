"""Run Django's and Starlette's own session tests against this project.

The tests come from the source distribution of the *installed* Django and Starlette,
downloaded from the package index with pip and cached under the virtual environment
(``<sys.prefix>/incumbent-sdists``) or a temporary folder; nothing of theirs is committed.
Each suite runs in a pytest process of its own (its own settings, their ``tests`` package),
and the outer tests in this folder check the outcome of every test in it:

- every test passes, except
- the tests listed below, which cannot apply to a client-side store: each is skipped by
  name with its reason. A listed test that no longer exists fails the run, and so does
  a test skipped for any other reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


@dataclass(frozen=True)
class Skip:
    """An incumbent test that cannot apply to a client-side store, and why."""

    test: str
    reason: str
    #: The first Django version whose suite has this test (the async twins came in 5.0).
    since: tuple[int, int] = (0, 0)


NO_SERVER_SIDE_LOOKUP = (
    "asserts exists(session_key) is True after save(): exists() asks a server-side store whether a key is taken, "
    "and a signed cookie is in none (Django's CookieSessionTests passes over it for signed_cookies too)"
)
NO_NEW_KEY = (
    "asserts cycle_key() changes session_key: a server-side store moves the data to a new random key and deletes "
    "the old one, but a signed cookie's key is its signed data, the same token when re-signed within the second, "
    "and the old cookie stays valid until it expires whatever the new key (Django's CookieSessionTests passes over "
    "it too; test_cycle_with_no_session_cache, which runs, checks the data survives)"
)
NO_SERVER_SIDE_INVALIDATION = (
    "needs a server-side store: deleting the session in one context cannot invalidate the copy of the cookie "
    "another context holds, so its save() cannot raise UpdateError (Django skips it for signed_cookies too)"
)

#: Django's SessionTestsMixin (tests/sessions_tests/tests.py), the contract every session engine passes.
DJANGO_SESSION_STORE_SKIPS = (
    Skip("test_save", NO_SERVER_SIDE_LOOKUP),
    Skip("test_save_async", NO_SERVER_SIDE_LOOKUP, since=(5, 0)),
    Skip("test_cycle", NO_NEW_KEY),
    Skip("test_cycle_async", NO_NEW_KEY, since=(5, 0)),
    Skip("test_session_save_does_not_resurrect_session_logged_out_in_other_context", NO_SERVER_SIDE_INVALIDATION),
    Skip(
        "test_session_asave_does_not_resurrect_session_logged_out_in_other_context",
        NO_SERVER_SIDE_INVALIDATION,
        since=(5, 0),
    ),
)

#: Django's SessionMiddlewareTests, under Django's middleware and under ours, with this project's engine.
DJANGO_MIDDLEWARE_SKIPS = (
    Skip(
        "test_empty_session_saved",
        "reads the saved session back from the database engine's model (Session.objects.get(session_key=...)); "
        "a signed cookie has no database row (that an emptied, unflushed session keeps its cookie is checked by "
        "tests/django_sessions/test_session_middleware.py, scenario 'cleared')",
    ),
)

#: Django's auth_tests, with this project's engine and revocation on ("module.Class.test" below auth_tests).
DJANGO_AUTH_SKIPS: tuple[Skip, ...] = (
    Skip(
        "test_middleware.TestLoginRequiredMiddleware.test_protected_view_logged_in_performance",
        "counts two database queries for a logged-in request, 'session and user': the database engine reads the "
        "session's row, and a signed cookie has none, so the request makes one query, the user's (Django's "
        "signed_cookies makes one too); the class's other tests check that the protected view gets its user",
        since=(6, 0),
    ),
    Skip(
        "test_views.LoginTest.test_session_key_flushed_on_login_after_password_change",
        "asserts that a second login of the same user leaves the session key as it was; the database engine's key "
        "is a row's name, ours is the cookie, signed again at that login with the time of its second (as Django's "
        "signed_cookies' is), so the test passes only when both logins fall within one second of the clock (it "
        "failed on a loaded CI machine); tests/revocation/test_sessions_django.py checks what it means: the same "
        "session kept without a password change, a new one after it",
    ),
)

#: Skips that Django's auth_tests make themselves, whatever the session engine, when an optional package or a
#: Python version is missing, or a test is for the other kind of handler (Django's own skipUnless/skipIf):
#: accepted, and counted apart (regular expressions).
DJANGO_AUTH_OWN_SKIPS = (
    r"bcrypt not installed",
    r"argon2-cffi not installed",
    r"Python 3\.\d+\+ only",
    r"This test covers async-only functionality",
)

#: Starlette's tests/middleware/test_session.py, with this project's middleware in place of Starlette's.
STARLETTE_SKIPS: tuple[Skip, ...] = ()


def skips_for(skips: Iterable[Skip], django_version: tuple[int, int] = (0, 0)) -> dict[str, str]:
    """{test name: reason} for the tests of ``skips`` that the installed version's suite has."""
    return {skip.test: skip.reason for skip in skips if django_version >= skip.since}


def django_version() -> tuple[int, int]:
    import django

    return django.VERSION[0], django.VERSION[1]


# Fetching the sdists -------------------------------------------------------------------------------------------


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(message: str) -> NoReturn:
    """The incumbents' tests cannot be had: a failure in CI, a skip (saying why) elsewhere."""
    if in_ci():
        pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(f"{message}; set CI=true to make this a failure")


def cache_dir() -> Path:
    """``<venv>/incumbent-sdists`` inside a virtual environment (tox's too), else a temporary folder."""
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "incumbent-sdists"
    return Path(tempfile.gettempdir()) / "blake2sign-web-incumbent-sdists"


def download_sdist(project: str, release: str) -> Path:
    """The source distribution of ``project==release`` from the package index, downloaded once."""
    folder = cache_dir() / "downloads" / f"{project}-{release}"
    found = sorted(folder.glob("*.tar.gz"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        # Only the project itself from source: build dependencies from wheels (from source, they take minutes).
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", project]
        command += ["--disable-pip-version-check", "--quiet", "--dest", str(folder), f"{project}=={release}"]
        completed = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
        found = sorted(folder.glob("*.tar.gz"))
        if completed.returncode != 0 or len(found) != 1:
            errors = [line for line in completed.stderr.splitlines() if line.startswith("ERROR")]
            unavailable(
                f"could not download the {project} {release} source distribution from the package index "
                f"(offline?): {' '.join(errors[-2:]) or completed.stderr[-500:]}"
            )
    return found[0]


def extract(project: str, part: str, wanted: Callable[[str], bool]) -> Path:
    """The installed release's sdist, its files for which ``wanted(path)`` holds, extracted once; their root.

    ``part`` names the extraction (one folder per suite): a suite added later never finds
    the folder of another one, made without its files.
    """
    release = version(project)
    target = cache_dir() / f"{project}-{release}-{part}"
    if target.is_dir():
        return target
    archive = download_sdist(project, release)
    staging = Path(tempfile.mkdtemp(prefix=f".{project}-", dir=cache_dir()))
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                path = member.name.partition("/")[2]  # below the top folder, "django-5.2.19/"
                if not member.isfile() or not wanted(path) or ".." in Path(path).parts or Path(path).is_absolute():
                    continue
                source = tar.extractfile(member)
                if source is None:
                    continue
                destination = staging / path
                destination.parent.mkdir(parents=True, exist_ok=True)
                with source, destination.open("wb") as out:
                    shutil.copyfileobj(source, out)
        try:
            staging.rename(target)  # atomic: a parallel run either wins or finds the target made
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def django_tests() -> Path:
    """Django's ``tests/`` folder, holding ``sessions_tests`` only."""
    return extract("django", "sessions_tests", lambda path: path.startswith("tests/sessions_tests/")) / "tests"


#: What Django's auth_tests need besides their folder: Django's test runner script, its default test
#: settings (which ours import), the empty root URLconf it sets, and the mail backend one test names.
DJANGO_AUTH_FILES = (
    "tests/runtests.py",
    "tests/test_sqlite.py",
    "tests/urls.py",
    "tests/mail/__init__.py",
    "tests/mail/custombackend.py",
)


def django_auth_tests() -> Path:
    """Django's ``tests/`` folder, holding ``auth_tests`` and the few files of ``DJANGO_AUTH_FILES``."""

    def wanted(path: str) -> bool:
        return path.startswith("tests/auth_tests/") or path in DJANGO_AUTH_FILES

    return extract("django", "auth_tests", wanted) / "tests"


STARLETTE_SUITE = "tests/middleware/test_session.py"


def starlette_tests() -> Path:
    """The root of Starlette's sdist, holding its session tests and the non-test files of ``tests/`` they import."""

    def wanted(path: str) -> bool:
        name = path.rpartition("/")[2]
        return path == STARLETTE_SUITE or (
            path.startswith("tests/") and name.endswith(".py") and not name.startswith("test_")
        )

    return extract("starlette", "session_tests", wanted)


# Running a suite -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One test's outcome, from pytest's JUnit XML."""

    group: str  # the test class (Django) or module (Starlette)
    name: str
    outcome: str  # passed, failed, error or skipped
    message: str = ""
    #: "path.py:line" of the innermost frame of a failure's traceback.
    where: str = ""


@dataclass
class SuiteRun:
    label: str
    returncode: int
    output: str
    cases: list[Case] = field(default_factory=list)

    def group(self, name: str) -> list[Case]:
        return [case for case in self.cases if case.group == name]


def run_pytest(label: str, args: list[str], *, cwd: Path, pythonpath: list[Path], env: Mapping[str, str]) -> SuiteRun:
    """``python -m pytest args`` in a process of its own; the outcome of every test it ran."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "junit.xml"
        environment = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
        environment.update(env)
        environment["PYTHONPATH"] = os.pathsep.join(
            [*map(str, pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}", *args]
        completed = subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, text=True, check=False, timeout=900
        )
        output = completed.stdout + completed.stderr
        cases = [readable_location(case, cwd) for case in parse_junit(report)] if report.exists() else []
    return SuiteRun(label, completed.returncode, output, cases)


def readable_location(case: Case, cwd: Path) -> Case:
    """``case`` with its failure's location relative to this project when it is in it, else absolute."""
    if not case.where:
        return case
    path, _, line = case.where.rpartition(":")
    location = (cwd / path).resolve()
    if location.is_relative_to(ROOT):
        location = location.relative_to(ROOT)
    return replace(case, where=f"{location}:{line}")


def parse_junit(report: Path) -> list[Case]:
    cases = []
    for testcase in ElementTree.parse(report).getroot().iter("testcase"):
        outcome, message, where = "passed", "", ""
        for kind in ("failure", "error", "skipped"):
            element = testcase.find(kind)
            if element is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[kind]
                message = element.get("message") or (element.text or "").strip()
                where = innermost_frame(element.text or "")
                break
        group = testcase.get("classname", "").rpartition(".")[2]
        cases.append(Case(group, testcase.get("name", ""), outcome, message, where))
    return cases


def innermost_frame(traceback: str) -> str:
    """The last "path.py:line" that starts a line of pytest's traceback text."""
    frames = re.findall(r"^(\S+\.py:\d+):", traceback, flags=re.MULTILINE)
    return frames[-1] if frames else ""


def run_django_suite(redis_url: str) -> SuiteRun:
    """Django's suite; ``redis_url`` is a redis-server for the contract with revocation on."""
    sessions_tests = django_tests()
    return run_pytest(
        f"Django {version('django')}",
        ["-q", "--ds=tests.incumbents.django_settings", str(HERE / "django_cases.py")],
        cwd=ROOT,
        pythonpath=[sessions_tests, ROOT],
        env={"BLAKE2SIGN_INCUMBENT_REDIS": redis_url},
    )


#: The changes made to Django's auth_tests, and why; the run fails if a text to replace is gone.
#:
#: - test_basic.py rotates SECRET_KEY to "newsecret" (9 bytes), which this project refuses (under 16 bytes a
#:   secret falls to an offline guess from a single cookie): it gets a longer one. No test depends on its value.
#: - client.py's PasswordResetConfirmClient emulates PasswordResetConfirmView's first step (the token put in
#:   the session, then a redirect) by saving ``self.session`` and expecting the next request to see it. That
#:   holds for a server-side store, whose key the client's cookie already names; a cookie store's key *is* its
#:   data, so the client must be given the saved session's key, as Client.login() does and as the view's
#:   response would (Set-Cookie). Without this, the 17 tests of the password reset confirmation fail with
#:   any cookie engine, Django's signed_cookies included.
DJANGO_AUTH_CHANGES: dict[str, tuple[tuple[str, str], ...]] = {
    "auth_tests/test_basic.py": (('SECRET_KEY="newsecret"', 'SECRET_KEY="newsecret-of-at-least-16-bytes"'),),
    "auth_tests/client.py": (
        ("import re\n", "import re\n\nfrom django.conf import settings\n"),
        (
            "        session.save()\n",
            "        session.save()\n        self.cookies[settings.SESSION_COOKIE_NAME] = session.session_key\n",
        ),
    ),
}


def run_django_auth_suite(
    engine: str, redis_url: str = "", key_prefix: str = "auth-tests", *, adapted: bool = True
) -> SuiteRun:
    """Django's ``auth_tests`` by Django's own ``runtests.py``, with the session engine ``engine``.

    ``engine``: see django_auth_settings (``revocation`` needs ``redis_url``). One process,
    ``--parallel=1`` (the skips are set in it, and the machine's cores are shared). ``adapted=False``
    runs Django's files as they are, without ``DJANGO_AUTH_CHANGES`` (to compare, never in CI).
    """
    tests = django_auth_tests()
    for path, changes in DJANGO_AUTH_CHANGES.items():
        adapt(tests, path, changes if adapted else (), "DJANGO_AUTH_CHANGES")
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "results.json"
        environment = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
        environment.update(
            BLAKE2SIGN_INCUMBENT_AUTH_ENGINE=engine,
            BLAKE2SIGN_INCUMBENT_REDIS=redis_url,
            BLAKE2SIGN_INCUMBENT_KEY_PREFIX=key_prefix,
            BLAKE2SIGN_INCUMBENT_AUTH_SKIPS=json.dumps(skips_for(DJANGO_AUTH_SKIPS, django_version())),
            BLAKE2SIGN_INCUMBENT_AUTH_RESULTS=str(results),
            PYTHONDONTWRITEBYTECODE="1",
        )
        # runtests.py puts its own folder first on sys.path (Django's test apps, test_sqlite); ours (``tests.``) next.
        environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
        command = [sys.executable, "runtests.py", "auth_tests", "--settings=tests.incumbents.django_auth_settings"]
        command += ["--parallel=1", "--noinput", "--verbosity=1"]
        completed = subprocess.run(
            command, cwd=tests, env=environment, capture_output=True, text=True, check=False, timeout=900
        )
        output = completed.stdout + completed.stderr
        records = json.loads(results.read_text()) if results.exists() else []
    cases = [readable_location(unittest_case(record), tests) for record in records]
    return SuiteRun(f"Django {version('django')}", completed.returncode, output, cases)


def unittest_case(record: Mapping[str, str]) -> Case:
    """A test's outcome as django_auth_runner records it; a failure's message is its exception, not its traceback."""
    outcome, text = record["outcome"], record.get("message", "")
    if outcome not in ("failed", "error"):
        return Case("auth_tests", record["name"], outcome, text)
    frames = re.findall(r'^\s*File "([^"]+)", line (\d+)', text, flags=re.MULTILINE)
    tail = text.rpartition(f'File "{frames[-1][0]}", line {frames[-1][1]}')[2] if frames else text
    exception = [line for line in tail.splitlines()[1:] if line.strip() and not line.startswith(" ")]
    message = " ".join(exception) or text
    return Case("auth_tests", record["name"], outcome, message, f"{frames[-1][0]}:{frames[-1][1]}" if frames else "")


#: The one change made to Starlette's suite, and why. Starlette accepts any secret and its tests sign with
#: ``secret_key="example"`` (7 bytes); this project refuses secrets under 16 bytes (keys.MIN_SECRET_LENGTH:
#: a short secret falls to an offline guess from a single cookie), so the suite gets a long one instead.
#: No test of theirs depends on the secret's value; the run fails if the text to replace is gone.
STARLETTE_SECRET = ('secret_key="example"', 'secret_key="example-secret-of-at-least-16-bytes"')


def adapt_starlette_suite(root: Path) -> int:
    """Write the suite with ``STARLETTE_SECRET`` applied, from a pristine copy; the number of replacements."""
    return adapt(root, STARLETTE_SUITE, [STARLETTE_SECRET], "STARLETTE_SECRET")[0]


def adapt(root: Path, path: str, changes: Iterable[tuple[str, str]], name: str) -> list[int]:
    """Write ``root/path`` with each ``(old, new)`` of ``changes`` applied, from a pristine copy; the counts replaced.

    The run fails if an ``old`` text is no longer in the file (``name``: the constant to review).
    """
    suite = root / path
    pristine = suite.with_name(suite.name + ".orig")
    if not pristine.exists():
        shutil.copyfile(suite, pristine)
    text = pristine.read_text(encoding="utf-8")
    counts = []
    for old, new in changes:
        counts.append(text.count(old))
        if not counts[-1]:
            pytest.fail(f"{path} no longer contains {old!r}: review {name} in {__file__}", pytrace=False)
        text = text.replace(old, new)
    suite.write_text(text, encoding="utf-8")
    return counts


def run_starlette_suite() -> SuiteRun:
    root = starlette_tests()
    replaced = adapt_starlette_suite(root)
    secret_length = len(STARLETTE_SECRET[1].split('"')[1])
    SUMMARY.append(
        f"Starlette {version('starlette')}: {replaced} x {STARLETTE_SECRET[0]} given a {secret_length}-byte secret"
    )
    # Starlette's own conftest turns blockbuster on when it is installed (from 0.42 on): every blocking call
    # made on the event loop, ours included, then fails the test. Run it as Starlette does, never without it.
    if "blockbuster" in (root / "tests" / "conftest.py").read_text(encoding="utf-8"):
        try:
            __import__("blockbuster")
        except ImportError:
            pytest.fail("Starlette's suite uses blockbuster, which is not installed (the test dependency group has it)")
        SUMMARY.append(f"Starlette {version('starlette')}: blockbuster active (blocking calls on the event loop fail)")
    # pytest looks upward for a configuration file: stop it at this one, not at this project's pyproject.toml.
    (root / "pytest.ini").write_text("[pytest]\naddopts = -rfEs --strict-markers\nxfail_strict = true\n")
    package_parent = Path(__import__("blake2sign_web").__file__).resolve().parent.parent
    return run_pytest(
        f"Starlette {version('starlette')}",
        ["-q", "-p", "no:django", "-p", "incumbent_starlette_plugin", STARLETTE_SUITE],
        cwd=root,
        # Their ``tests`` package is the first on sys.path (the working directory); the plugin comes from here.
        pythonpath=[HERE, package_parent],
        env={"BLAKE2SIGN_WEB_INCUMBENT_SKIPS": json.dumps(skips_for(STARLETTE_SKIPS))},
    )


# Checking a suite ----------------------------------------------------------------------------------------------

#: "<suite>: <n> passed, <n> skipped, <n> failed" lines for the terminal summary (see conftest.py).
SUMMARY: list[str] = []


def check(run: SuiteRun, group: str, title: str, skips: Mapping[str, str], own_skips: Iterable[str] = ()) -> None:
    """Every test of ``group`` passed, except exactly the listed skips; else fail, naming each test and why.

    ``own_skips``: regular expressions of the reasons the suite itself skips a test for (a package or
    Python version its environment lacks), whatever the engine; those are counted apart.
    """
    cases = run.group(group)
    passed = [case for case in cases if case.outcome == "passed"]
    theirs = [case for case in cases if case.outcome == "skipped" and case.name not in skips and own(case, own_skips)]
    skipped = {case.name: case.message for case in cases if case.outcome == "skipped" and case not in theirs}
    failed = [case for case in cases if case.outcome in ("failed", "error")]
    by_the_suite = f" (+ {len(theirs)} skipped by the suite itself)" if theirs else ""
    SUMMARY.append(
        f"{run.label}, {title}: {len(passed)} passed, {len(skipped)} skipped{by_the_suite}, {len(failed)} failed"
    )
    problems = [f"{case.name} {case.outcome.upper()} at {case.where}: {first_line(case.message)}" for case in failed]
    problems += [
        f"{name} was skipped, but is not in the skip list: {first_line(reason)}"
        for name, reason in skipped.items()
        if name not in skips
    ]
    problems += [f"{name} is in the skip list, but did not run as a skip" for name in skips if name not in skipped]
    if not cases:
        problems.append(f"no test of {group} ran; the run said:\n{run.output[-3000:]}")
    elif not passed:
        problems.append("no test passed")
    if problems:
        pytest.fail(f"{run.label}, {title}:\n  " + "\n  ".join(problems), pytrace=False)


def own(case: Case, reasons: Iterable[str]) -> bool:
    return any(re.search(reason, case.message) for reason in reasons)


def first_line(message: str) -> str:
    return message.strip().splitlines()[0][:300] if message.strip() else "(no message)"
