"""request.session.set_expiry() and get_expiry_age(), with Django's meaning, signed into the token."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, cookie_attributes, cookie_value, set_cookie_headers

PURPOSE = "starlette.sessions:session"
READER = SerializerSigner(SECRET, purpose=PURPOSE)


def _expiry_value(body: dict[str, Any]) -> Any:
    if "seconds" in body:
        return body["seconds"]
    if "days" in body:
        return timedelta(days=body["days"])
    if "at" in body:
        return datetime.fromtimestamp(body["at"], timezone.utc)
    return None


async def login(request: Request) -> JSONResponse:
    body = await request.json()
    request.session["user_id"] = 42
    if "expiry" in body:
        request.session.set_expiry(_expiry_value(body["expiry"]))
    return JSONResponse(_facts(request))


async def expiry_only(request: Request) -> JSONResponse:
    request.session.set_expiry(_expiry_value(await request.json()))
    return JSONResponse(_facts(request))


async def touch(request: Request) -> JSONResponse:
    request.session["n"] = request.session.get("n", 0) + 1
    return JSONResponse(_facts(request))


async def read(request: Request) -> JSONResponse:
    return JSONResponse(_facts(request))


async def logout(request: Request) -> JSONResponse:
    request.session.clear()
    request.session["anonymous"] = True
    return JSONResponse(_facts(request))


def _facts(request: Request) -> dict[str, Any]:
    session = request.session
    date = session.get_expiry_date()
    return {
        "session": dict(session),
        "age": session.get_expiry_age(),
        "date": None if date is None else date.timestamp(),
        "browser_close": session.get_expire_at_browser_close(),
    }


def client(**options: Any) -> TestClient:
    options.setdefault("secret_key", SECRET)
    routes = [
        Route("/login", login, methods=["POST"]),
        Route("/expiry", expiry_only, methods=["POST"]),
        Route("/touch", touch, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/read", read),
    ]
    return TestClient(Starlette(routes=routes, middleware=[Middleware(SessionMiddleware, **options)]))


def token_of(response: Any) -> tuple[Any, int, int | None]:
    [header] = set_cookie_headers(response)
    value, issued_at, expires_at, _ = READER.load_token(cookie_value(header))
    return value, issued_at, expires_at


def test_without_set_expiry_nothing_changes() -> None:
    c = client()
    response = c.post("/login", json={})
    assert response.json() == {
        "session": {"user_id": 42},
        "age": 14 * 24 * 3600,
        "date": pytest.approx(time.time() + 14 * 24 * 3600, abs=5),
        "browser_close": False,
    }
    value, _, expires_at = token_of(response)
    assert value == {"user_id": 42}
    assert expires_at is None
    assert "Max-Age=1209600;" in cookie_attributes(set_cookie_headers(response)[0])


def test_seconds_are_signed_into_the_token_and_the_cookie() -> None:
    c = client()
    response = c.post("/login", json={"expiry": {"seconds": 300}})
    assert response.json()["age"] == 300
    value, issued_at, expires_at = token_of(response)
    assert value == [{"user_id": 42}, {"e": 300}]
    assert expires_at == issued_at + 300  # a copied cookie ends then too
    assert "Max-Age=300;" in set_cookie_headers(response)[0]
    again = c.get("/read").json()  # read back from the token: the user's dict holds no expiry key
    assert again["session"] == {"user_id": 42}
    assert again["age"] == 300
    # Django's meaning: seconds from each write. A write re-issues the same 300 seconds.
    value, issued_at, expires_at = token_of(c.post("/touch"))
    assert value == [{"user_id": 42, "n": 1}, {"e": 300}]
    assert expires_at == issued_at + 300


def test_zero_is_a_browser_session_cookie_still_bounded_by_max_age(caplog: pytest.LogCaptureFixture) -> None:
    c = client(max_age=600)
    response = c.post("/login", json={"expiry": {"seconds": 0}})
    [header] = set_cookie_headers(response)
    assert "max-age" not in header.lower()
    assert "expires" not in header.lower()
    assert response.json()["browser_close"] is True
    assert response.json()["age"] == 600
    value, _, expires_at = token_of(response)
    assert value == [{"user_id": 42}, {"e": 0}]
    assert expires_at is None
    assert c.get("/read").json()["browser_close"] is True
    # The token still ends after max_age: a cookie kept by a browser that never closes is refused.
    old = SerializerSigner(SECRET, purpose=PURPOSE, clock=lambda: time.time() - 601)
    c.cookies.clear()
    c.cookies["session"] = old.dumps([{"user_id": 42}, {"e": 0}])
    with caplog.at_level(logging.WARNING, logger="blake2sign_web.starlette"):
        assert c.get("/read").json()["session"] == {}
    assert "older than 600 seconds" in caplog.text


def test_a_longer_expiry_outlives_max_age_and_no_further() -> None:
    c = client(max_age=60)
    response = c.post("/login", json={"expiry": {"days": 30}})
    assert 30 * 86400 - 5 <= response.json()["age"] <= 30 * 86400
    [header] = set_cookie_headers(response)
    assert "Max-Age=2592000;" in header or "Max-Age=2591999;" in header
    # Issued two minutes ago (past max_age=60), ends in 29 days: accepted, a "remember me".
    issued = time.time() - 120
    ends = int(issued + 29 * 86400)
    past = SerializerSigner(SECRET, purpose=PURPOSE, clock=lambda: issued)
    c.cookies.clear()
    c.cookies["session"] = past.dumps([{"user_id": 42}, {"t": ends}], expires_in=ends - int(issued))
    facts = c.get("/read").json()
    assert facts["session"] == {"user_id": 42}
    assert facts["date"] == ends
    # Past its signed expiry: refused, whatever the meta says (a copied cookie cannot outlive it).
    c.cookies["session"] = past.dumps([{"user_id": 42}, {"t": ends}], expires_in=60)
    assert c.get("/read").json()["session"] == {}
    # Past max_age with no expiry of its own (or browser-close): refused as before.
    c.cookies["session"] = past.dumps({"user_id": 42})
    assert c.get("/read").json()["session"] == {}


def test_an_aware_datetime_is_a_fixed_end() -> None:
    c = client()
    at = int(time.time()) + 3600
    response = c.post("/login", json={"expiry": {"at": at}})
    assert response.json()["date"] == at
    assert 3595 <= response.json()["age"] <= 3600
    value, _, expires_at = token_of(response)
    assert value == [{"user_id": 42}, {"t": at}]
    assert expires_at == at
    # A later write keeps the same end: it does not slide.
    value, _, expires_at = token_of(c.post("/touch"))
    assert value[1] == {"t": at}
    assert expires_at == at


def test_none_goes_back_to_max_age_and_the_plain_token() -> None:
    c = client()
    c.post("/login", json={"expiry": {"seconds": 300}})
    response = c.post("/expiry", json={})
    value, _, expires_at = token_of(response)
    assert value == {"user_id": 42}
    assert expires_at is None
    assert "Max-Age=1209600;" in set_cookie_headers(response)[0]


def test_an_expiry_in_the_past_ends_the_session() -> None:
    c = client()
    c.post("/login", json={})
    response = c.post("/expiry", json={"seconds": -1})
    [header] = set_cookie_headers(response)
    assert header.startswith("session=null;")
    assert "01 Jan 1970" in header
    assert c.get("/read").json()["session"] == {}


def test_set_expiry_marks_the_session_modified_and_loads_a_lazy_session() -> None:
    c = client()
    c.post("/login", json={})
    value, _, _ = token_of(c.post("/expiry", json={"seconds": 120}))
    assert value == [{"user_id": 42}, {"e": 120}]  # the data was loaded before the expiry was set


def test_clear_forgets_the_expiry_as_in_django() -> None:
    c = client()
    c.post("/login", json={"expiry": {"seconds": 300}})
    response = c.post("/logout")
    assert response.json()["age"] == 14 * 24 * 3600
    value, _, expires_at = token_of(response)
    assert value == {"anonymous": True}
    assert expires_at is None


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (True, TypeError, "set_expiry"),
        ("300", TypeError, "set_expiry"),
        (1.5, TypeError, "set_expiry"),
        (datetime(2030, 1, 1), ValueError, "aware"),
        (datetime(2107, 1, 1, tzinfo=timezone.utc), ValueError, "2106"),
        (2**32, ValueError, "2106"),
    ],
)
def test_values_a_token_cannot_carry_are_refused_at_once(value: Any, error: type[Exception], message: str) -> None:
    from blake2sign_web.starlette.sessions import Session

    session = Session()
    with pytest.raises(error, match=message):
        session.set_expiry(value)
    assert not session.modified


def test_a_session_has_the_middlewares_max_age() -> None:
    c = client(max_age=None)
    facts = c.post("/login", json={}).json()
    assert facts["age"] is None
    assert facts["date"] is None
    assert facts["browser_close"] is True


def test_request_session_still_pickles_and_copies() -> None:
    import copy
    import pickle

    from starlette.requests import Request as StarletteRequest

    seen: dict[str, Any] = {}

    async def view(request: StarletteRequest) -> JSONResponse:
        request.session["a"] = 1
        request.session.set_expiry(60)
        seen["pickled"] = pickle.loads(pickle.dumps(request.session))
        seen["copied"] = copy.deepcopy(request.session)
        return JSONResponse({})

    middleware = Middleware(SessionMiddleware, secret_key=SECRET)
    TestClient(Starlette(routes=[Route("/", view)], middleware=[middleware])).get("/")
    for session in seen.values():
        assert session == {"a": 1}
        assert session.get_expiry_age() == 60
