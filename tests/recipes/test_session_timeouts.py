"""docs/recipes/session-timeouts.md: its idle and absolute timeouts, Django and Starlette, without waiting.

Time is moved by what the requests carry, not by patching a clock: cookies are issued in the past through
the core's ``clock=`` (the idle limit), and sessions hold a start or login time in the past (the absolute
limit). The Django page is the engine's IDLE_TIMEOUT and ABSOLUTE_TIMEOUT, under either session middleware.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.django.sessions import STARTED
from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.sessions import IDLE_REFRESH_FRACTION
from tests.django_sessions.conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, middleware_with, signer
from tests.recipes.pages import DOCS_SECRET_KEY, RECIPES, page_module

PAGE = page_module("session-timeouts.md")
MINUTE = 60
HOUR = 60 * MINUTE


def who_is_logged_in(request: HttpRequest) -> HttpResponse:
    return HttpResponse(request.user.get_username())


urlpatterns = [path("login/", LoginView.as_view()), path("me/", who_is_logged_in)]


@pytest.fixture(params=[DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def django_client(request: pytest.FixtureRequest, settings: Any, db: None) -> Client:
    """The page's settings, with Django's session middleware or this project's; a user, logged in."""
    for name in ("SESSION_ENGINE", "SESSION_EXPIRE_AT_BROWSER_CLOSE", "BLAKE2SIGN_WEB"):
        setattr(settings, name, getattr(PAGE, name))
    settings.MIDDLEWARE = middleware_with(request.param)
    settings.ROOT_URLCONF = __name__
    User.objects.create_user("ada", password="correct horse")
    client = Client()
    response = client.post("/login/", {"username": "ada", "password": "correct horse"})
    assert response.status_code == 302
    return client


def token(client: Client) -> str:
    return client.cookies["sessionid"].value


def send_session(client: Client, data: dict[str, Any], *, saved_ago: float = 0) -> str:
    """Request /me/ with ``data`` as the engine would have saved it ``saved_ago`` seconds ago; the user seen."""
    client.cookies["sessionid"] = signer(clock=lambda: time.time() - saved_ago).dumps(data)
    return client.get("/me/").content.decode()


def test_page_uses_owasp_limits() -> None:
    assert PAGE.BLAKE2SIGN_WEB["SESSIONS"] == {"IDLE_TIMEOUT": 15 * MINUTE, "ABSOLUTE_TIMEOUT": 8 * HOUR}
    assert PAGE.IDLE_TIMEOUT == 15 * MINUTE
    assert PAGE.ABSOLUTE_TIMEOUT == 8 * HOUR


def test_page_leads_with_the_same_limits_as_one_line_options() -> None:
    options = {"idle_timeout": 15 * MINUTE, "absolute_timeout": 8 * HOUR}
    [middleware] = PAGE.middleware
    assert middleware.cls is SessionMiddleware
    assert options.items() <= middleware.kwargs.items()
    [added] = PAGE.api.user_middleware
    assert added.cls is SessionMiddleware
    assert options.items() <= added.kwargs.items()


def test_page_states_the_adapters_refresh_fraction() -> None:
    assert IDLE_REFRESH_FRACTION == 0.25
    text = (RECIPES / "session-timeouts.md").read_text(encoding="utf-8")
    assert "`IDLE_REFRESH_FRACTION = 0.25`" in text
    assert "3 minutes 45 seconds" in text  # a quarter of the page's 15 minutes


def test_django_login_signs_the_start_into_the_cookie(django_client: Client) -> None:
    assert abs(signer().loads(token(django_client))[STARTED] - time.time()) < 5
    assert django_client.get("/me/").content == b"ada"


def test_django_reads_re_issue_a_browser_session_cookie_once_a_quarter_has_passed(django_client: Client) -> None:
    assert "sessionid" not in django_client.get("/me/").cookies  # just issued: a read writes nothing
    data = signer().loads(token(django_client))
    assert send_session(django_client, data, saved_ago=4 * MINUTE) == "ada"  # past 3 min 45 s: re-issued
    assert abs(signer().load_token(token(django_client)).issued_at - time.time()) < 5
    assert "sessionid" not in django_client.get("/me/").cookies  # the re-issued cookie is new: nothing to write


def test_django_re_issued_cookie_is_a_browser_session_cookie(django_client: Client) -> None:
    data = signer().loads(token(django_client))
    django_client.cookies["sessionid"] = signer(clock=lambda: time.time() - 5 * MINUTE).dumps(data)
    cookie = django_client.get("/me/").cookies["sessionid"]
    assert cookie.value
    assert cookie["max-age"] == ""  # SESSION_EXPIRE_AT_BROWSER_CLOSE


