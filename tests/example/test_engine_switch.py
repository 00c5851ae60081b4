"""The engine switch of the FastAPI example: each browser's choice, every engine timed, a switch logs out."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

TIMING = re.compile(r"^b2sw-load;dur=[0-9.]+, b2sw-save;dur=[0-9.]+$")
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def token(client: TestClient, path: str = "/") -> str:
    """The CSRF token of the forms on a page, as a browser would submit it."""
    match = TOKEN.search(client.get(path).text)
    assert match is not None
    return match.group(1)


@pytest.fixture
def client(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("EXAMPLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EXAMPLE_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens: no single-use links
    from example_project.fastapi_site import app

    return TestClient(app.app)


@pytest.mark.parametrize("engine", ["ours", "starlette", "starsessions"])
def test_each_engine_keeps_the_cart_and_sends_server_timing(client: TestClient, engine: str) -> None:
    client.cookies.set("example_engine", engine)
    login = {"username": "demo", "password": "demo", "csrf_token": token(client, "/accounts/login")}
    client.post("/accounts/login", data=login)
    page = client.post("/cart/add", data={"product": "teapot", "csrf_token": token(client)})
    assert "Added Teapot to your cart." in page.text
    assert "Log out demo" in page.text
    assert TIMING.match(page.headers["server-timing"])
    assert f'<option value="{engine}" selected>' in page.text


def test_switching_engines_ends_the_session(client: TestClient) -> None:
    login = {"username": "demo", "password": "demo", "csrf_token": token(client)}
    assert "Log out demo" in client.post("/accounts/login", data=login).text
    page = client.post("/engine", data={"engine": "starlette", "next": "/cart", "csrf_token": token(client)})
    assert page.url.path == "/cart"
    assert "Starlette SessionMiddleware (itsdangerous)</strong>" in page.text
    assert "Log out demo" not in page.text
