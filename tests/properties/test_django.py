"""Django: signed links to every path reverse() writes, and session cookies, through the real test client.

A link is made by ``sign_url(reverse(...))`` for any arguments of the str, slug, int, uuid and path
converters (with any query, an expiry, or single use) and requested through the middleware stack and
``signed_url_required``: the view must receive exactly the arguments and query it was made for. Any change
to the link (``strategies.mutated_urls``) is refused (403), misses every route (404), or reaches the view
with those same arguments; a respelling that keeps the documented meaning must reach it. Never a 500: the
test client raises whatever a view or middleware raised.

A session of any JSON value survives a round trip through the session engine (under both session
middlewares and several engine settings), and any change to its cookie gives an empty session with 200.
tests/signed_urls/test_reverse_roundtrip.py checks reverse() against the core signer and resolve(); these
go through the decorator and the client instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from hypothesis import assume, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from blake2sign_web.django import sign_url
from blake2sign_web.django.sessions import SessionTooLarge
from tests.longrun import examples

from .strategies import MEANING_KEPT, mutated_tokens, mutated_urls, queries, sessions, url_from, url_meaning

pytestmark = pytest.mark.urls("tests.properties.django_urls")
URLCONF = "tests.properties.django_urls"

#: Any text a URL can carry (reverse() refuses lone surrogates: no URL can hold one).
text_argument = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
CONVERTERS: dict[str, st.SearchStrategy[Any]] = {
    "str": text_argument.filter(lambda text: "/" not in text),
    "slug": st.from_regex(r"\A[-a-zA-Z0-9_]+\Z"),
    "int": st.integers(0, 10**18),
    "uuid": st.uuids(),
    "path": text_argument,
}
#: Each named route's arguments and their converters.
ROUTES = {
    "str": {"value": "str"},
    "slug": {"value": "slug"},
    "int": {"value": "int"},
    "uuid": {"value": "uuid"},
    "path": {"value": "path"},
    "mixed": {"name": "str", "number": "int", "key": "uuid", "slug": "slug", "rest": "path"},
    "anything": {"value": "path"},
}
route_arguments = st.sampled_from(sorted(ROUTES)).flatmap(
    lambda name: st.tuples(
        st.just(name), st.fixed_dictionaries({arg: CONVERTERS[kind] for arg, kind in ROUTES[name].items()})
    )
)
#: (expires_in, single_use): never expiring, expiring, single use.
lifetimes = st.sampled_from([(None, False), (3600, False), (3600, True)])
OWN_PARAMS = (
    "signature",
    "expires",
    "once",
    "consume",
    "disposition",
    "filename",
    "starts",
    "prefix",
    "group",
    "issued",
    "kid",
)
CLIENT = Client()


@pytest.fixture(autouse=True, scope="module")
def single_use_cache() -> Iterator[None]:
    """A cache for single-use links: this process's memory is enough for one test client."""
    caches = {**settings.CACHES, "links": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    with override_settings(CACHES=caches, BLAKE2SIGN_WEB={"SIGNED_URLS": {"SINGLE_USE_CACHE": "links"}}):
        yield


def expected_view_input(reversed_path: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """What the view must receive: the arguments Django itself reads back from the unsigned path, and the query."""
    try:
        match = resolve(unquote(reversed_path), urlconf=URLCONF)
    except Resolver404:  # reverse() wrote a path no route reads (a newline in <path:>): nothing to sign
        assume(False)
        raise
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        grouped.setdefault(name, []).append(value)
    return {
        "kwargs": {name: [type(value).__name__, str(value)] for name, value in match.kwargs.items()},
        "query": [[name, values] for name, values in grouped.items()],
    }


def signed_link(
    route: tuple[str, dict[str, Any]], pairs: list[tuple[str, str]], lifetime: tuple[int | None, bool]
) -> tuple[str, dict[str, Any]]:
    """A signed link to ``route`` with the query ``pairs``, and what its view must receive."""
    name, kwargs = route
    try:
        reversed_path = reverse(name, kwargs=kwargs, urlconf=URLCONF)
    except NoReverseMatch:  # the value does not fit the converter (reverse() checks it)
        assume(False)
        raise
    pairs = [(k, v) for k, v in pairs if k not in OWN_PARAMS]
    expires_in, single_use = lifetime
    link = sign_url(url_from(reversed_path, pairs), expires_in=expires_in, single_use=single_use)
    return link, expected_view_input(reversed_path, pairs)


@hypothesis_settings(max_examples=examples(400), deadline=None)
@given(route_arguments, queries, lifetimes)
@example(("anything", {"value": "/evil.example/x"}), [], (None, False))
@example(("path", {"value": "../%2e%2e/./a b"}), [("t", "2"), ("t", "1")], (3600, True))
@example(("str", {"value": "a?b#c%d"}), [("q", "+ %")], (None, False))
def test_every_reversed_link_reaches_its_view_with_its_arguments(
    route: tuple[str, dict[str, Any]], pairs: list[tuple[str, str]], lifetime: tuple[int | None, bool]
) -> None:
    link, expected = signed_link(route, pairs, lifetime)
    response = CLIENT.get(link)
    assert response.status_code == 200, (link, response.content)
    assert response.json() == expected
    if lifetime[1]:  # single use: a second whole GET is a second use
        assert CLIENT.get(link).status_code == 410


@hypothesis_settings(max_examples=examples(400), deadline=None)
@given(route_arguments, queries, lifetimes, st.data())
def test_a_changed_link_is_refused_or_reaches_the_view_unchanged(
    route: tuple[str, dict[str, Any]],
    pairs: list[tuple[str, str]],
    lifetime: tuple[int | None, bool],
    data: st.DataObject,
) -> None:
    link, expected = signed_link(route, pairs, lifetime)
    kind, changed = data.draw(mutated_urls(link))
    response = CLIENT.get(changed)
    if response.status_code == 301:  # CommonMiddleware's APPEND_SLASH: the link with a slash, as the client would
        response = CLIENT.get(response["Location"])
    if kind in MEANING_KEPT and url_meaning(changed) == url_meaning(link):
        assert response.status_code == 200, f"{kind}: the same link, respelled, was refused"
    assert response.status_code in (200, 403, 404), (kind, changed, response.status_code)
    if response.status_code == 200:
        # The same URL by the documented canonical form: the query's names may come in another order.
        received = {**response.json(), "query": sorted(response.json()["query"], key=lambda item: item[0])}
        assert received == {**expected, "query": sorted(expected["query"], key=lambda item: item[0])}, (
            f"{kind}: {changed!r} reached the view with other arguments"
        )


SESSION_MIDDLEWARES = {
    "django-middleware": "django.contrib.sessions.middleware.SessionMiddleware",
    "our-middleware": "blake2sign_web.django.middleware.SessionMiddleware",
}
ENGINE_SETTINGS = st.sampled_from(
    [
        {},
        {"FORMAT": 1},
        {"COMPRESSION": None},
        {"HASHER": "blake3", "TAG_SIZE": 32},
        {"HASHER": "blake2s", "DICTIONARY": None, "COMPRESSION_THRESHOLD": 0},
    ]
)


@pytest.mark.parametrize("middleware", sorted(SESSION_MIDDLEWARES))
@hypothesis_settings(max_examples=examples(150), deadline=None)
@given(session=sessions, engine=ENGINE_SETTINGS, data=st.data())
def test_a_session_round_trips_and_a_changed_cookie_is_an_empty_session(
    middleware: str, session: dict[str, Any], engine: dict[str, Any], data: st.DataObject
) -> None:
    stack = [SESSION_MIDDLEWARES[middleware] if "sessions" in m else m for m in settings.MIDDLEWARE]
    with override_settings(MIDDLEWARE=stack, BLAKE2SIGN_WEB={"SESSIONS": engine}):
        client = Client()
        try:
            client.post("/session/write", json.dumps(session), content_type="application/json")
        except SessionTooLarge:  # over the browser's 4096 bytes: refused before sending, as configured
            return
        response = client.get("/session/read")
        assert response.status_code == 200
        assert json.loads(response.content) == {"value": session}

        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        long_tag = engine.get("TAG_SIZE") == 32 or engine.get("FORMAT") == 1
        _, changed = data.draw(mutated_tokens(cookie, 43 if long_tag else 22))
        client.cookies[settings.SESSION_COOKIE_NAME] = changed
        response = client.get("/session/read")
        assert response.status_code == 200
        if changed.strip() == cookie:  # the same cookie once stripped (or a quoted copy of it): whole or refused
            assert json.loads(response.content) in ({}, {"value": session})
        else:
            assert json.loads(response.content) == {}
