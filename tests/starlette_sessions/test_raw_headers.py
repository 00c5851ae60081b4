"""What the middleware does with raw ASGI headers a test client would tidy up: several Cookie headers, a
response whose header list is sent again by a later request."""

from __future__ import annotations

from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET

#: One response object sent on every request: its header list must not grow.
SHARED = PlainTextResponse("shared")


async def login(request: Request) -> Response:
    request.session["user_id"] = 7
    return PlainTextResponse("in")


async def who(request: Request) -> Response:
    return PlainTextResponse(str(request.session.get("user_id")))


async def shared(request: Request) -> Response:
    request.session.get("user_id")
    return SHARED


APP = SessionMiddleware(
    Starlette(routes=[Route("/login", login), Route("/who", who), Route("/shared", shared)]), secret_key=SECRET
)


def session_cookie() -> bytes:
    client = TestClient(APP)
    client.get("/login")
    return f"session={client.cookies['session']}".encode()


def call(path: str, cookie_headers: list[bytes]) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """One GET through the middleware with exactly these Cookie headers: the body and the response headers."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
        "headers": [(b"host", b"testserver")] + [(b"cookie", value) for value in cookie_headers],
        "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
    }  # fmt: skip
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    anyio.run(APP, scope, receive, send)
    return b"".join(m.get("body", b"") for m in sent[1:]), list(sent[0]["headers"])


def test_several_cookie_headers_are_read_as_request_cookies_reads_them() -> None:
    cookie = session_cookie()
    assert call("/who", [b"theme=dark", cookie])[0] == b"7"
    assert call("/who", [cookie, b"theme=dark"])[0] == b"7"
    assert call("/who", [cookie, b"session=forged"])[0] == b"None"  # the last one wins, as in request.cookies
    assert call("/who", [b"session=forged", cookie])[0] == b"7"
    assert call("/who", [b"theme=dark", b"lang=en"])[0] == b"None"


def test_a_cookie_header_without_the_session_cookie_gives_an_empty_session() -> None:
    assert call("/who", [b"theme=dark; sessions=x"])[0] == b"None"


def test_vary_is_added_to_a_copy_of_a_shared_response_header_list() -> None:
    cookie = session_cookie()
    before = list(SHARED.raw_headers)
    for _ in range(3):
        _, headers = call("/shared", [cookie])
        assert [value for name, value in headers if name == b"vary"] == [b"Cookie"]
    assert SHARED.raw_headers == before
