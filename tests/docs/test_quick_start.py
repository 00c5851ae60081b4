"""README.md's quick starts run as written, from the built wheel, in a fresh virtual environment.

The wheel is built once (``pip wheel --no-deps``, as a release would build it). For each framework a new venv
gets what the quick start's ``pip install`` line says, with the wheel in place of the name on the package index
(only ``[django]``, ``[fastapi]`` and uvicorn, or ``[flask]``): nothing from this checkout, no test tools.
The quick start's files are written as the README shows them into an empty directory, its run command starts
the server (on a free port), and three requests with one cookie jar count 1, 2, 3: the session works. The
FastAPI quick start's run command, given the quick start's app with a bad argument, must stop at start-up
with the argument's message (uvicorn's default ``--lifespan auto`` would serve and answer every request with
500).

A package index that cannot be reached skips these tests, except under CI, where it fails them.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import free_port

from .readme import ROOT, Block, commands, file_name, sections
from .run_commands import start_up_failure

pytestmark = pytest.mark.server

QUICK_STARTS = {"django": "Quick start: Django", "fastapi": "Quick start: FastAPI", "flask": "Quick start: Flask"}
#: The quick start's pages; each request adds one visit.
PATHS = {"django": "/visits/", "fastapi": "/visits", "flask": "/visits"}
#: What the package index needs for the wheel and its dependencies, with time to spare on 2 cores.
PIP_TIMEOUT = 300


def run_pip(command: list[str], cwd: Path) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    if result.returncode != 0:
        message = f"{shlex.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(f"the package index may be unreachable: {message}")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run_pip([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(ROOT)], out)
    [built] = out.glob("blake2sign_web-*.whl")
    return built


def clean_environment(bin_dir: Path) -> dict[str, str]:
    """The environment of a shell with the new venv activated: nothing of this checkout or of the test venv."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "PYTHONHOME", "PYTHONSTARTUP"}
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def install_command(block: Block, wheel: Path, python: Path) -> list[str]:
    """The README's ``pip install "blake2sign-web[extra]" ...``, with the built wheel for blake2sign-web."""
    [line] = commands(block)
    words = shlex.split(line)
    assert words[:2] == ["pip", "install"], line
    requirements = [
        f"blake2sign-web[{word.split('[', 1)[1]} @ {wheel.as_uri()}" if word.startswith("blake2sign-web[") else word
        for word in words[2:]
    ]
    assert any(word.startswith("blake2sign-web") for word in requirements), line
    return [str(python), "-m", "pip", "install", "--quiet", *requirements]


