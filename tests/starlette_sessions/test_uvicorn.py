"""A cookie round trip over real HTTP, through uvicorn on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_accepting(port: int, process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {process.returncode}: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"uvicorn did not accept connections on port {port} within {timeout} s")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "tests.starlette_sessions.uvicorn_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_accepting(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.server
def test_cookie_round_trip_over_http(server: str) -> None:
    with httpx.Client(base_url=server, timeout=5) as client:
        assert client.get("/read").json() == {}
        written = client.post("/write", json={"user": 42, "name": "Zoë"})
        assert written.status_code == 200
        [header] = written.headers.get_list("set-cookie")
        assert header.endswith("; path=/; Max-Age=1209600; httponly; samesite=lax")
        read = client.get("/read")
        assert read.json() == {"user": 42, "name": "Zoë"}
        assert read.headers["vary"] == "Cookie"
        assert read.headers.get_list("set-cookie") == []
        cleared = client.post("/clear")
        assert cleared.headers["set-cookie"].startswith("session=null; ")
        assert client.get("/read").json() == {}


@pytest.mark.server
def test_a_tampered_cookie_over_http_is_an_empty_session(server: str) -> None:
    with httpx.Client(base_url=server, timeout=5) as client:
        token = client.post("/write", json={"user": 42}).headers["set-cookie"].split(";")[0].split("=", 1)[1]
        client.cookies.clear()
        tampered = token[:3] + ("A" if token[3] != "A" else "B") + token[4:]
        response = client.get("/read", headers={"cookie": f"session={tampered}"})
        assert response.status_code == 200
        assert response.json() == {}
