"""Our SessionMiddleware writes what Django's writes, for every case its tests cover."""

from __future__ import annotations

import json
from typing import Any

import django
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.sessions.exceptions import SessionInterrupted
from django.test import AsyncClient, Client, override_settings

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, cookie, middleware_with, run, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")

COOKIE_SETTINGS = {
    "SESSION_COOKIE_NAME": "sid",
    "SESSION_COOKIE_PATH": "/app/",
    "SESSION_COOKIE_DOMAIN": ".example.com",
    "SESSION_COOKIE_SAMESITE": "Strict",
    "SESSION_COOKIE_SECURE": True,
    "SESSION_COOKIE_HTTPONLY": True,
}


def scenario(middleware: str, *ops: list[Any], status: int = 200, first: list[Any] | None = None) -> Any:
    """(Set-Cookie attributes but expires, the session data the cookie holds, Vary) after ops."""
    with override_settings(MIDDLEWARE=middleware_with(middleware)):
        client = Client()
        if first is not None:
            run(client, first)
        response = run(client, *ops, status=status)
    morsel = cookie(response)
    if morsel is None:
        return None, None, response.get("Vary")
    attributes = {k: v for k, v in morsel.items() if k != "expires"}
    data = signer().loads(morsel.value) if morsel.value else ""
    return attributes, data, response.get("Vary"), bool(morsel["expires"])


SCENARIOS: dict[str, dict[str, Any]] = {
    "new session": {"ops": [["__setitem__", "a", 1]]},
    "read only": {"ops": [["get", "a"]], "first": ["__setitem__", "a", 1]},
    "modified": {"ops": [["__setitem__", "b", 2]], "first": ["__setitem__", "a", 1]},
    "emptied": {"ops": [["flush"]], "first": ["__setitem__", "a", 1]},
    "cleared": {"ops": [["clear"]], "first": ["__setitem__", "a", 1]},
    "browser close": {"ops": [["__setitem__", "a", 1], ["set_expiry", 0]]},
    "custom expiry": {"ops": [["__setitem__", "a", 1], ["set_expiry", 90]]},
    "server error": {"ops": [["__setitem__", "a", 1]], "status": 500},
    "no access": {"ops": []},
}


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize(
    "extra",
    [{}, COOKIE_SETTINGS, {"SESSION_SAVE_EVERY_REQUEST": True}],
    ids=["default", "cookie-settings", "save-every-request"],
)
def test_same_cookies_and_vary_as_djangos_middleware(name: str, extra: dict[str, Any]) -> None:
    case = SCENARIOS[name]
    with override_settings(**extra):
        theirs = scenario(DJANGO_MIDDLEWARE, *case["ops"], status=case.get("status", 200), first=case.get("first"))
        ours = scenario(OUR_MIDDLEWARE, *case["ops"], status=case.get("status", 200), first=case.get("first"))
    assert ours == theirs


def test_the_session_is_the_engines_store(client: Client, session_middleware: str) -> None:
    from django.http import HttpRequest

    from blake2sign_web.django.middleware import SessionMiddleware
    from blake2sign_web.django.sessions import SessionStore

    request = HttpRequest()
    request.COOKIES[settings.SESSION_COOKIE_NAME] = signer().dumps({"a": 1})
    middleware = SessionMiddleware(lambda request: None)  # type: ignore[arg-type,return-value]
    middleware.process_request(request)
    assert isinstance(request.session, SessionStore)
    assert request.session["a"] == 1


@override_settings(SESSION_ENGINE="tests.django_sessions.interrupting_engine")
def test_session_interrupted_is_a_400(session_middleware: str, caplog: pytest.LogCaptureFixture) -> None:
    body = json.dumps({"ops": [["__setitem__", "interrupt", True]]})
    response = Client().post("/ops/", body, content_type="application/json")
    assert response.status_code == 400
    assert any(isinstance(r.exc_info[1], SessionInterrupted) for r in caplog.records if r.exc_info)


@override_settings(SESSION_COOKIE_SAMESITE="sometimes")
def test_bad_samesite_is_refused_like_django() -> None:
    for middleware in (DJANGO_MIDDLEWARE, OUR_MIDDLEWARE):
        with (
            override_settings(MIDDLEWARE=middleware_with(middleware)),
            pytest.raises(ValueError, match=r"(?i)samesite"),
        ):
            run(Client(), ["__setitem__", "a", 1])


def test_expires_matches_max_age(client: Client) -> None:
    import time
    from email.utils import parsedate_to_datetime

    with override_settings(MIDDLEWARE=middleware_with(OUR_MIDDLEWARE)):
        morsel = cookie(run(client, ["__setitem__", "a", 1], ["set_expiry", 500]))
    expires = parsedate_to_datetime(morsel["expires"]).timestamp()
    assert abs(expires - (time.time() + 500)) <= 2


@pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no async session API")
@pytest.mark.django_db(transaction=True)
@override_settings(SESSION_ENGINE="django.contrib.sessions.backends.db", MIDDLEWARE=middleware_with(OUR_MIDDLEWARE))
def test_an_engine_doing_io_is_saved_outside_the_event_loop() -> None:
    """Our middleware with Django's db engine in an async stack: the save must not touch the ORM in the loop."""

    async def scenario() -> None:
        client = AsyncClient()
        body = json.dumps({"ops": [["aset", "a", 1]]})
        response = await client.post("/aops/", body, content_type="application/json")
        assert response.status_code == 200
        client.cookies[settings.SESSION_COOKIE_NAME] = cookie(response).value
        response = await client.post("/aops/", json.dumps({"ops": [["aget", "a"]]}), content_type="application/json")
        assert json.loads(response.content)["results"] == [1]

    async_to_sync(scenario)()


@override_settings(MIDDLEWARE=middleware_with(OUR_MIDDLEWARE))
def test_every_cookie_header_of_an_asgi_request_is_read() -> None:
    """HTTP/2 clients send a Cookie header per cookie; Django's ASGIRequest joins them with commas (ticket 36399),
    so request.COOKIES loses all but the first: the session's, in the second, is read from the scope."""
    token = signer().dumps({"a": 1})

    async def scenario() -> None:
        client = AsyncClient()
        client.cookies["theme"] = "dark"  # the client's own Cookie header comes first
        body = json.dumps({"ops": [["get", "a"]]})
        split = {"cookie": f"{settings.SESSION_COOKIE_NAME}={token}"}
        response = await client.post("/ops/", body, content_type="application/json", headers=split)
        assert json.loads(response.content)["results"] == [1]
        emptied = json.dumps({"ops": [["flush"]]})
        response = await client.post("/ops/", emptied, content_type="application/json", headers=split)
        assert cookie(response).value == ""  # the session sent in the second header is deleted, as any other

    async_to_sync(scenario)()