def server_command(block: Block, port: int) -> list[str]:
    """The README's run command, told a free port instead of 8000 (the only change)."""
    [line] = commands(block)
    words = shlex.split(line)
    if words[0] == "django-admin":
        return [*words, f"127.0.0.1:{port}"]
    if words[0] == "flask":
        return [*words, "--port", str(port)]
    assert words[0] == "uvicorn", line
    return [*words, "--port", str(port)]


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}:\n{log.read_text()[-3000:]}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the server did not listen on {port} within {timeout} s:\n{log.read_text()[-3000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group (runserver's autoreloader runs the server in a child), then SIGKILL."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


@dataclass(frozen=True)
class QuickStart:
    url: str  #: the quick start's page
    python: Path  #: the fresh venv's interpreter
    framework: str  #: its framework (flask is a contributor tool elsewhere: moto's server)


@dataclass(frozen=True)
class Installed:
    """A framework's quick start: its fresh venv, with what its ``pip install`` line says, and its blocks."""

    folder: Path
    bin_dir: Path
    files: dict[str, str]  #: the files the reader writes, by name, as the README shows them
    run: Block  #: the run command's block


@pytest.fixture(scope="module")
def install(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Installed]:
    """``install("fastapi")``: the framework's venv, made once per module and shared by its tests."""
    made: dict[str, Installed] = {}

    def make(framework: str) -> Installed:
        if framework not in made:
            install, *files, run = sections()[QUICK_STARTS[framework]]
            folder = tmp_path_factory.mktemp(f"quick-start-{framework}")
            environment = folder / "venv"
            venv.EnvBuilder(with_pip=True).create(environment)
            bin_dir = environment / ("Scripts" if os.name == "nt" else "bin")
            run_pip(install_command(install, wheel, bin_dir / "python"), folder)
            named = {file_name(block): block.text for block in files}
            assert None not in named
            made[framework] = Installed(folder, bin_dir, {str(name): text for name, text in named.items()}, run)
        return made[framework]

    return make


def write_project(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module", params=list(QUICK_STARTS))
def quick_start(request: pytest.FixtureRequest, install: Callable[[str], Installed]) -> Iterator[QuickStart]:
    """The quick start of one framework, installed in a fresh venv and running."""
    framework: str = request.param
    installed = install(framework)
    project = write_project(installed.folder / "project", installed.files)
    port = free_port()
    log = installed.folder / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            server_command(installed.run, port),
            cwd=project,
            env=clean_environment(installed.bin_dir),
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    try:
        wait_until_listening(process, port, log)
        yield QuickStart(f"http://127.0.0.1:{port}{PATHS[framework]}", installed.bin_dir / "python", framework)
    finally:
        stop(process)


def test_the_quick_start_runs_from_the_wheel_and_keeps_the_session(quick_start: QuickStart) -> None:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    counts = []
    for _ in range(3):
        with opener.open(quick_start.url, timeout=10) as response:
            counts.append(json.loads(response.read()))
    assert counts == [{"visits": 1}, {"visits": 2}, {"visits": 3}]
    [cookie] = list(jar)
    assert cookie.name in ("sessionid", "session")  # Django's name, Starlette's and Flask's name
    assert len(cookie.value or "") < 120  # the session itself, signed: nothing stored on the server


def test_the_fresh_venv_has_the_wheel_and_no_contributor_tools(quick_start: QuickStart) -> None:
    probe = (
        "import importlib.util, json, blake2sign_web; "
        "print(json.dumps([blake2sign_web.__file__, "
        "[n for n in ('pytest', 'playwright', 'moto', 'flask', 'mkdocs', 'ruff') if importlib.util.find_spec(n)]]))"
    )
    result = subprocess.run(
        [str(quick_start.python), "-c", probe],
        cwd=quick_start.python.parent,
        env=clean_environment(quick_start.python.parent),
        capture_output=True,
        text=True,
        check=True,
    )
    location, tools = json.loads(result.stdout)
    assert Path(location).is_relative_to(quick_start.python.parent.parent), f"imported from {location}"
    assert not Path(location).is_relative_to(ROOT)
    assert [tool for tool in tools if tool != quick_start.framework] == []


def test_the_long_description_leads_with_the_install_and_has_no_contributor_section(wheel: Path) -> None:
    """On the package index the page opens with the install: the README's contributor section is left out."""
    from email import message_from_bytes

    from .test_readme import QUICK_STARTS as TITLES
    from .test_readme import check_quick_starts

    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = message_from_bytes(archive.read(name))
    assert metadata["Description-Content-Type"] == "text/markdown"
    text = str(metadata.get_payload())
    found = sections(text)
    assert found[""] == []
    assert "From a clone" not in found
    assert "python3 scripts/example.py" not in text
    assert list(found)[1 : 1 + len(TITLES)] == list(TITLES)
    check_quick_starts(text)


#: The README's app.py made wrong the way a newcomer might, and what uvicorn must then print before it exits.
BAD_ARGUMENTS = {
    "short secret": (
        'secret_key="change me: a long random string such as secrets.token_urlsafe(50)"',
        'secret_key="too short"',
        "SessionMiddleware secret_key is 9 bytes long, fewer than the minimum of 16",
    ),
    "misspelled argument": (
        'secret_key="change me',
        'secret_kye="change me',
        "got an unexpected keyword argument 'secret_kye'",
    ),
    "encryption without cryptography": (
        'secrets.token_urlsafe(50)")',
        'secrets.token_urlsafe(50)", encrypt=True)',
        'SessionMiddleware encrypt=True needs the cryptography package: pip install "blake2sign-web[encrypted]"',
    ),
}


@pytest.mark.parametrize("mistake", list(BAD_ARGUMENTS))
def test_the_fastapi_run_command_stops_at_start_up_on_a_bad_argument(
    install: Callable[[str], Installed], mistake: str
) -> None:
    """The README's run command exactly (a free port added): it exits non-zero with the argument's message.

    Starlette builds the middleware stack, so runs ``SessionMiddleware.__init__``, on its first call: the
    lifespan start-up. uvicorn's default ``--lifespan auto`` reads an exception there as "no lifespan
    support", logs only that, at INFO, and serves: every request is then a 500.
    """
    installed = install("fastapi")
    old, new, message = BAD_ARGUMENTS[mistake]
    app = installed.files["app.py"]
    assert app.count(old) == 1, f"the README's app.py no longer has {old!r}"
    project = write_project(installed.folder / mistake.replace(" ", "-"), {"app.py": app.replace(old, new)})
    environment = clean_environment(installed.bin_dir)
    found = subprocess.run(  # what makes the third mistake one: the quick start's venv has no cryptography
        [
            str(installed.bin_dir / "python"),
            "-c",
            "import importlib.util; print(importlib.util.find_spec('cryptography'))",
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "None", "the quick start's venv has cryptography: pick another missing package"
    port = free_port()
    output = start_up_failure(server_command(installed.run, port), project, environment, port)
    assert message in output
    assert "Application startup failed. Exiting." in output
