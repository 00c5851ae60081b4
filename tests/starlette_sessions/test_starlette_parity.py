"""The same Set-Cookie attributes, deletion cookie and Vary headers as Starlette's own SessionMiddleware."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import starlette.middleware.sessions as starlette_sessions
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, cookie_attributes, make_app, set_cookie_headers

STARLETTE_1 = hasattr(starlette_sessions, "Session")
#: Starlette's arguments in its newest version (1.10), in order; older versions lack ``partitioned``.
STARLETTE_ARGUMENTS = [
    "app",
    "secret_key",
    "session_cookie",
    "max_age",
    "path",
    "same_site",
    "https_only",
    "domain",
    "partitioned",
]
STARLETTE_HAS_PARTITIONED = "partitioned" in inspect.signature(StarletteSessionMiddleware).parameters

CONFIGURATIONS: list[dict[str, Any]] = [
    {},
    {"max_age": None},
    {"max_age": 3600, "path": "/", "same_site": "strict"},
    {"session_cookie": "sid", "same_site": "none", "https_only": True},
    {"domain": "example.org", "path": "/"},
    pytest.param(
        {"partitioned": True, "https_only": True, "same_site": "none"},
        marks=pytest.mark.skipif(not STARLETTE_HAS_PARTITIONED, reason="this Starlette has no partitioned argument"),
    ),
]


def exchange(middleware_class: type, options: dict[str, Any]) -> dict[str, Any]:
    """Write, read, clear and touch nothing: the headers each step sends."""
    base_url = "https://example.org" if options.get("https_only") or options.get("domain") else "http://testserver"
    client = TestClient(make_app(middleware_class, secret_key=SECRET, **options), base_url=base_url)
    written = client.post("/write", json={"a": 1})
    read = client.get("/read")
    cleared = client.post("/clear")
    plain = client.get("/plain")
    return {
        "written": [cookie_attributes(h) for h in set_cookie_headers(written)],
        "read": (read.json(), set_cookie_headers(read)),
        "cleared": set_cookie_headers(cleared),
        "plain": set_cookie_headers(plain),
        "vary": [r.headers.get("vary") for r in (written, read, cleared, plain)],
    }


@pytest.mark.parametrize("options", CONFIGURATIONS)
def test_headers_match_starlettes_middleware(options: dict[str, Any]) -> None:
    ours = exchange(SessionMiddleware, options)
    theirs = exchange(StarletteSessionMiddleware, options)
    assert ours["written"] == theirs["written"]
    assert ours["read"] == ({"a": 1}, [])
    assert theirs["read"][0] == {"a": 1}
    if STARLETTE_1:  # before 1.0 Starlette re-sent the cookie on every request with a non-empty session
        assert theirs["read"][1] == []
    assert ours["cleared"] == theirs["cleared"]
    assert ours["plain"] == theirs["plain"] == []
    # Starlette before 1.0 never sends Vary; ours sends it whenever the session was used.
    assert ours["vary"] == ["Cookie", "Cookie", "Cookie", None]
    if STARLETTE_1:  # Starlette 1.0 added access tracking and Vary
        assert ours["vary"] == theirs["vary"]


def test_partitioned_works_on_any_starlette() -> None:
    client = TestClient(
        make_app(SessionMiddleware, secret_key=SECRET, partitioned=True, https_only=True, same_site="none"),
        base_url="https://testserver",
    )
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert header.endswith("; httponly; samesite=none; secure; partitioned")


def test_the_same_positional_arguments_and_defaults_as_starlettes() -> None:
    ours = inspect.signature(SessionMiddleware).parameters
    theirs = inspect.signature(StarletteSessionMiddleware).parameters
    for name, parameter in theirs.items():
        assert name in ours
        assert ours[name].default == parameter.default, name
        assert ours[name].kind == parameter.kind, name
    positional = [n for n, p in ours.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == STARLETTE_ARGUMENTS
    assert list(theirs) == STARLETTE_ARGUMENTS[: len(theirs)]
    assert all(ours[n].kind is inspect.Parameter.KEYWORD_ONLY for n in ours if n not in STARLETTE_ARGUMENTS)
