"""The commands README.md and the docs give to run a server, and running one that must fail at start-up.

Shared by tests/docs/test_run_commands.py (every such command in the docs) and tests/docs/test_quick_start.py
(the README's FastAPI quick start, from the built wheel).
"""

from __future__ import annotations

import http.client
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.servers import listening

from .readme import DOCS_DIR, README, ROOT

#: A module and attribute, as a server takes them: ``myapp.main:app``.
TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
#: The servers whose commands are checked: uvicorn, and gunicorn with a (uvicorn) worker class.
SERVERS = ("uvicorn", "gunicorn")


@dataclass(frozen=True)
class Command:
    page: Path  #: README.md or a docs page
    text: str  #: as written, continuation lines joined, the comment dropped

    @property
    def words(self) -> list[str]:
        """The command's words, the environment assignments before it dropped."""
        words = shlex.split(self.text)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            words.pop(0)
        return words

    @property
    def server(self) -> str:
        return self.words[0]

    @property
    def target(self) -> str:
        [target] = [word for word in self.words[1:] if TARGET.match(word)]
        return target

    def option(self, name: str) -> str | None:
        words = self.words
        return words[words.index(name) + 1] if name in words else None

    @property
    def django(self) -> bool:
        """Django's handler (``mysite.asgi:application``): settings are read at import, whatever the lifespan."""
        module, attribute = self.target.split(":")
        return module.split(".")[-1] in ("asgi", "wsgi") and attribute == "application"

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}: {self.text}"


def pages() -> list[Path]:
    """README.md and every docs page but the changelog, which records what earlier releases said."""
    return [README, *sorted(page for page in DOCS_DIR.rglob("*.md") if page.name != "changelog.md")]


def shell_lines(text: str) -> Iterator[str]:
    """The lines of a page's bash blocks, continuation lines joined, comments dropped."""
    in_bash = False
    pending = ""
    for line in text.splitlines():
        if line.startswith("```"):
            in_bash = not in_bash and line[3:].strip() in ("bash", "sh", "console", "shell")
            continue
        if not in_bash:
            continue
        line = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        yield (pending + line.strip()).strip()
        pending = ""


def inline_commands(text: str) -> Iterator[str]:
    """Inline code that starts with a server's name: ``uvicorn myapp:app --lifespan on``."""
    for span in re.findall(r"`([^`\n]+)`", text):
        if span.split(" ", 1)[0] in SERVERS:
            yield span


def server_commands() -> list[Command]:
    """Every command of README.md and the docs that starts uvicorn or gunicorn on an application."""
    found = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for line in [*shell_lines(text), *inline_commands(text)]:
            if not any(server in line for server in SERVERS):
                continue
            command = Command(page, line)
            words = command.words
            if words and words[0] in SERVERS and any(TARGET.match(word) for word in words[1:]):
                found.append(command)
    return found


def answers(port: int) -> bool:
    """Whether an HTTP request gets an answer, any answer: a worker is serving."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/")
        connection.getresponse()
        return True
    except OSError:
        return False
    finally:
        connection.close()


def start_up_failure(
    command: list[str], cwd: Path, env: dict[str, str], port: int, *, binds_first: bool = False, timeout: float = 90
) -> str:
    """Run a server given a bad configuration; return its output once it has exited non-zero.

    Fails as soon as it serves on ``port``: it listens (uvicorn binds only after a successful start-up) or,
    with ``binds_first`` (gunicorn's arbiter binds before its workers start), answers a request; and when it is
    still running after ``timeout`` seconds.
    """
    log = cwd / f"server-{port}.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=output, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None:
            served = listening(port) and (not binds_first or answers(port))
            assert not served, f"{shlex.join(command)} served a bad configuration:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"{shlex.join(command)} still runs after {timeout} s"
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = log.read_text(encoding="utf-8", errors="replace")
    assert process.returncode != 0, f"{shlex.join(command)} exited 0:\n{text[-3000:]}"
    return text
