"""Run Flask's own tests that touch the session against this project's ``FlaskSessions``.

As runner.py does for Django and Starlette: the tests come from the source distribution of the *installed*
Flask (downloaded with pip, cached beside the virtual environment; nothing of theirs is committed), run in a
pytest process of their own with ``incumbent_flask_plugin``, which makes ``FlaskSessions`` every app's
session interface, and every test of the listed modules must pass, except ``FLASK_SKIPS``.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from .runner import HERE, SUMMARY, Skip, SuiteRun, adapt, extract, run_pytest, skips_for

#: Flask's test modules that use the session (through flask.session, flash(), session_transaction()...).
FLASK_MODULES = (
    "test_basic",
    "test_testing",
    "test_reqctx",
    "test_helpers",
    "test_templating",
    "test_signals",
    "test_session_interface",
)

#: Flask's tests of these modules (by module) that do not test a session interface, and fail without this project.
FLASK_SKIPS: dict[str, tuple[Skip, ...]] = {
    "test_reqctx": (
        Skip(
            "test_bad_environ_raises_bad_request",
            "fails with Flask's own SecureCookieSessionInterface too (a 404 for a 400 with Werkzeug 3.1.9: the bad "
            "Host is matched differently); its app has no secret key, so neither interface opens a session",
        ),
    ),
}


def all_skips() -> dict[str, str]:
    """Every module's skips, by test name, for the plugin."""
    return {name: reason for skips in FLASK_SKIPS.values() for name, reason in skips_for(skips).items()}


#: Flask's tests sign with secrets of 5 to 8 bytes ("test key", "0 key"...); this project refuses secrets under
#: 16 bytes (keys.MIN_SECRET_LENGTH: a short secret falls to an offline guess from a single cookie), so each
#: gets a longer one, the same text with a suffix: the rotation test still rotates distinct keys. No test depends
#: on a secret's value; the run fails if a text to replace is gone.
LONGER = "-of-at-least-16-bytes"
FLASK_CHANGES: dict[str, tuple[tuple[str, str], ...]] = {
    "tests/conftest.py": (('SECRET_KEY="test key"', f'SECRET_KEY="test key{LONGER}"'),),
    "tests/test_basic.py": tuple((f'"{key} key"', f'"{key} key{LONGER}"') for key in ("0", "-1", "-2", "?", "+1")),
}


#: Flask's conftest.py names ``_pytest.monkeypatch.notset``, which pytest 9 renamed ``NOTSET``: with a pytest
#: without the old name, the conftest gets the new one (the same sentinel).
PYTEST_NOTSET = ("monkeypatch.notset", "monkeypatch.NOTSET")


def flask_changes() -> dict[str, tuple[tuple[str, str], ...]]:
    """``FLASK_CHANGES``, and ``PYTEST_NOTSET`` when the installed pytest needs it."""
    import _pytest.monkeypatch

    if hasattr(_pytest.monkeypatch, "notset"):
        return FLASK_CHANGES
    conftest = "tests/conftest.py"
    return {**FLASK_CHANGES, conftest: (*FLASK_CHANGES[conftest], PYTEST_NOTSET)}


def flask_tests() -> Path:
    """The root of Flask's sdist, holding its ``tests/`` folder (its apps, templates and static files too)."""
    return extract("flask", "tests", lambda path: path.startswith("tests/"))


def run_flask_suite() -> SuiteRun:
    root = flask_tests()
    for path, changes in flask_changes().items():
        counts = adapt(root, path, changes, "FLASK_CHANGES")
        SUMMARY.append(f"Flask {version('flask')}: {path}: {sum(counts)} replacement(s) (FLASK_CHANGES)")
    # Flask's own pytest settings (warnings are errors); pytest stops looking for a configuration file here.
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\nfilterwarnings =\n    error\n")
    package_parent = Path(__import__("blake2sign_web").__file__).resolve().parent.parent
    return run_pytest(
        f"Flask {version('flask')}",
        ["-q", "-p", "no:django", "-p", "incumbent_flask_plugin", *(f"tests/{name}.py" for name in FLASK_MODULES)],
        cwd=root,
        pythonpath=[HERE, package_parent],
        env={"BLAKE2SIGN_WEB_INCUMBENT_SKIPS": json.dumps(all_skips())},
    )
