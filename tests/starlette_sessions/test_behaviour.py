"""request.session behaves as with Starlette's SessionMiddleware: round trips, when cookies are set, Vary."""

from __future__ import annotations

import contextlib
import string
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware

from .conftest import ROUTES, SECRET, AppFactory, cookie_value, set_cookie_headers


def test_a_written_session_comes_back_on_the_next_request(client_for: AppFactory) -> None:
    client = client_for()
    response = client.post("/write", json={"user": 42, "name": "Zoë", "roles": ["a", "b"]})
    assert response.status_code == 200
    assert len(set_cookie_headers(response)) == 1
    assert client.get("/read").json() == {"user": 42, "name": "Zoë", "roles": ["a", "b"]}


def test_the_cookie_is_one_of_our_tokens_not_readable_json(client_for: AppFactory) -> None:
    client = client_for()
    value = cookie_value(set_cookie_headers(client.post("/write", json={"user": 42}))[0])
    assert value[0] in "AQ"  # the core's format-2 marker: uncompressed, or against the session dictionary
    assert set(value) <= set(string.ascii_letters + string.digits + "-_.")  # no quoting needed in a cookie
    assert "user" not in value  # JSON is inside base64url, not in the clear
    assert SerializerSigner(SECRET, purpose="starlette.sessions:session").loads(value) == {"user": 42}


def test_no_cookie_and_no_vary_when_the_session_is_not_touched(client_for: AppFactory) -> None:
    client = client_for()
    client.post("/write", json={"a": 1})
    response = client.get("/plain")
    assert set_cookie_headers(response) == []
    assert "vary" not in response.headers


def test_reading_adds_vary_cookie_but_sets_no_cookie(client_for: AppFactory) -> None:
    client = client_for()
    client.post("/write", json={"a": 1})
    response = client.get("/read")
    assert response.json() == {"a": 1}
    assert response.headers["vary"] == "Cookie"
    assert set_cookie_headers(response) == []


def test_reading_an_empty_session_sets_no_cookie(client_for: AppFactory) -> None:
    response = client_for().get("/read")
    assert response.json() == {}
    assert set_cookie_headers(response) == []


def test_vary_is_added_to_the_apps_own_vary(client_for: AppFactory) -> None:
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def view(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(request.session.get("a")), headers={"vary": "Accept-Encoding"})

    app = SessionMiddleware(Starlette(routes=[Route("/", view)]), secret_key=SECRET)
    assert TestClient(app).get("/").headers["vary"] == "Accept-Encoding, Cookie"


def test_clearing_a_stored_session_expires_the_cookie(client_for: AppFactory) -> None:
    client = client_for()
    client.post("/write", json={"a": 1})
    response = client.post("/clear")
    [header] = set_cookie_headers(response)
    assert header == "session=null; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT; httponly; samesite=lax"
    assert client.get("/read").json() == {}


def test_clearing_a_session_that_was_empty_sets_no_cookie(client_for: AppFactory) -> None:
    response = client_for().post("/clear")
    assert set_cookie_headers(response) == []


def test_writing_again_replaces_the_cookie(client_for: AppFactory) -> None:
    client = client_for()
    first = cookie_value(set_cookie_headers(client.post("/write", json={"a": 1}))[0])
    second = cookie_value(set_cookie_headers(client.post("/write", json={"b": 2}))[0])
    assert first != second
    assert client.get("/read").json() == {"a": 1, "b": 2}


def test_the_session_reaches_websockets(client_for: AppFactory) -> None:
    client = client_for()
    client.post("/write", json={"user": 7})
    with client.websocket_connect("/ws") as websocket:
        assert websocket.receive_json() == {"user": 7}


def test_a_websocket_without_a_cookie_gets_an_empty_session(client_for: AppFactory) -> None:
    with client_for().websocket_connect("/ws") as websocket:
        assert websocket.receive_json() == {}


def test_lifespan_passes_through() -> None:
    started: list[bool] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started.append(True)
        yield

    app = Starlette(routes=ROUTES, lifespan=lifespan, middleware=[Middleware(SessionMiddleware, secret_key=SECRET)])
    with TestClient(app) as client:
        assert client.get("/read").status_code == 200
    assert started == [True]


def test_works_under_a_mount_with_its_own_cookie_path() -> None:
    inner = Starlette(routes=ROUTES, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, path="/sub")])
    app = Starlette(routes=[Mount("/sub", app=inner)])
    client = TestClient(app)
    response = client.post("/sub/write", json={"where": "sub"})
    assert "; path=/sub; " in set_cookie_headers(response)[0]
    assert client.get("/sub/read").json() == {"where": "sub"}


def test_a_browser_session_cookie_has_no_max_age(client_for: AppFactory) -> None:
    client = client_for(max_age=None)
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert "max-age" not in header.lower()
    assert "expires" not in header.lower()
    assert client.get("/read").json() == {"a": 1}


def test_a_secure_cookie_round_trips_over_https(client_for: AppFactory) -> None:
    client = client_for(https_only=True, base_url="https://testserver")
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert header.endswith("; httponly; samesite=lax; secure")
    assert client.get("/read").json() == {"a": 1}


def test_the_domain_attribute_is_sent(client_for: AppFactory) -> None:
    client = client_for(domain="example.org", base_url="http://www.example.org")
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert header.endswith("; httponly; samesite=lax; domain=example.org")
    assert client.get("/read").json() == {"a": 1}


def test_another_cookie_name(client_for: AppFactory) -> None:
    client = client_for(session_cookie="sid")
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert header.startswith("sid=")
    assert client.get("/read").json() == {"a": 1}


def test_each_hasher_and_no_compression_round_trip(client_for: AppFactory) -> None:
    for options in ({"hasher": "blake2s"}, {"hasher": "blake3"}, {"compression": None}):
        client = client_for(**options)
        client.post("/write", json={"a": "x" * 300})
        assert client.get("/read").json() == {"a": "x" * 300}, options


def test_a_typical_session_is_compressed(client_for: AppFactory) -> None:
    client = client_for()
    data = {"user_id": 12345, "csrf": "abcdef0123456789" * 2, "cart": [{"sku": f"SKU-{i}", "qty": 1} for i in range(6)]}
    value = cookie_value(set_cookie_headers(client.post("/write", json=data))[0])
    assert value[0] == "Q"  # compressed against the session dictionary
    assert client.get("/read").json() == data
