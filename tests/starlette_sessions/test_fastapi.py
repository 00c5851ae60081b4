"""A FastAPI application: add_middleware, request.session in path operations and in a dependency."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, set_cookie_headers


def current_user(request: Request) -> int | None:
    user: int | None = request.session.get("user_id")
    return user


def make_app() -> FastAPI:
    app = FastAPI()
    app.add_middleware(SessionMiddleware, secret_key=SECRET, https_only=True)

    @app.post("/login/{user_id}")
    def login(user_id: int, request: Request) -> dict[str, Any]:
        request.session["user_id"] = user_id
        return {"ok": True}

    @app.get("/me")
    def me(user: Annotated[int | None, Depends(current_user)]) -> dict[str, Any]:
        return {"user_id": user}

    @app.post("/logout")
    async def logout(request: Request) -> dict[str, Any]:
        request.session.clear()
        return {"ok": True}

    return app


def test_login_me_logout() -> None:
    client = TestClient(make_app(), base_url="https://testserver")
    assert client.get("/me").json() == {"user_id": None}
    login = client.post("/login/42")
    assert login.status_code == 200
    [header] = set_cookie_headers(login)
    assert header.endswith("; httponly; samesite=lax; secure")
    assert client.get("/me").json() == {"user_id": 42}
    assert client.get("/me").headers["vary"] == "Cookie"
    logout = client.post("/logout")
    assert set_cookie_headers(logout)[0].startswith("session=null; ")
    assert client.get("/me").json() == {"user_id": None}


def test_a_bad_cookie_is_an_anonymous_user_not_an_error() -> None:
    client = TestClient(make_app(), base_url="https://testserver")
    response = client.get("/me", headers={"cookie": "session=0garbage.garbage"})
    assert response.status_code == 200
    assert response.json() == {"user_id": None}
