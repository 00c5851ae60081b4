"""The middleware finds its cookie exactly as Starlette's request.cookies parses the Cookie header."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import cookie_parser

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET

MIDDLEWARE = SessionMiddleware(Starlette(), secret_key=SECRET, session_cookie="session")

# Pieces that exercise the parser's edges: separators, spaces, quotes, escapes, look-alike names.
PIECES = st.sampled_from(
    ["session", "Session", "sessions", "x", "=", ";", " ", "; ", '"', "\\", "\\073", "\t", "0ab.cd", "\xa0", "\xe9"]
)
HEADER = st.lists(PIECES, max_size=12).map("".join)


def expected(headers: list[str]) -> str | None:
    """What request.cookies holds for "session" (Starlette 1.x merges every Cookie header)."""
    cookies: dict[str, str] = {}
    for header in headers:
        cookies.update(cookie_parser(header))
    return cookies.get("session")


@settings(max_examples=500, deadline=None)
@given(st.lists(HEADER, min_size=1, max_size=3))
def test_same_value_as_starlettes_cookie_parser(headers: list[str]) -> None:
    raw = [(b"host", b"testserver")] + [(b"cookie", h.encode("latin-1")) for h in headers]
    assert MIDDLEWARE._read_cookie(raw) == expected(headers)


def test_examples() -> None:
    cases = {
        "session=abc": "abc",
        " session = abc ": "abc",
        "theme=dark; session=abc; lang=en": "abc",
        "session=abc; session=def": "def",
        'session="a\\073b"': "a;b",
        "sessions=abc": None,
        "session": None,
        "x=session=abc": None,
    }
    for header, value in cases.items():
        assert MIDDLEWARE._read_cookie([(b"cookie", header.encode())]) == value, header
        assert expected([header]) == value, header


@settings(max_examples=500, deadline=None)
@given(HEADER)
def test_the_lazy_path_cuts_out_the_same_value(header: str) -> None:
    """A used lazy session finds its cookie in the one Cookie header it kept, as request.cookies would."""
    found = MIDDLEWARE._token_in(header.encode("latin-1"))
    # What LazySession.load does with bytes the signer refuses: the stripped text, read again.
    text = found.decode("latin-1").strip() if isinstance(found, bytes) else found
    assert text == expected([header])
