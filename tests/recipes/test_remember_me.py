"""docs/recipes/remember-me.md: its Django login view and its Starlette app, through the real test clients and stacks.

The cookie's Max-Age/expires (or their absence) is what the browser acts on; the server-side ends are
checked with sessions saved in the past (tokens issued through the core's ``clock=``, no clock patched).
"""

from __future__ import annotations

import time
import types
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.django.sessions import SessionStore
from tests.django_sessions.conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, middleware_with, signer
from tests.recipes.pages import DOCS_SECRET_KEY, run_page

pytestmark = pytest.mark.django_db

PAGE = run_page("remember-me.md")
HOUR = 3600
DAY = 24 * HOUR


def who_is_logged_in(request: HttpRequest) -> HttpResponse:
    return HttpResponse(request.user.get_username())


urls = types.ModuleType("remember_me_urls")
urls.urlpatterns = [  # type: ignore[attr-defined]
    *PAGE["urlpatterns"],
    path("me/", who_is_logged_in),
    path("plain-login/", LoginView.as_view()),  # Django's, for the control
]


@pytest.fixture(params=[DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def client(request: pytest.FixtureRequest, settings: Any) -> Client:
    """The page's settings and URLs, under Django's session middleware and under ours; a user to log in."""
    settings.MIDDLEWARE = middleware_with(request.param)
    settings.ROOT_URLCONF = urls
    for name in ("SESSION_ENGINE", "SESSION_COOKIE_AGE", "SESSION_EXPIRE_AT_BROWSER_CLOSE"):
        setattr(settings, name, PAGE[name])
    User.objects.create_user("ada", password="correct horse")
    return Client()


def log_in(client: Client, *, remember: bool, url: str = "/login/") -> Any:
    form = {"username": "ada", "password": "correct horse", **({"remember_me": "on"} if remember else {})}
    response = client.post(url, form)
    assert response.status_code == 302, response.content
    assert client.get("/me/").content == b"ada"
    return response.cookies["sessionid"]


def test_page_settings_are_what_the_table_describes() -> None:
    assert PAGE["SESSION_COOKIE_AGE"] == 12 * HOUR
    assert PAGE["REMEMBER_ME_FOR"] == 30 * DAY
    assert PAGE["SESSION_EXPIRE_AT_BROWSER_CLOSE"] is False


@pytest.mark.parametrize("expire_at_browser_close", [False, True])
@pytest.mark.parametrize(("remember", "max_age"), [(True, 30 * DAY), (False, None)], ids=["ticked", "unticked"])
def test_cookie_lifetime_follows_the_checkbox(
    client: Client, settings: Any, expire_at_browser_close: bool, remember: bool, max_age: int | None
) -> None:
    """The page's table: ticked, Max-Age and expires of thirty days; unticked, neither (a browser-session cookie)."""
    settings.SESSION_EXPIRE_AT_BROWSER_CLOSE = expire_at_browser_close
    cookie = log_in(client, remember=remember)
    if max_age is None:
        assert (cookie["max-age"], cookie["expires"]) == ("", "")
    else:
        assert int(cookie["max-age"]) == max_age
        assert cookie["expires"]  # Django writes both


def test_without_the_view_the_setting_decides(client: Client, settings: Any) -> None:
    """The control: Django's LoginView (no set_expiry) gives SESSION_COOKIE_AGE, or a browser-session cookie."""
    assert int(log_in(client, remember=True, url="/plain-login/")["max-age"]) == 12 * HOUR
    settings.SESSION_EXPIRE_AT_BROWSER_CLOSE = True
    assert log_in(client, remember=True, url="/plain-login/")["max-age"] == ""


def saved_ago(client: Client, cookie: Any, seconds: int, expires_in: int | None) -> None:
    """Give the client its own session as the engine would have saved it ``seconds`` ago."""
    data = SessionStore(cookie.value).load()
    old = signer(clock=lambda: time.time() - seconds).dumps(data, expires_in=expires_in)
    client.cookies["sessionid"] = old


@pytest.mark.parametrize(("days", "logged_in"), [(20, True), (29.9, True), (30.1, False)])
def test_remembered_session_lasts_thirty_days_on_the_server(client: Client, days: float, logged_in: bool) -> None:
    cookie = log_in(client, remember=True)
    saved_ago(client, cookie, int(days * DAY), expires_in=PAGE["REMEMBER_ME_FOR"])
    assert client.get("/me/").content == (b"ada" if logged_in else b"")


@pytest.mark.parametrize(("hours", "logged_in"), [(11.9, True), (12.1, False), (20 * 24, False)])
def test_browser_session_still_ends_after_session_cookie_age(client: Client, hours: float, logged_in: bool) -> None:
    cookie = log_in(client, remember=False)
    saved_ago(client, cookie, int(hours * HOUR), expires_in=None)
    assert client.get("/me/").content == (b"ada" if logged_in else b"")


# The Starlette version: the page's ``remembering`` app.

STARLETTE_PURPOSE = "starlette.sessions:session"


def starlette_saved_ago(*, remember: bool, seconds: float) -> Any:
    """Log in to the page's app, then send its cookie as if written ``seconds`` ago; the user it sees."""
    client = TestClient(PAGE["remembering"], base_url="https://testserver")
    assert client.post("/login", json={"remember_me": remember}).status_code == 200
    loaded = SerializerSigner(DOCS_SECRET_KEY, purpose=STARLETTE_PURPOSE).load_token(client.cookies["session"])
    expires_in = None if loaded.expires_at is None else loaded.expires_at - loaded.issued_at
    at = time.time() - seconds
    old = SerializerSigner(DOCS_SECRET_KEY, purpose=STARLETTE_PURPOSE, clock=lambda: at)
    client.cookies.clear()
    client.cookies["session"] = old.dumps(loaded.value, expires_in=expires_in)
    return client.get("/me").json()["user_id"]


def test_starlette_page_settings() -> None:
    assert PAGE["REMEMBER_ME_FOR"] == 30 * DAY
    [middleware] = PAGE["remembering"].user_middleware
    assert middleware.kwargs["max_age"] == 12 * HOUR


@pytest.mark.parametrize(("remember", "max_age"), [(True, 30 * DAY), (False, None)], ids=["ticked", "unticked"])
def test_starlette_cookie_lifetime_follows_the_checkbox(remember: bool, max_age: int | None) -> None:
    client = TestClient(PAGE["remembering"], base_url="https://testserver")
    header = client.post("/login", json={"remember_me": remember}).headers["set-cookie"]
    if max_age is None:
        assert "max-age" not in header.lower()
    else:
        assert f"Max-Age={max_age};" in header


@pytest.mark.parametrize(("days", "logged_in"), [(20, True), (29.9, True), (30.1, False)])
def test_starlette_remembered_session_lasts_thirty_days_on_the_server(days: float, logged_in: bool) -> None:
    assert starlette_saved_ago(remember=True, seconds=days * DAY) == (42 if logged_in else None)


@pytest.mark.parametrize(("hours", "logged_in"), [(11.9, True), (12.1, False), (20 * 24, False)])
def test_starlette_browser_session_still_ends_after_max_age(hours: float, logged_in: bool) -> None:
    assert starlette_saved_ago(remember=False, seconds=hours * HOUR) == (42 if logged_in else None)
