"""request.session tracks reads and changes as Starlette's Session does, through a real request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import starlette
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.sessions import SESSION_CLASS, LazySession, ReadTrackingSession, Session

from .conftest import SECRET, set_cookie_headers

STORED = {"a": 1, "b": 2}


def run(operation: Callable[[dict[str, Any]], object] | None) -> tuple[dict[str, Any], list[str], str | None]:
    """Apply ``operation`` to request.session holding STORED; return the session after, Set-Cookie and Vary."""

    async def view(request: Request) -> JSONResponse:
        if request.query_params.get("seed"):
            request.session.update(STORED)
        elif operation is not None:
            operation(request.session)
        stored = request.scope["session"]
        if type(stored) is LazySession:  # not used yet: read it as a use would, without marking it used
            stored.load()
        return JSONResponse(dict(dict.items(stored)))  # C-level: marks nothing

    client = TestClient(SessionMiddleware(Starlette(routes=[Route("/", view)]), secret_key=SECRET))
    client.get("/?seed=1")
    response = client.get("/")
    return response.json(), set_cookie_headers(response), response.headers.get("vary")


WRITES = {
    "set": lambda s: s.__setitem__("c", 3),
    "delete": lambda s: s.__delitem__("a"),
    "pop present": lambda s: s.pop("a"),
    "popitem": lambda s: s.popitem(),
    "setdefault new": lambda s: s.setdefault("c", 3),
    "update": lambda s: s.update(c=3),
    "in-place or": lambda s: s.__ior__({"c": 3}),
}
READS = {
    "getitem": lambda s: s["a"],
    "get": lambda s: s.get("zz"),
    "contains": lambda s: "a" in s,
    "iterate": lambda s: list(s),
    "len": len,
    "bool": bool,
    "keys": lambda s: s.keys(),
    "values": lambda s: s.values(),
    "items": lambda s: s.items(),
    "pop missing": lambda s: s.pop("zz", None),
    "setdefault present": lambda s: s.setdefault("a", 9),
}


@pytest.mark.parametrize("name", WRITES)
def test_each_write_sets_the_cookie(name: str) -> None:
    _, cookies, vary = run(WRITES[name])
    assert len(cookies) == 1
    assert vary == "Cookie"


@pytest.mark.parametrize("name", READS)
def test_each_read_adds_vary_and_sets_no_cookie(name: str) -> None:
    after, cookies, vary = run(READS[name])
    assert after == STORED
    assert cookies == []
    assert vary == "Cookie"


def test_a_view_that_does_not_use_the_session_adds_nothing() -> None:
    after, cookies, vary = run(None)
    assert after == STORED
    assert cookies == []
    assert vary is None


def test_clearing_expires_the_cookie() -> None:
    after, cookies, _ = run(lambda s: s.clear())
    assert after == {}
    assert cookies[0].startswith("session=null; ")


@pytest.mark.parametrize("name", READS)
def test_read_tracking_session_marks_each_read(name: str) -> None:
    """The class used on Starlette before 1.0, whose request.session marks nothing itself."""
    session = ReadTrackingSession(STORED)
    READS[name](session)
    assert session.accessed
    assert not session.modified


@pytest.mark.parametrize("name", WRITES)
def test_each_write_marks_both_session_classes_modified(name: str) -> None:
    for cls in (Session, ReadTrackingSession):
        session = cls(STORED)
        WRITES[name](session)
        assert session.modified
        assert session.accessed


def test_the_session_class_matches_the_starlette_version() -> None:
    starlette_1 = int(starlette.__version__.split(".")[0]) >= 1
    assert SESSION_CLASS is (Session if starlette_1 else ReadTrackingSession)


def test_the_session_is_a_plain_dict_for_json_and_copies() -> None:
    session = Session({"a": [1, 2]})
    assert isinstance(session, dict)
    assert dict(session) == {"a": [1, 2]}
    assert session.copy() == {"a": [1, 2]}
    assert not session.modified
