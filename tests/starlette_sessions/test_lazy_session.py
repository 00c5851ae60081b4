"""The cookie is verified and decoded when request.session is first used, never for a request that does not use it.

Starlette's own middleware decodes the cookie on every request (its maintainers asked for a lazy one, starlette
PR #499). Here a request that never touches the session costs finding the cookie; one that does pays once, and
every behaviour is as with an eager load: Vary only when read, writes keep what was stored, clear() deletes
the cookie, fallback secrets re-sign, cookies of Starlette's own middleware are migrated, websockets.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.sessions import STARLETTE_MARKS_ACCESS, LazySession, Session

from .conftest import SECRET, set_cookie_headers

pytestmark = pytest.mark.skipif(
    not STARLETTE_MARKS_ACCESS, reason="Starlette before 1.0 loads eagerly (its request.session marks nothing)"
)
STORED = {"user_id": 1042, "name": "Ada"}


class CountingSigner:
    """The middleware's own signer, counting what it verifies."""

    def __init__(self, signer: Any) -> None:
        self.signer = signer
        self.verified = 0

    def loads(self, token: str) -> Any:
        self.verified += 1
        return self.signer.loads(token)

    def load_token(self, token: str) -> Any:
        self.verified += 1
        return self.signer.load_token(token)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.signer, name)


Seen = dict[str, Any]


def build(view: Callable[[Request], Any], **options: Any) -> tuple[TestClient, CountingSigner, Seen]:
    seen: Seen = {}

    async def endpoint(request: Request) -> Response:
        result = view(request)
        seen["class"] = type(request.scope["session"])
        return JSONResponse(result) if result is not None else PlainTextResponse("ok")

    async def login(request: Request) -> Response:
        request.session.update(STORED)
        return PlainTextResponse("in")

    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_json(dict(websocket.session))
        await websocket.close()

    app = Starlette(routes=[Route("/", endpoint, methods=["GET", "POST"]), Route("/login", login),
                            WebSocketRoute("/ws", socket)])  # fmt: skip
    middleware = SessionMiddleware(app, secret_key=SECRET, **options)
    counting = CountingSigner(middleware.signer)
    middleware.signer = counting  # type: ignore[assignment]
    client = TestClient(middleware)
    client.get("/login")
    counting.verified = 0
    return client, counting, seen


def test_a_request_that_never_uses_the_session_verifies_nothing() -> None:
    client, signer, seen = build(lambda request: None)
    response = client.get("/")
    assert signer.verified == 0
    assert seen["class"] is LazySession
    assert set_cookie_headers(response) == []
    assert "vary" not in response.headers