@pytest.mark.parametrize(("idle_minutes", "user"), [(14, "ada"), (16, "")])
def test_django_idle_timeout(django_client: Client, idle_minutes: int, user: str) -> None:
    data = signer().loads(token(django_client))
    assert send_session(django_client, data, saved_ago=idle_minutes * MINUTE) == user


def test_django_activity_restarts_the_idle_timer(django_client: Client) -> None:
    send_session(django_client, signer().loads(token(django_client)), saved_ago=14 * MINUTE)
    issued_at = signer().load_token(token(django_client)).issued_at
    assert abs(issued_at - time.time()) < 5


@pytest.mark.parametrize(("hours_since_login", "user"), [(7.9, "ada"), (8.1, "")])
def test_django_absolute_timeout(django_client: Client, hours_since_login: float, user: str) -> None:
    data = signer().loads(token(django_client))
    data[STARTED] = int(time.time() - hours_since_login * HOUR)
    assert send_session(django_client, data) == user  # active a second ago
    if not user:
        assert token(django_client) == ""  # the refused cookie was deleted
        assert django_client.get("/me/").content == b""


def test_django_session_from_before_the_setting_counts_from_its_cookie(django_client: Client) -> None:
    data = signer().loads(token(django_client))
    del data[STARTED]
    assert send_session(django_client, data, saved_ago=10 * MINUTE) == "ada"
    assert abs(signer().loads(token(django_client))[STARTED] - (time.time() - 10 * MINUTE)) < 5


def starlette_cookie(data: Any, *, issued_ago: int = 0) -> str:
    """A cookie the page's SessionMiddleware would have issued ``issued_ago`` seconds ago."""
    keys = SessionMiddleware(PAGE.app, secret_key=DOCS_SECRET_KEY, max_age=PAGE.IDLE_TIMEOUT).signer
    issued = time.time() - issued_ago
    return SerializerSigner(DOCS_SECRET_KEY, purpose=keys.purpose, clock=lambda: issued).dumps(data)


def starlette_user(data: Any, *, issued_ago: int = 0, app: Any = None) -> Any:
    """The user the page's hand-made app (or ``app``) sees for ``data``, and the response's Set-Cookie."""
    client = TestClient(PAGE.app if app is None else app, base_url="https://testserver")
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


@pytest.mark.parametrize(
    ("idle_minutes", "user", "reissued"), [(3, 42, False), (4, 42, True), (14, 42, True), (16, None, False)]
)
def test_starlette_idle_timeout_argument(idle_minutes: int, user: int | None, reissued: bool) -> None:
    """The page's ``timed`` app: a read re-issues the cookie past a quarter of the 15 minutes, and not before."""
    seen, set_cookie = starlette_user({"user_id": 42}, issued_ago=idle_minutes * MINUTE, app=PAGE.timed)
    assert seen == user
    if user is None:
        assert set_cookie.startswith("session=null;")  # refused, and deleted
    elif reissued:
        token = set_cookie.removeprefix("session=").split(";")[0]
        keys = SessionMiddleware(PAGE.app, secret_key=DOCS_SECRET_KEY).signer
        assert abs(keys.load_token(token).issued_at - time.time()) < 5  # the idle timer restarts
        assert "Max-Age=900;" in set_cookie
    else:
        assert set_cookie == ""


@pytest.mark.parametrize(("hours_since_login", "user"), [(7.9, 42), (8.1, None)])
def test_starlette_absolute_timeout_argument(hours_since_login: float, user: int | None) -> None:
    login = int(time.time() - hours_since_login * HOUR)
    seen, _ = starlette_user([{"user_id": 42}, {"c": login}], issued_ago=MINUTE, app=PAGE.timed)
    assert seen == user


@pytest.mark.parametrize(("hours_since_login", "user"), [(7.9, 42), (8.1, None)])
def test_starlette_absolute_timeout(hours_since_login: float, user: int | None) -> None:
    login_time = int(time.time() - hours_since_login * HOUR)
    seen, set_cookie = starlette_user({"user_id": 42, "login_time": login_time})
    assert seen == user
    if user is None:
        assert set_cookie.startswith("session=null;")
        assert "expires=Thu, 01 Jan 1970 00:00:00 GMT" in set_cookie
