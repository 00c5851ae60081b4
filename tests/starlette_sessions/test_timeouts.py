"""idle_timeout= and absolute_timeout=: enforced from times signed into the token, without waiting.

Time is moved by the cookies the client sends: tokens issued in the past through the core's ``clock=``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.sessions import expiry as timeouts
from blake2sign_web.starlette import SessionMiddleware, sessions
from blake2sign_web.starlette.sessions import IDLE_REFRESH_FRACTION, STARLETTE_MARKS_ACCESS

from .conftest import SECRET, AppFactory, cookie_value, set_cookie_headers

PURPOSE = "starlette.sessions:session"
READER = SerializerSigner(SECRET, purpose=PURPOSE)
IDLE = 900
ABSOLUTE = 8 * 3600
LOGGER = "blake2sign_web.starlette"


def issued(ago: float, value: Any, expires_in: int | None = None) -> str:
    at = time.time() - ago
    return SerializerSigner(SECRET, purpose=PURPOSE, clock=lambda: at).dumps(value, expires_in=expires_in)


def send(client: TestClient, cookie: str, path: str = "/read") -> Any:
    client.cookies.clear()
    client.cookies["session"] = cookie
    return client.get(path)


def only_token(response: Any) -> tuple[Any, int, int | None]:
    [header] = set_cookie_headers(response)
    value, issued_at, expires_at, _ = READER.load_token(cookie_value(header))
    return value, issued_at, expires_at


async def app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("never called")


@pytest.mark.parametrize("name", ["idle_timeout", "absolute_timeout"])
@pytest.mark.parametrize("value", [0, -1, True, "900", 1.5])
def test_a_timeout_must_be_positive_seconds(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"SessionMiddleware {name} must be seconds"):
        SessionMiddleware(app, secret_key=SECRET, **{name: value})  # type: ignore[arg-type]


def test_idle_the_cookie_lasts_as_long_as_the_server_accepts_it(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert f"Max-Age={IDLE};" in header
    assert (
        "Max-Age=60;" in set_cookie_headers(client_for(idle_timeout=IDLE, max_age=60).post("/write", json={"a": 1}))[0]
    )
    value, _, expires_at = only_token(client.post("/write", json={"b": 2}))
    assert value == {"a": 1, "b": 2}  # idle alone needs nothing beside the session: the plain token
    assert expires_at is None


@pytest.mark.parametrize("minutes", [16, 60 * 24])
def test_idle_a_cookie_not_reissued_for_longer_is_refused_and_deleted(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture, minutes: int
) -> None:
    client = client_for(idle_timeout=IDLE)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = send(client, issued(minutes * 60, {"user_id": 42}))
    assert response.json() == {}
    [header] = set_cookie_headers(response)
    assert header.startswith("session=null;")
    assert f"older than {IDLE} seconds" in caplog.text


def test_idle_the_refresh_fraction_is_the_cores_a_quarter_as_in_django() -> None:
    assert sessions.IDLE_REFRESH_FRACTION is timeouts.IDLE_REFRESH_FRACTION
    assert IDLE_REFRESH_FRACTION == 0.25
    assert IDLE * IDLE_REFRESH_FRACTION == 225  # 3 minutes 45 seconds of the 15 minutes


def test_idle_a_read_within_a_quarter_of_the_window_writes_nothing(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    response = send(client, issued(IDLE * IDLE_REFRESH_FRACTION - 10, {"user_id": 42}))
    assert response.json() == {"user_id": 42}
    assert set_cookie_headers(response) == []


def test_idle_a_read_past_a_quarter_of_the_window_reissues_the_cookie(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    response = send(client, issued(IDLE * IDLE_REFRESH_FRACTION + 10, {"user_id": 42}))
    assert response.json() == {"user_id": 42}
    value, issued_at, _ = only_token(response)
    assert value == {"user_id": 42}
    assert abs(issued_at - time.time()) < 5  # the idle timer restarts


@pytest.mark.skipif(
    not STARLETTE_MARKS_ACCESS, reason="Starlette before 1.0 loads every session (its request.session marks nothing)"
)
def test_idle_a_request_that_does_not_use_the_session_neither_verifies_nor_reissues(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    response = send(client, issued(IDLE * 0.6, {"user_id": 42}), "/plain")
    assert response.text == "no session here"
    assert set_cookie_headers(response) == []
    assert "vary" not in response.headers


def test_idle_an_empty_session_is_not_reissued(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    assert set_cookie_headers(send(client, issued(IDLE * 0.6, {}))) == []


def test_absolute_the_first_write_is_signed_with_its_end(client_for: AppFactory) -> None:
    client = client_for(absolute_timeout=ABSOLUTE)
    response = client.post("/write", json={"user_id": 42})
    assert response.json() == {"user_id": 42}  # the user's dict holds no timestamp
    [header] = set_cookie_headers(response)
    assert f"Max-Age={ABSOLUTE};" in header
    value, issued_at, expires_at = only_token(response)
    assert value == [{"user_id": 42}, {"c": issued_at}]
    assert expires_at == issued_at + ABSOLUTE
    assert client.get("/read").json() == {"user_id": 42}


def test_absolute_later_writes_keep_the_first_time(client_for: AppFactory) -> None:
    client = client_for(absolute_timeout=ABSOLUTE)
    login = int(time.time()) - 7 * 3600
    cookie = issued(60, [{"user_id": 42}, {"c": login}], expires_in=login + ABSOLUTE - int(time.time() - 60))
    client.cookies["session"] = cookie
    response = client.post("/write", json={"n": 1})
    value, _, expires_at = only_token(response)
    assert value == [{"user_id": 42, "n": 1}, {"c": login}]
    assert expires_at == login + ABSOLUTE  # activity does not extend it
    assert "Max-Age=36" in set_cookie_headers(response)[0]  # about an hour left: 3600 s or a second less


def test_absolute_a_session_past_it_is_refused_and_deleted(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = client_for(absolute_timeout=ABSOLUTE)
    login = int(time.time()) - 9 * 3600
    # Signed with no expiry (as if absolute_timeout was longer then): the login time alone ends it.
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = send(client, issued(60, [{"user_id": 42}, {"c": login}]))
    assert response.json() == {}
    assert set_cookie_headers(response)[0].startswith("session=null;")
    assert f"past absolute_timeout={ABSOLUTE}" in caplog.text
    # Signed with its end, as this middleware writes it: the core refuses it as expired.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = send(client, issued(3600, [{"user_id": 42}, {"c": login}], expires_in=ABSOLUTE - 8 * 3600 + 1))
    assert response.json() == {}
    assert set_cookie_headers(response)[0].startswith("session=null;")
    assert "passed its expiry" in caplog.text


async def relogin(request: Request) -> JSONResponse:
    request.session.clear()  # a login that starts afresh
    request.session["user_id"] = 7
    return JSONResponse(dict(request.session))


def test_absolute_a_session_emptied_and_filled_again_starts_afresh() -> None:
    middleware = Middleware(SessionMiddleware, secret_key=SECRET, absolute_timeout=ABSOLUTE)
    client = TestClient(Starlette(routes=[Route("/relogin", relogin)], middleware=[middleware]))
    login = int(time.time()) - 7 * 3600
    client.cookies["session"] = issued(60, [{"user_id": 42}, {"c": login}])
    value, issued_at, _ = only_token(client.get("/relogin"))
    assert value == [{"user_id": 7}, {"c": issued_at}]


def test_absolute_a_cookie_from_before_gets_its_clock_started(client_for: AppFactory) -> None:
    client = client_for(absolute_timeout=ABSOLUTE)
    client.cookies["session"] = issued(60, {"user_id": 42})
    assert client.get("/read").json() == {"user_id": 42}
    value, issued_at, _ = only_token(client.post("/write", json={"n": 1}))
    assert value == [{"user_id": 42, "n": 1}, {"c": issued_at}]


def test_both_and_set_expiry_the_earliest_end_wins(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE, absolute_timeout=ABSOLUTE)
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert f"Max-Age={IDLE};" in header
    login = int(time.time()) - ABSOLUTE + 300  # five minutes left
    client.cookies.clear()
    client.cookies["session"] = issued(IDLE * 0.6, [{"a": 1}, {"c": login}])
    response = client.get("/read")
    value, _issued_at, expires_at = only_token(response)  # re-issued for idleness, ends at the absolute limit
    assert value == [{"a": 1}, {"c": login}]
    assert expires_at == login + ABSOLUTE
    assert "Max-Age=300;" in set_cookie_headers(response)[0] or "Max-Age=299;" in set_cookie_headers(response)[0]


def test_idle_bounds_a_longer_set_expiry(client_for: AppFactory) -> None:
    client = client_for(idle_timeout=IDLE)
    remembered = [{"user_id": 42}, {"e": 30 * 86400}]
    assert send(client, issued(IDLE * 0.4, remembered, expires_in=30 * 86400)).json() == {"user_id": 42}
    assert send(client, issued(IDLE + 60, remembered, expires_in=30 * 86400)).json() == {}