def test_a_bad_cookie_on_a_request_that_never_uses_the_session_is_not_even_looked_at(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, signer, _ = build(lambda request: None)
    client.cookies.set("session", "not-a-token")
    with caplog.at_level(logging.WARNING):
        response = client.get("/")
    assert response.status_code == 200
    assert caplog.records == []
    with caplog.at_level(logging.WARNING):
        assert client.post("/", headers={"x": "y"}).status_code == 200
    assert signer.verified == 0


def test_the_first_use_verifies_once_and_leaves_a_plain_session() -> None:
    def view(request: Request) -> Any:
        first = request.session.get("user_id")
        second = request.session["name"]
        return {"first": first, "second": second, "class": type(request.session).__name__}

    client, signer, _ = build(view)
    response = client.get("/")
    assert response.json() == {"first": 1042, "second": "Ada", "class": "Session"}
    assert signer.verified == 1
    assert response.headers["vary"] == "Cookie"
    assert set_cookie_headers(response) == []


#: What code that takes scope["session"] itself may do with it, without request.session's mark_accessed.
DIRECT_READS: dict[str, Callable[[Any], Any]] = {
    "get": lambda s: s.get("user_id"),
    "getitem": lambda s: s["user_id"],
    "contains": lambda s: "user_id" in s and "name" in s,
    "len": len,
    "bool": bool,
    "iterate": lambda s: sorted(s),
    "keys": lambda s: sorted(s.keys()),
    "values": lambda s: sorted(map(str, s.values())),
    "items": lambda s: sorted(s.items()),
    "equal": lambda s: s == STORED,
    "not equal": lambda s: s != {},
    "repr": lambda s: repr(s) == repr(STORED),
    "copy": lambda s: s.copy(),
    "dict()": dict,
    "unpack": lambda s: {**s},
    "or": lambda s: s | {},
    "deepcopy": lambda s: dict(copy.deepcopy(s)),
    "reversed": lambda s: list(reversed(s)),
}


@pytest.mark.parametrize("name", DIRECT_READS)
def test_every_dict_read_of_scope_session_sees_the_stored_session(name: str) -> None:
    eager = DIRECT_READS[name](Session(STORED))

    def view(request: Request) -> Any:
        value = DIRECT_READS[name](request.scope["session"])
        return {"same": value == eager, "class": type(request.scope["session"]).__name__}

    client, signer, _ = build(view)
    assert client.get("/").json() == {"same": True, "class": "Session"}
    assert signer.verified == 1


@pytest.mark.parametrize("dumps", [json.dumps, orjson.dumps], ids=["json", "orjson"])
def test_request_session_serializes_whole(dumps: Callable[[Any], Any]) -> None:
    """C serializers read a dict's storage directly: request.session (which loads it) is what they must be given."""
    client, _, _ = build(lambda request: json.loads(dumps(request.session)))
    assert client.get("/").json() == STORED


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (lambda s: s.__setitem__("cart", [1]), {**STORED, "cart": [1]}),
        (lambda s: s.update(cart=[1]), {**STORED, "cart": [1]}),
        (lambda s: s.setdefault("cart", [1]), {**STORED, "cart": [1]}),
        (lambda s: s.pop("name"), {"user_id": 1042}),
        (lambda s: s.__delitem__("name"), {"user_id": 1042}),
        (lambda s: s.__ior__({"cart": [1]}), {**STORED, "cart": [1]}),
    ],
)
def test_a_write_without_a_read_keeps_what_was_stored(write: Callable[[Any], Any], expected: dict[str, Any]) -> None:
    def view(request: Request) -> Any:
        write(request.scope["session"])  # no read first, not even through request.session

    client, _, _ = build(view)
    response = client.get("/")
    assert len(set_cookie_headers(response)) == 1
    assert build_reader(client) == expected


def build_reader(client: TestClient) -> Any:
    reader = Starlette(routes=[Route("/", lambda request: JSONResponse(dict(request.session)))])
    with TestClient(SessionMiddleware(reader, secret_key=SECRET), cookies=client.cookies) as other:
        return other.get("/").json()


def test_clear_without_a_read_deletes_the_cookie() -> None:
    client, _, _ = build(lambda request: request.scope["session"].clear())
    [header] = set_cookie_headers(client.get("/"))
    assert header.startswith("session=null; ")


def test_fallback_secrets_re_sign_a_session_the_request_never_used() -> None:
    old = "an-older-starlette-secret-0123456789abcdefghijklmnop"
    app = Starlette(routes=[Route("/login", login_view), Route("/", lambda request: PlainTextResponse("ok"))])
    with TestClient(SessionMiddleware(app, secret_key=old)) as before:
        before.get("/login")
        cookie = before.cookies["session"]
    with TestClient(SessionMiddleware(app, secret_key=SECRET, fallback_secrets=[old])) as after:
        after.cookies.set("session", cookie)
        response = after.get("/")
    [header] = set_cookie_headers(response)
    assert header.startswith("session=")
    assert not header.startswith(f"session={cookie};")
    assert "vary" not in response.headers  # re-signed, not read


async def login_view(request: Request) -> Response:
    request.session.update(STORED)
    return PlainTextResponse("in")


def test_websockets_read_the_session() -> None:
    client, signer, _ = build(lambda request: None)
    with client.websocket_connect("/ws") as socket:
        assert socket.receive_json() == STORED
    assert signer.verified == 1


def test_server_timing_counts_the_load_when_it_happens() -> None:
    client, _, _ = build(lambda request: request.session.get("user_id"), server_timing=True)
    load = client.get("/").headers["server-timing"].split(",")[0]
    assert load.startswith("b2sw-load;dur=")
    assert float(load.split("=")[1]) > 0
