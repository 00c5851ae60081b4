"""Starlette: signed links to every path ``url_path_for`` writes, and session cookies, through TestClient.

A link is ``signer.sign(app.url_path_for(...))`` for any arguments of the str, path, int, float and uuid
convertors, with any query and maybe an expiry, requested through ``signed_url_required`` (the adapter's
check on the raw path of a real Request): the endpoint must receive the arguments the convertors give back.
Starlette's ``url_path_for`` writes ``%``, ``?`` and ``#`` of a str or path argument as they are, so
its path then means something else before any signing; such links must still verify (the signer keeps the
URL it was given), and only arguments without them are compared. Any change to a link is refused (403),
misses every route (404), or reaches the endpoint with the same arguments; a respelling that keeps the
documented meaning must reach it.

A session of any JSON value survives a round trip through the middleware (several configurations), and
any change to its cookie gives an empty session with 200: never a 500 (the client raises server errors).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.testclient import TestClient
from starlette.testclient import httpx as CLIENT_HTTP  # httpx2 or httpx, whichever TestClient uses

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SessionMiddleware, signed_url_required
from blake2sign_web.starlette.sessions import SessionCookieTooLarge
from tests.longrun import examples

from .strategies import MEANING_KEPT, mutated_tokens, mutated_urls, queries, sessions, url_from, url_meaning

SECRET = "a secret for the Starlette properties 0123456789"
SIGNER = URLSigner(SECRET, purpose="starlette links")
OWN_PARAMS = ("signature", "expires", "once", "starts", "prefix", "group", "issued", "kid")
#: What Starlette's url_path_for writes unescaped and a URL reads as syntax.
URL_SYNTAX = set("%?#")


def received(params: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Typed path parameters and the query grouped by name, sorted by name as the signer's canonical form."""
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        if name not in OWN_PARAMS:
            grouped.setdefault(name, []).append(value)
    return {
        "params": {name: [type(value).__name__, str(value)] for name, value in params.items()},
        "query": sorted(([name, values] for name, values in grouped.items()), key=lambda item: item[0]),
    }


@signed_url_required(SIGNER)
async def echo(request: Request) -> Response:
    return JSONResponse(received(request.path_params, list(request.query_params.multi_items())))


ROUTES = {
    "str": "/str/{value}",
    "path": "/path/{value:path}",
    "int": "/int/{value:int}",
    "float": "/float/{value:float}",
    "uuid": "/uuid/{value:uuid}",
    "mixed": "/mixed/{name}/{number:int}/{ratio:float}/{key:uuid}/{rest:path}",
}
LINKS = Starlette(routes=[Route(path, echo, name=name) for name, path in ROUTES.items()])
CONVERTORS: dict[str, st.SearchStrategy[Any]] = {
    "str": st.text(st.characters(codec="utf-8", exclude_characters="/"), min_size=1, max_size=12),
    "path": st.text(st.characters(codec="utf-8"), min_size=1, max_size=12),
    "int": st.integers(0, 10**18),
    "float": st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    "uuid": st.uuids(),
}
route_arguments = st.sampled_from(sorted(ROUTES)).flatmap(
    lambda name: st.tuples(
        st.just(name),
        st.fixed_dictionaries(
            {
                argument: CONVERTORS["str" if ":" not in spec else spec.partition(":")[2].rstrip("}")]
                for spec in ROUTES[name].split("/")
                if spec.startswith("{")
                for argument in [spec.strip("{}").partition(":")[0]]
            }
        ),
    )
)


@pytest.fixture(scope="module")
def links() -> Iterator[TestClient]:
    with TestClient(LINKS, base_url="http://testserver") as client:
        yield client


def signed_link(
    route: tuple[str, dict[str, Any]], pairs: list[tuple[str, str]], expires_in: int | None
) -> tuple[str, dict[str, Any] | None]:
    """A signed link, and what its endpoint must receive (None when url_path_for wrote URL syntax as it is)."""
    name, arguments = route
    path = LINKS.url_path_for(name, **arguments)
    pairs = [(k, v) for k, v in pairs if k not in OWN_PARAMS]
    link = SIGNER.sign(url_from(path, pairs), expires_in=expires_in)
    if any(isinstance(value, str) and URL_SYNTAX & set(value) for value in arguments.values()):
        return link, None
    # What Starlette itself reads back from the unsigned path, as a server decodes it (some versions of
    # url_path_for escape a few characters), a trailing newline lost to its "$".
    scope = {"type": "http", "path": unquote(path), "root_path": "", "method": "GET"}
    for route in LINKS.routes:
        match, child_scope = route.matches(scope)
        if match == Match.FULL:
            return link, received(child_scope["path_params"], pairs)
    assume(False)  # a path Starlette cannot read back: nothing a link could carry
    raise AssertionError("unreachable")


