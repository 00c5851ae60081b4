"""A cookie round trip over real HTTP, through uvicorn on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from ..servers import free_port, running_server


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "tests.starlette_sessions.uvicorn_app:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    with running_server(command, port) as url:
        yield url


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
