"""chunked=True over real HTTP: uvicorn takes a Cookie header of three and four full chunks (12 and 16 KB)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from ..servers import free_port, running_server
from .test_chunked import noise


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.starlette_sessions.chunked_uvicorn_app:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--http", "h11"]
    with running_server(command, port) as url:
        yield url


@pytest.mark.server
@pytest.mark.parametrize(("characters", "cookies"), [(9000, 3), (15000, 4)])
def test_a_chunked_session_round_trip_over_http(server: str, characters: int, cookies: int) -> None:
    big = {"blob": noise(characters)}
    with httpx.Client(base_url=server, timeout=5) as client:
        written = client.post("/write", json=big)
        assert written.status_code == 200
        headers = written.headers.get_list("set-cookie")
        assert len(headers) == cookies
        assert all(len(header.encode()) <= 4096 for header in headers)
        read = client.get("/read")
        assert read.status_code == 200
        assert read.json() == big
        # Shrunk to one cookie: the browser is told to drop every chunk.
        small = client.post("/clear")
        assert len(small.headers.get_list("set-cookie")) == cookies
        assert client.get("/read").json() == {}
        assert not client.cookies