@settings(max_examples=examples(400), deadline=None)
@given(route_arguments, queries, st.sampled_from([None, 3600]))
@example(("path", {"value": "../%2e%2e/./a b"}), [("t", "2"), ("t", "1")], 3600)
@example(("float", {"value": 1e-30}), [], None)
@example(("str", {"value": "a?b#c%d"}), [("q", "+ %")], None)
def test_every_url_path_for_link_reaches_its_endpoint_with_its_arguments(
    links: TestClient, route: tuple[str, dict[str, Any]], pairs: list[tuple[str, str]], expires_in: int | None
) -> None:
    link, expected = signed_link(route, pairs, expires_in)
    # A fragment is never sent (the client would refuse one url_path_for wrote with control characters).
    response = links.get(link.partition("#")[0])
    if expected is None:  # its path says something else; what it says is still signed
        assert response.status_code in (200, 404), (link, response.text)
        return
    assert response.status_code == 200, (link, response.text)
    assert response.json() == expected


@settings(max_examples=examples(400), deadline=None)
@given(route_arguments, queries, st.sampled_from([None, 3600]), st.data())
def test_a_changed_link_is_refused_or_reaches_the_endpoint_unchanged(
    links: TestClient,
    route: tuple[str, dict[str, Any]],
    pairs: list[tuple[str, str]],
    expires_in: int | None,
    data: st.DataObject,
) -> None:
    link, expected = signed_link(route, pairs, expires_in)
    assume(expected is not None)
    kind, changed = data.draw(mutated_urls(link))
    try:
        response = links.get(changed)
    except CLIENT_HTTP.InvalidURL:  # the client refuses to send it (a control character): no request at all
        return
    if kind in MEANING_KEPT and url_meaning(changed) == url_meaning(link):
        assert response.status_code == 200, f"{kind}: the same link, respelled, was refused"
    assert response.status_code in (200, 403, 404), (kind, changed, response.status_code)
    if response.status_code == 200:
        assert response.json() == expected, f"{kind}: {changed!r} reached the endpoint with other arguments"


async def write_session(request: Request) -> Response:
    request.session["value"] = json.loads(await request.body())
    return Response("stored")


async def read_session(request: Request) -> Response:
    # Python's json, ASCII: a lone surrogate survives as an escape (JSONResponse would fail to encode it).
    return Response(json.dumps(dict(request.session)), media_type="application/json")


MIDDLEWARE_OPTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "format 1": {"format": 1},
    "no compression": {"compression": None},
    "blake3, 32-byte tags": {"hasher": "blake3", "tag_size": 32},
    "blake2s, zstd without dictionary": {"hasher": "blake2s", "dictionary": None, "compression_threshold": 0},
}


@pytest.fixture(scope="module")
def session_clients() -> Iterator[dict[str, TestClient]]:
    routes = [Route("/write", write_session, methods=["POST"]), Route("/read", read_session)]
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                TestClient(
                    Starlette(routes=routes, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, **options)])
                )
            )
            for name, options in MIDDLEWARE_OPTIONS.items()
        }


@settings(max_examples=examples(150), deadline=None)
@given(sessions, st.sampled_from(sorted(MIDDLEWARE_OPTIONS)), st.data())
def test_a_session_round_trips_and_a_changed_cookie_is_an_empty_session(
    session_clients: dict[str, TestClient], session: dict[str, Any], configuration: str, data: st.DataObject
) -> None:
    client = session_clients[configuration]
    client.cookies.clear()
    try:
        response = client.post("/write", content=json.dumps(session))
    except SessionCookieTooLarge:  # over the browser's 4096 bytes: refused before sending, as configured
        return
    set_cookie = response.headers["set-cookie"]
    cookie = set_cookie.partition(";")[0].partition("=")[2]
    client.cookies.clear()
    response = client.get("/read", headers={"cookie": f"session={cookie}"})
    assert response.status_code == 200
    assert response.json() == {"value": session}

    options = MIDDLEWARE_OPTIONS[configuration]
    long_tag = options.get("tag_size") == 32 or options.get("format") == 1
    _, changed = data.draw(mutated_tokens(cookie, 43 if long_tag else 22))
    response = client.get("/read", headers={"cookie": f"session={changed}".encode()})
    assert response.status_code == 200
    # Starlette's cookie parser strips the value: a token that differs only by outer whitespace is the same one.
    assert response.json() == ({"value": session} if changed.strip() == cookie else {})
