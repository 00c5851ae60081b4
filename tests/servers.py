"""Real servers for tests: start a command on a free 127.0.0.1 port, wait until it listens, stop it."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: Every port ``free_port`` has handed out in this process.
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port free on 127.0.0.1 now, and never one handed out before in this process.

    The kernel may give the same free port to two probes in a row (it is free again once the probe closes): two
    servers of one test given the same port would then meet on it (one fails to bind, the other answers both).
    """
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@contextmanager
def running_server(command: list[str], port: int, timeout: float = 20, **env: str) -> Iterator[str]:
    """Run ``command`` (which must listen on ``port``) from the project root; yield its base URL.

    Its stderr goes to a temporary log file, as with ``logged_server``: a pipe nobody reads could fill and block
    a busy server.
    """
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        with logged_server(command, port, log, timeout, **env) as (url, _process):
            yield url


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s; close its stderr pipe."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stderr.read().decode(errors="replace")[-2000:] if process.stderr else ""
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}: {output}")
        if listening(port):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args!r} did not listen on port {port} within {timeout} s")


@contextmanager
def logged_server(
    command: list[str], port: int, log: Path, timeout: float = 20, **env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Like ``running_server``, with the server's stderr written to ``log`` (never a pipe a busy server could fill).

    Yields the base URL and the process, whose pid finds the workers to measure.
    """
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, stdout=stderr, stderr=stderr
        )
    try:
        try:
            _wait_until_listening(process, port, timeout)
        except RuntimeError as error:
            raise RuntimeError(f"{error}; its log: {log.read_bytes()[-2000:].decode(errors='replace')}") from None
        yield f"http://127.0.0.1:{port}", process
    finally:
        stop_process(process)
