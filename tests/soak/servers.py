"""The shop under real servers: gunicorn (Django, sync workers) and uvicorn (FastAPI), each logging to a file.

Also what the tests measure about them: the worker processes (psutil) and their resident memory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from blake2sign_web import URLSigner

from ..servers import free_port, logged_server
from . import shop

try:
    import psutil  # type: ignore[import-untyped]  # no stubs in the test environment
except ImportError:  # an environment with only the test group
    if os.environ.get("CI"):
        raise
    pytest.skip(
        "psutil is not installed (pip install psutil): it measures the server's memory", allow_module_level=True
    )

BIN = Path(sys.executable).parent
MIB = 1024 * 1024


@dataclass
class Shop:
    """One running server: its URL, process id, log file, session cookie name and link signer."""

    name: str
    url: str
    pid: int
    log: Path
    cookie_name: str
    signer: URLSigner

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def workers(self) -> list[psutil.Process]:
        """The processes that run the application: gunicorn's workers, or uvicorn's single process."""
        server = psutil.Process(self.pid)
        return server.children() or [server]

    def rss(self) -> int:
        """Resident memory of the workers, summed, in bytes."""
        return sum(worker.memory_info().rss for worker in self.workers())

    def log_text(self) -> bytes:
        return self.log.read_bytes()

    def login(self) -> str:
        """A fresh logged-in session: the cookie's value."""
        response = httpx.post(self.url + "/login", timeout=10)
        assert response.status_code == 200, response.text
        return response.cookies[self.cookie_name]


def django_signer() -> URLSigner:
    from blake2sign_web.django.signed_urls import get_signer

    return get_signer()


@contextmanager
def gunicorn(tmp_path: Path, workers: int = 1) -> Iterator[Shop]:
    """Sync workers (gunicorn's default), which close the connection after each response."""
    root = shop.write_files(tmp_path / "served")
    port = free_port()
    command = [
        str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "tests.signed_urls.wsgi",
    ]  # fmt: skip
    env = {"DJANGO_SETTINGS_MODULE": "tests.soak.django_settings", "BLAKE2SIGN_SERVED_ROOT": str(root)}
    with logged_server(command, port, tmp_path / "gunicorn.log", 20, **env) as (url, process):
        yield Shop("gunicorn", url, process.pid, tmp_path / "gunicorn.log", "sessionid", django_signer())


@contextmanager
def uvicorn(tmp_path: Path, log_level: str = "info", http: str = "h11") -> Iterator[Shop]:
    """With ``log_level="info"`` its access log too (one line a request, read by the hostile test).

    ``http``: uvicorn's HTTP parser, named (uvicorn picks httptools when installed, as ``uvicorn[standard]``
    does, and the two refuse different malformed requests): "h11" or "httptools" (with uvloop).
    """
    root = shop.write_files(tmp_path / "served")
    port = free_port()
    command = [
        str(BIN / "uvicorn"), "--factory", "tests.soak.shop:app_from_env",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", log_level, "--http", http,
        "--loop", "uvloop" if http == "httptools" else "asyncio",
    ]  # fmt: skip
    name = "uvicorn" if http == "h11" else f"uvicorn-{http}"
    with logged_server(command, port, tmp_path / "uvicorn.log", BLAKE2SIGN_SERVED_ROOT=str(root)) as (url, process):
        yield Shop(name, url, process.pid, tmp_path / "uvicorn.log", "session", shop.make_signer())
