"""Every command README.md and the docs give to serve a Starlette or FastAPI app stops at start-up on a bad argument.

Starlette builds its middleware stack, so runs ``SessionMiddleware.__init__`` and its checks, on the first call
it gets: the lifespan start-up. uvicorn's default ``--lifespan auto`` takes an exception there for "this app has
no lifespan", logs only that, at INFO, and serves: a short secret, a misspelled argument or a missing
``cryptography`` then answers every request with 500 (the library cannot change that: the exception is raised
before any of its code sees a request). ``--lifespan on`` makes uvicorn exit with the message instead, and so
does gunicorn with a uvicorn worker class that sets it (docs/deploy.md).

Each command is run as written (through ``bash -c``), in an empty folder holding a FastAPI app with a too-short
secret at the module it names (and the docs' worker class, when it names one), with two changes only: the
address is 127.0.0.1 and the port a free one. Django's commands are left out: ``get_asgi_application()`` reads
the settings at import, so a bad setting stops any server whatever its lifespan.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.servers import free_port

from .readme import ROOT, file_name, sections
from .run_commands import Command, server_commands, start_up_failure

pytestmark = pytest.mark.server

BAD_APP = """\
from fastapi import FastAPI

from blake2sign_web.starlette import SessionMiddleware

app = FastAPI()
app.add_middleware(SessionMiddleware, secret_key="too short")
"""
MESSAGE = "SessionMiddleware secret_key is 9 bytes long, fewer than the minimum of 16"

COMMANDS = [command for command in server_commands() if not command.django]


def test_the_docs_give_the_server_commands_this_test_knows() -> None:
    """The collector finds the commands (so an empty list cannot pass the tests below), Django's among them."""
    pages = {str(command.page.relative_to(ROOT)) for command in COMMANDS}
    assert {"README.md", "docs/starlette.md", "docs/deploy.md"} <= pages
    assert any(command.django for command in server_commands())
    assert any(command.server == "gunicorn" for command in COMMANDS)


def worker_class(command: Command) -> tuple[str, str]:
    """The file and code of the worker class a gunicorn command names, as its page shows them."""
    name = command.option("--worker-class") or command.option("-k")
    assert name, f"{command}: gunicorn's default worker cannot run an ASGI app"
    module, _, _ = name.rpartition(".")
    path = module.replace(".", "/") + ".py"
    found = sections(command.page.read_text(encoding="utf-8")).values()
    blocks = [block for blocks in found for block in blocks if file_name(block) == path]
    assert blocks, f"{command}: {command.page.name} does not show {path}"
    return path, blocks[0].text


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_the_command_asks_for_lifespan_on(command: Command) -> None:
    if command.server == "uvicorn":
        assert command.option("--lifespan") == "on", f"{command}: without --lifespan on, a bad argument is served"
    else:
        _, code = worker_class(command)
        assert re.search(r"""["']lifespan["']\s*:\s*["']on["']""", code), f"{command}: its worker class keeps auto"


def runnable(command: Command, port: int) -> str:
    """The command as written, on 127.0.0.1 and a free port."""
    text = command.text
    if command.server == "uvicorn":
        text = re.sub(r"--host \S+", "--host 127.0.0.1", text)
        text = re.sub(r"--port \d+", f"--port {port}", text) if "--port" in text else f"{text} --port {port}"
    else:
        bind = f"--bind 127.0.0.1:{port}"
        text = re.sub(r"(--bind|-b) \S+", bind, text) if re.search(r"(--bind|-b) ", text) else f"{text} {bind}"
    return text


@pytest.mark.parametrize("command", COMMANDS, ids=str)
def test_the_command_stops_at_start_up_on_a_bad_argument(command: Command, tmp_path: Path) -> None:
    module = command.target.split(":")[0]
    files = {module.replace(".", "/") + ".py": BAD_APP}
    if command.server == "gunicorn":
        path, code = worker_class(command)
        files[path] = code
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for package in path.relative_to(tmp_path).parents:
            if package != Path("."):
                (tmp_path / package / "__init__.py").touch()
        path.write_text(text, encoding="utf-8")
    port = free_port()
    # The test venv's servers and python first, as in a shell with the project's venv activated.
    bin_dir = str(Path(sys.executable).parent)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    output = start_up_failure(
        ["bash", "-c", runnable(command, port)], tmp_path, env, port, binds_first=command.server == "gunicorn"
    )
    assert MESSAGE in output
    if command.server == "uvicorn":
        assert "Application startup failed. Exiting." in output
    else:
        assert "Worker failed to boot" in output
