"""Values Starlette's own middleware stores (through Python's json) are stored by ours too, never a 500.

orjson refuses integers over 64 bits and lone surrogates (a JSON body's "\\ud800"); the core then
writes the token with Python's json, so the session reads back equal on the next request.
Values json refuses too fail as they fail in Starlette's middleware: a TypeError on save.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET

MIDDLEWARES = [StarletteSessionMiddleware, SessionMiddleware]


async def write(request: Request) -> PlainTextResponse:
    """Merge a JSON body into the session; answer with ascii(), which any string survives."""
    request.session.update(json.loads(await request.body()))
    return PlainTextResponse(ascii(dict(request.session)))


async def write_a_set(request: Request) -> PlainTextResponse:
    request.session["tags"] = {"a", "b"}
    return PlainTextResponse("stored")


async def read(request: Request) -> PlainTextResponse:
    return PlainTextResponse(ascii(dict(request.session)))


def client(middleware: type, raise_server_exceptions: bool = True) -> TestClient:
    routes = [Route("/write", write, methods=["POST"]), Route("/set", write_a_set), Route("/read", read)]
    app = Starlette(routes=routes, middleware=[Middleware(middleware, secret_key=SECRET)])
    return TestClient(app, raise_server_exceptions=raise_server_exceptions)


@pytest.mark.parametrize("middleware", MIDDLEWARES, ids=["starlette", "ours"])
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"s": "\\ud800"}', {"s": "\ud800"}),
        ('{"s": "a\\udfffb", "t": "\\ud83d\\ude00"}', {"s": "a\udfffb", "t": "\U0001f600"}),
        ('{"n": 18446744073709551616}', {"n": 2**64}),
        ('{"n": -340282366920938463463374607431768211456}', {"n": -(2**128)}),
        ('{"deep": [{"n": 36893488147419103232, "s": "\\udc00"}]}', {"deep": [{"n": 2**65, "s": "\udc00"}]}),
    ],
    ids=["lone-surrogate", "surrogate-and-pair", "int-2**64", "int--2**128", "nested"],
)
def test_values_orjson_refuses_round_trip(middleware: type, body: str, expected: dict[str, object]) -> None:
    session_client = client(middleware)
    response = session_client.post("/write", content=body.encode("ascii"))
    assert response.status_code == 200
    assert response.headers.get_list("set-cookie")
    read = session_client.get("/read")
    assert read.status_code == 200
    assert read.text == ascii(expected)


@pytest.mark.parametrize("middleware", MIDDLEWARES, ids=["starlette", "ours"])
def test_values_json_refuses_fail_as_in_starlette(middleware: type) -> None:
    with pytest.raises(TypeError):
        client(middleware).get("/set")
    assert client(middleware, raise_server_exceptions=False).get("/set").status_code == 500


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    LARGE = 3


@dataclasses.dataclass
class Item:
    sku: str


#: What orjson would write and read back as another type; Python's json (Starlette's) refuses each.
NOT_JSON = {
    "datetime": datetime.datetime(2026, 11, 24, 12, 0, tzinfo=datetime.timezone.utc),
    "time": datetime.time(12, 0),
    "uuid": uuid.UUID(int=7),
    "enum": Colour.RED,
    "dataclass": Item("book"),
    "bytes": b"x",
}


@pytest.mark.parametrize("middleware", MIDDLEWARES, ids=["starlette", "ours"])
@pytest.mark.parametrize("kind", NOT_JSON)
def test_values_orjson_would_change_are_refused_as_in_starlette(middleware: type, kind: str) -> None:
    async def store(request: Request) -> PlainTextResponse:
        request.session["cart"] = [{"added": NOT_JSON[kind]}]
        return PlainTextResponse("stored")

    app = Starlette(routes=[Route("/", store)], middleware=[Middleware(middleware, secret_key=SECRET)])
    with pytest.raises(TypeError) as raised:
        TestClient(app).get("/")
    if middleware is SessionMiddleware:
        assert str(raised.value).startswith("value at ['cart'][0]['added'] is "), raised.value


@pytest.mark.parametrize("middleware", MIDDLEWARES, ids=["starlette", "ours"])
def test_subclasses_json_accepts_are_stored_as_json_writes_them(middleware: type) -> None:
    async def store(request: Request) -> PlainTextResponse:
        request.session.update({"size": Size.LARGE, "pair": (1, 2)})
        return PlainTextResponse("stored")

    app = Starlette(
        routes=[Route("/", store), Route("/read", read)], middleware=[Middleware(middleware, secret_key=SECRET)]
    )
    session_client = TestClient(app)
    session_client.get("/")
    assert session_client.get("/read").text == ascii({"size": 3, "pair": [1, 2]})
