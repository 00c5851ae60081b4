"""Every bad cookie gives an empty session and one warning without its content: never an exception, never a 500."""

from __future__ import annotations

import logging
import time

import pytest
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner

from .conftest import SECRET, AppFactory, cookie_value, set_cookie_headers

LOGGER = "blake2sign_web.starlette"
PURPOSE = "starlette.sessions:session"  # the purpose the middleware signs the "session" cookie under


def valid_cookie(client: TestClient) -> str:
    return cookie_value(set_cookie_headers(client.post("/write", json={"user": 42}))[0])


def tamper(token: str) -> str:
    """Change one character of the signed body (the issue-time bytes), keeping the shape."""
    return token[:3] + ("A" if token[3] != "A" else "B") + token[4:]


def old_token(value: object, *, age: int, secret: str = SECRET) -> str:
    """A real token issued ``age`` seconds ago."""
    issued = time.time() - age
    return SerializerSigner(secret, purpose=PURPOSE, clock=lambda: issued).dumps(value)


def bad_cookies(client: TestClient) -> dict[str, str | bytes]:
    good = valid_cookie(client)
    return {
        "tampered body": tamper(good),
        "tampered MAC": good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB"),
        "truncated": good[:-1],
        "garbage": "this-is-not-a-token",
        "empty": "",
        "dots": "0.." + "." * 50,
        "only MAC shaped": "0." + "A" * 43,
        "unknown marker": "9" + good[1:],
        "oversized": "0" + "A" * 5000 + "." + "A" * 43,
        "expired": old_token({"user": 42}, age=15 * 24 * 3600),
        "from the future": old_token({"user": 42}, age=-3600),
        "another secret": SerializerSigner("another-secret-0123456789", purpose=PURPOSE).dumps({"user": 42}),
        "another cookie name": SerializerSigner(SECRET, purpose="starlette.sessions:other").dumps({"user": 42}),
        "another purpose": SerializerSigner(SECRET, purpose="downloads").dumps({"user": 42}),
        "not a dict": SerializerSigner(SECRET, purpose=PURPOSE).dumps([1, 2, 3]),
        "a Starlette cookie (migration off)": "eyJ1c2VyIjogNDJ9.aQ1ZAw.Sf2R0c3ZLVW1Kc3pSb1ZvTkhvSXo",
        "non-ASCII": "caf\xe9".encode("latin-1") + good.encode()[4:],
        "UTF-8 bytes": "Zoë".encode() + good.encode()[3:],
    }


@pytest.fixture
def client(client_for: AppFactory) -> TestClient:
    return client_for(raise_server_exceptions=True)


def test_each_bad_cookie_reads_as_an_empty_session(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    for name, cookie in bad_cookies(client).items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            fresh = TestClient(client.app)
            response = fresh.get("/read", headers={"cookie": b"session=" + _raw(cookie)})
        assert response.status_code == 200, name
        assert response.json() == {}, name
        assert set_cookie_headers(response) == [], name
        warnings = [r for r in caplog.records if r.name == LOGGER]
        assert len(warnings) == 1, name
        assert warnings[0].levelno == logging.WARNING
        message = warnings[0].getMessage()
        assert message.startswith("Rejected session cookie 'session': "), message
        text = cookie.decode("latin-1") if isinstance(cookie, bytes) else cookie
        for start in range(0, max(len(text) - 8, 1), 8):  # no 8-character piece of the cookie is logged
            piece = text[start : start + 8]
            if len(piece) == 8:
                assert piece not in message, (name, message)


def test_a_bad_cookie_can_be_replaced_by_a_new_session(client: TestClient) -> None:
    fresh = TestClient(client.app)
    fresh.cookies.set("session", "garbage")
    response = fresh.post("/write", json={"fresh": True})
    assert response.status_code == 200
    [header] = set_cookie_headers(response)
    fresh.cookies.clear()
    assert fresh.get("/read", headers={"cookie": "session=" + cookie_value(header)}).json() == {"fresh": True}


def test_clearing_after_a_bad_cookie_sends_no_deletion(client: TestClient) -> None:
    # As Starlette: only a session that was loaded from a valid cookie is expired when cleared.
    response = TestClient(client.app).post("/clear", headers={"cookie": "session=garbage"})
    assert set_cookie_headers(response) == []


def test_a_cookie_expired_on_the_server_even_if_the_browser_still_sends_it(client_for: AppFactory) -> None:
    client = client_for(max_age=60)
    assert client.get("/read", headers={"cookie": "session=" + old_token({"a": 1}, age=30)}).json() == {"a": 1}
    assert client.get("/read", headers={"cookie": "session=" + old_token({"a": 1}, age=61)}).json() == {}


def test_no_max_age_means_no_server_side_age_limit(client_for: AppFactory) -> None:
    client = client_for(max_age=None)
    assert client.get("/read", headers={"cookie": "session=" + old_token({"a": 1}, age=10**8)}).json() == {"a": 1}


def test_other_cookies_are_left_alone(client: TestClient) -> None:
    fresh = TestClient(client.app)
    good = valid_cookie(fresh)
    fresh.cookies.clear()
    response = fresh.get("/read", headers={"cookie": f"theme=dark; session={good}; other=x=y"})
    assert response.json() == {"user": 42}


def _raw(cookie: str | bytes) -> bytes:
    return cookie if isinstance(cookie, bytes) else cookie.encode("latin-1")


def test_starlettes_middleware_on_the_same_app_is_named_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """Ours and Starlette's on one app fight over the cookie; the log says so instead of blaming a signature."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.sessions import SessionMiddleware as StarlettesMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from blake2sign_web.starlette import SessionMiddleware

    async def count(request: Request) -> JSONResponse:
        request.session["n"] = request.session.get("n", 0) + 1
        return JSONResponse(dict(request.session))

    app = Starlette(
        routes=[Route("/", count)],
        # Starlette's is the outer one: its Set-Cookie comes last, so it is the cookie the client keeps.
        middleware=[
            Middleware(StarlettesMiddleware, secret_key=SECRET),
            Middleware(SessionMiddleware, secret_key=SECRET),
        ],
    )
    client = TestClient(app)
    client.get("/")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        client.get("/")
    [message] = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert "Starlette's own SessionMiddleware" in message, message
    assert "migrate_starlette_cookies=True" in message
