"""Small Starlette applications around the middleware under test, and helpers to read their cookies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

SECRET = "starlette-sessions-test-secret-0123456789abcdefghijklmnop"


async def read_session(request: Request) -> JSONResponse:
    return JSONResponse(dict(request.session))


async def write_session(request: Request) -> JSONResponse:
    """Merge the JSON body into the session."""
    request.session.update(await request.json())
    return JSONResponse(dict(request.session))


async def clear_session(request: Request) -> JSONResponse:
    request.session.clear()
    return JSONResponse({})


async def no_session(request: Request) -> PlainTextResponse:
    return PlainTextResponse("no session here")


async def session_over_websocket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_json(dict(websocket.session))
    await websocket.close()


ROUTES = [
    Route("/read", read_session),
    Route("/write", write_session, methods=["POST"]),
    Route("/clear", clear_session, methods=["POST"]),
    Route("/plain", no_session),
    WebSocketRoute("/ws", session_over_websocket),
]


def make_app(middleware_class: type, **options: Any) -> Starlette:
    return Starlette(routes=ROUTES, middleware=[Middleware(middleware_class, **options)])


AppFactory = Callable[..., TestClient]


@pytest.fixture
def client_for() -> AppFactory:
    """``client_for(**middleware_options)``: a TestClient on an app using our SessionMiddleware."""
    from blake2sign_web.starlette import SessionMiddleware

    def build(
        *, base_url: str = "http://testserver", raise_server_exceptions: bool = True, **options: Any
    ) -> TestClient:
        options.setdefault("secret_key", SECRET)
        app = make_app(SessionMiddleware, **options)
        return TestClient(app, base_url=base_url, raise_server_exceptions=raise_server_exceptions)

    return build


def set_cookie_headers(response: httpx.Response) -> list[str]:
    return response.headers.get_list("set-cookie")


def cookie_value(set_cookie: str) -> str:
    """The value of a Set-Cookie header (between the first '=' and the first ';')."""
    return set_cookie.split(";", 1)[0].split("=", 1)[1]


def cookie_attributes(set_cookie: str) -> str:
    """Everything after the value of a Set-Cookie header."""
    return set_cookie.split(";", 1)[1]
