"""Switching from Starlette's SessionMiddleware or starsessions to this project's middleware, and back.

Each test issues a cookie with the real incumbent (Starlette's middleware, starsessions with its
CookieStore or a server-side store), builds the application anew with the new middleware, sends the
old cookie and observes the session. docs/migrating/ states these outcomes.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from starsessions import CookieStore, InMemoryStore, SessionAutoloadMiddleware, load_session
from starsessions import SessionMiddleware as StarsessionsMiddleware

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware

SECRET = "migrating-starlette-secret-0123456789abcdef"
OLD_SECRET = "migrating-starlette-old-secret-0123456789"
LOGGER = "blake2sign_web.starlette"
SESSION = {"user_id": 42, "cart": [3, 7]}


async def login(request: Request) -> JSONResponse:
    request.session.update(SESSION)
    return JSONResponse(dict(request.session))


async def me(request: Request) -> JSONResponse:
    return JSONResponse(dict(request.session))


async def plain(request: Request) -> PlainTextResponse:
    return PlainTextResponse("never reads the session")


ROUTES = [Route("/login", login, methods=["POST"]), Route("/me", me), Route("/plain", plain)]


def client(*middleware: Middleware) -> TestClient:
    return TestClient(Starlette(routes=ROUTES, middleware=list(middleware)))


def ours(**options: Any) -> TestClient:
    options.setdefault("secret_key", SECRET)
    return client(Middleware(SessionMiddleware, **options))


def starlette(**options: Any) -> TestClient:
    options.setdefault("secret_key", SECRET)
    return client(Middleware(StarletteSessionMiddleware, **options))


def starsessions(store: Any, **options: Any) -> TestClient:
    options.setdefault("cookie_https_only", False)
    return client(Middleware(StarsessionsMiddleware, store=store, **options), Middleware(SessionAutoloadMiddleware))


def set_cookies(response: httpx.Response) -> list[str]:
    return response.headers.get_list("set-cookie")


def issued_cookie(response: httpx.Response) -> str:
    [header] = set_cookies(response)
    return header.split(";", 1)[0].split("=", 1)[1]


def send(app: TestClient, cookie: str, path: str = "/me") -> httpx.Response:
    return app.get(path, headers={"cookie": f"session={cookie}"})


def our_signer(**options: Any) -> SerializerSigner:
    return SerializerSigner(SECRET, purpose="starlette.sessions:session", dictionary=1, **options)


# Starlette's SessionMiddleware -------------------------------------------------------------------


def test_starlette_cookies_are_migrated_on_any_request_with_migration_on() -> None:
    legacy = issued_cookie(starlette().post("/login"))
    app = ours(migrate_starlette_cookies=True)
    assert send(app, legacy).json() == SESSION
    response = send(app, legacy, "/plain")  # a request that never touches the session re-issues it too
    reissued = issued_cookie(response)
    assert our_signer().loads(reissued) == SESSION
    assert send(ours(), reissued).json() == SESSION  # migration off again: the new cookie stands alone


def test_starlette_cookies_are_dropped_with_migration_off(caplog: pytest.LogCaptureFixture) -> None:
    legacy = issued_cookie(starlette().post("/login"))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = send(ours(), legacy)
    assert response.json() == {}
    assert set_cookies(response) == []  # not deleted: the browser keeps sending it until the session is written
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            # (its "ey" reads as a format-2 marker and a key id, which names none of ours)
            "Rejected session cookie 'session': unknown key id; it has the shape of a cookie"
            " of Starlette's own SessionMiddleware (itsdangerous): is that middleware also on this app,"
            " under the same cookie name? While migrating from it, pass migrate_starlette_cookies=True",
        )
    ]


def test_rolling_back_to_starlette_keeps_only_cookies_not_yet_reissued() -> None:
    not_yet_reissued = issued_cookie(starlette().post("/login"))
    reissued = issued_cookie(ours().post("/login"))
    assert send(starlette(), not_yet_reissued).json() == SESSION
    assert send(starlette(), reissued).json() == {}


def test_a_fallback_verified_session_is_re_signed_on_any_request() -> None:
    old = issued_cookie(ours(secret_key=OLD_SECRET).post("/login"))
    response = send(ours(fallback_secrets=[OLD_SECRET]), old, "/plain")
    assert our_signer().loads(issued_cookie(response)) == SESSION


# starsessions -----------------------------------------------------------------------------------


def test_starsessions_cookie_store_sessions_are_migrated_with_their_metadata() -> None:
    legacy = issued_cookie(starsessions(CookieStore(SECRET), lifetime=3600).post("/login"))
    migrated = send(ours(max_age=3600, migrate_starlette_cookies=True), legacy).json()
    metadata = migrated.pop("__metadata__")
    assert migrated == SESSION
    assert set(metadata) == {"lifetime", "created", "last_access"}
    assert metadata["lifetime"] == 3600


def test_starsessions_browser_session_cookies_are_migrated_with_max_age_none() -> None:
    legacy = issued_cookie(starsessions(CookieStore(SECRET)).post("/login"))  # lifetime=0: no Max-Age
    assert "max-age" not in starsessions(CookieStore(SECRET)).post("/login").headers["set-cookie"]
    migrated = send(ours(max_age=None, migrate_starlette_cookies=True), legacy).json()
    assert {key: value for key, value in migrated.items() if key != "__metadata__"} == SESSION


def test_starsessions_server_side_sessions_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryStore()
    legacy = issued_cookie(starsessions(store, lifetime=3600).post("/login"))
    assert send(starsessions(store, lifetime=3600), legacy).json()["user_id"] == 42
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = send(ours(max_age=3600, migrate_starlette_cookies=True), legacy)
    assert response.json() == {}
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert caplog.records[0].getMessage().startswith("Rejected session cookie 'session': ")
    assert legacy not in caplog.records[0].getMessage()


def test_rolling_back_to_starsessions_cookie_store() -> None:
    not_yet_reissued = issued_cookie(starsessions(CookieStore(SECRET), lifetime=3600).post("/login"))
    reissued = issued_cookie(ours(max_age=3600).post("/login"))
    back = starsessions(CookieStore(SECRET), lifetime=3600)
    assert {k: v for k, v in send(back, not_yet_reissued).json().items() if k != "__metadata__"} == SESSION
    assert send(back, reissued).json() == {}


def test_load_session_fails_without_starsessions_middleware() -> None:
    async def loads_explicitly(request: Request) -> JSONResponse:
        await load_session(request)
        return JSONResponse(dict(request.session))

    app = Starlette(
        routes=[Route("/", loads_explicitly)], middleware=[Middleware(SessionMiddleware, secret_key=SECRET)]
    )
    with pytest.raises(KeyError, match="session_handler"):
        TestClient(app).get("/")
