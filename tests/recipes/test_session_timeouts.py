"""docs/recipes/session-timeouts.md: its idle and absolute timeouts, Django and Starlette, without waiting.

Time is moved by what the requests carry, not by patching a clock: cookies are issued in the past through
the core's ``clock=`` (the idle limit), and sessions hold a login time in the past (the absolute limit).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.django.sessions import SessionStore
from blake2sign_web.starlette import SessionMiddleware
from tests.django_sessions.conftest import signer
from tests.recipes.pages import DOCS_SECRET_KEY, page_module

PAGE = page_module("session-timeouts.md")
MINUTE = 60
HOUR = 60 * MINUTE


def who_is_logged_in(request: HttpRequest) -> HttpResponse:
    return HttpResponse(request.user.get_username())


urlpatterns = [path("login/", LoginView.as_view()), path("me/", who_is_logged_in)]


@pytest.fixture
def django_client(settings: Any, db: None) -> Iterator[Client]:
    """The page's settings (its MIDDLEWARE with the page's middleware), its signal receiver, a user."""
    for name in (
        "SESSION_ENGINE",
        "SESSION_COOKIE_AGE",
        "SESSION_SAVE_EVERY_REQUEST",
        "SESSION_EXPIRE_AT_BROWSER_CLOSE",
        "ABSOLUTE_SESSION_TIMEOUT",
    ):
        setattr(settings, name, getattr(PAGE, name))
    settings.MIDDLEWARE = [m.replace("accounts.middleware", PAGE.__name__) for m in PAGE.MIDDLEWARE]
    settings.ROOT_URLCONF = __name__
    PAGE.AccountsConfig.ready(None)  # the page's ready(), as Django runs it at start-up
    User.objects.create_user("ada", password="correct horse")
    client = Client()
    response = client.post("/login/", {"username": "ada", "password": "correct horse"})
    assert response.status_code == 302
    yield client
    assert user_logged_in.disconnect(dispatch_uid="accounts.stamp_login_time")


def session_data(client: Client) -> dict[str, Any]:
    return SessionStore(client.cookies["sessionid"].value).load()


def send_session(client: Client, data: dict[str, Any], *, saved_ago: int = 0) -> str:
    """Request /me/ with ``data`` as the engine would have saved it ``saved_ago`` seconds ago; the user seen."""
    client.cookies["sessionid"] = signer(clock=lambda: time.time() - saved_ago).dumps(data)
    return client.get("/me/").content.decode()


def test_page_uses_owasp_limits() -> None:
    assert PAGE.SESSION_COOKIE_AGE == 15 * MINUTE
    assert PAGE.ABSOLUTE_SESSION_TIMEOUT == 8 * HOUR
    assert PAGE.IDLE_TIMEOUT == 15 * MINUTE
    assert PAGE.ABSOLUTE_TIMEOUT == 8 * HOUR


def test_django_login_stores_the_login_time(django_client: Client) -> None:
    assert abs(session_data(django_client)[PAGE.LOGIN_TIME] - time.time()) < 5


def test_django_every_request_reissues_a_browser_session_cookie(django_client: Client) -> None:
    response = django_client.get("/me/")
    assert response.content == b"ada"
    cookie = response.cookies["sessionid"]
    assert cookie.value
    assert cookie["max-age"] == ""  # SESSION_EXPIRE_AT_BROWSER_CLOSE


@pytest.mark.parametrize(("idle_minutes", "user"), [(14, "ada"), (16, "")])
def test_django_idle_timeout(django_client: Client, idle_minutes: int, user: str) -> None:
    data = session_data(django_client)
    assert send_session(django_client, data, saved_ago=idle_minutes * MINUTE) == user


def test_django_activity_restarts_the_idle_timer(django_client: Client) -> None:
    send_session(django_client, session_data(django_client), saved_ago=14 * MINUTE)
    reissued = django_client.cookies["sessionid"].value
    issued_at = signer().load_token(reissued).issued_at
    assert abs(issued_at - time.time()) < 5


@pytest.mark.parametrize(("hours_since_login", "user"), [(7.9, "ada"), (8.1, "")])
def test_django_absolute_timeout(django_client: Client, hours_since_login: float, user: str) -> None:
    data = session_data(django_client)
    data[PAGE.LOGIN_TIME] = int(time.time() - hours_since_login * HOUR)
    assert send_session(django_client, data) == user  # active a second ago
    if not user:
        assert django_client.cookies["sessionid"].value == ""  # logout deleted the cookie
        assert django_client.get("/me/").content == b""


def test_django_session_from_before_the_middleware_gets_its_clock_started(django_client: Client) -> None:
    data = session_data(django_client)
    del data[PAGE.LOGIN_TIME]
    assert send_session(django_client, data) == "ada"
    assert abs(session_data(django_client)[PAGE.LOGIN_TIME] - time.time()) < 5


def starlette_cookie(data: dict[str, Any], *, issued_ago: int = 0) -> str:
    """A cookie the page's SessionMiddleware would have issued ``issued_ago`` seconds ago."""
    keys = SessionMiddleware(PAGE.app, secret_key=DOCS_SECRET_KEY, max_age=PAGE.IDLE_TIMEOUT).signer
    issued = time.time() - issued_ago
    return SerializerSigner(DOCS_SECRET_KEY, purpose=keys.purpose, clock=lambda: issued).dumps(data)


def starlette_user(data: dict[str, Any], *, issued_ago: int = 0) -> Any:
    client = TestClient(PAGE.app, base_url="https://testserver")
    response = client.get("/me", headers={"cookie": "session=" + starlette_cookie(data, issued_ago=issued_ago)})
    return response.json()["user_id"], response.headers.get("set-cookie", "")


@pytest.mark.parametrize(("idle_minutes", "user"), [(14, 42), (16, None)])
def test_starlette_idle_timeout(idle_minutes: int, user: int | None) -> None:
    seen, set_cookie = starlette_user({"user_id": 42, "login_time": int(time.time())}, issued_ago=idle_minutes * MINUTE)
    assert seen == user
    if user is not None:  # re-issued now: the idle timer restarts
        token = set_cookie.removeprefix("session=").split(";")[0]
        keys = SessionMiddleware(PAGE.app, secret_key=DOCS_SECRET_KEY, max_age=PAGE.IDLE_TIMEOUT).signer
        assert abs(keys.load_token(token).issued_at - time.time()) < 5


@pytest.mark.parametrize(("hours_since_login", "user"), [(7.9, 42), (8.1, None)])
def test_starlette_absolute_timeout(hours_since_login: float, user: int | None) -> None:
    login_time = int(time.time() - hours_since_login * HOUR)
    seen, set_cookie = starlette_user({"user_id": 42, "login_time": login_time})
    assert seen == user
    if user is None:
        assert set_cookie.startswith("session=null;")
        assert "expires=Thu, 01 Jan 1970 00:00:00 GMT" in set_cookie
