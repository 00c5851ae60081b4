"""A bad configuration stops uvicorn at start-up with ``--lifespan on``, naming the argument.

Starlette builds its middleware stack lazily, on the first ASGI call: the lifespan start-up when
the server sends one. uvicorn's default ``--lifespan auto`` takes an exception there for "lifespan
unsupported" and serves anyway, so each request then fails with 500; ``--lifespan on`` makes the
same exception stop the server. The docs say to run with it (docs/deploy.md).
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from ..servers import ROOT, free_port, running_server

APP = "tests.starlette_sessions.startup_app:app"


def uvicorn(port: int, lifespan: str) -> list[str]:
    return [sys.executable, "-m", "uvicorn", APP, "--host", "127.0.0.1", "--port", str(port), "--lifespan", lifespan]


@pytest.mark.server
def test_a_short_secret_stops_uvicorn_with_lifespan_on() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLAKE2SIGN_TEST_SECRET": "short"}
    result = subprocess.run(uvicorn(free_port(), "on"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "SessionMiddleware secret_key is 5 bytes long, fewer than the minimum of 16" in result.stderr
    assert "Application startup failed" in result.stderr


@pytest.mark.server
def test_without_lifespan_on_the_same_error_comes_at_each_request() -> None:
    """Why the docs insist on --lifespan on: uvicorn's default starts, and every request is a 500."""
    port = free_port()
    with running_server(uvicorn(port, "auto"), port, BLAKE2SIGN_TEST_SECRET="short") as url:
        assert httpx.get(f"{url}/read", timeout=10).status_code == 500


@pytest.mark.server
def test_a_good_secret_starts_with_lifespan_on() -> None:
    port = free_port()
    with running_server(uvicorn(port, "on"), port, BLAKE2SIGN_TEST_SECRET="a-long-enough-secret-0123456789") as url:
        assert httpx.get(f"{url}/read", timeout=10).json() == {}
