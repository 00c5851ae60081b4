"""Format 2 under Starlette: the session dictionary and 16-byte tags by default, and the arguments that change them."""

from __future__ import annotations

from typing import Any

import pytest

from blake2sign_web import SerializerSigner
from blake2sign_web.signing.serializer import LAYOUTS, NO_COMPRESSION, ZSTD_DICTIONARY

from .conftest import SECRET, AppFactory, cookie_value, set_cookie_headers

TYPICAL = {"user_id": 5075, "csrf_token": "0f3a9c2b7d6e5f41a8b9c0d1e2f3a4b5c6d7e8f9", "flash": ["Welcome back!"]}


def written(client: Any, data: dict[str, Any]) -> str:
    return cookie_value(set_cookie_headers(client.post("/write", json=data))[0])


def test_a_typical_session_is_compressed_against_the_session_dictionary(client_for: AppFactory) -> None:
    client = client_for()
    value = written(client, TYPICAL)
    layout = LAYOUTS[value[:1].encode()]
    assert (layout.format, layout.compression, layout.tag_size) == (2, ZSTD_DICTIONARY, 16)
    assert client.get("/read").json() == TYPICAL


def test_compression_none_still_turns_compression_off(client_for: AppFactory) -> None:
    client = client_for(compression=None)
    assert LAYOUTS[written(client, TYPICAL)[:1].encode()].compression == NO_COMPRESSION
    assert client.get("/read").json() == TYPICAL


def test_tag_size_32(client_for: AppFactory) -> None:
    client = client_for(tag_size=32)
    assert LAYOUTS[written(client, TYPICAL)[:1].encode()].tag_size == 32
    assert client.get("/read").json() == TYPICAL


def test_format_1_cookies_load_under_the_new_defaults(client_for: AppFactory) -> None:
    old = written(client_for(format=1), TYPICAL)
    assert old[0] in "01"
    client = client_for()
    client.cookies.set("session", old)
    assert client.get("/read").json() == TYPICAL
    assert SerializerSigner(SECRET, purpose="starlette.sessions:session").loads(old) == TYPICAL


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dictionary": 7}, "dictionary must be a shipped dictionary id or None"),
        ({"tag_size": 20}, "tag_size must be 16 or 32"),
        ({"format": 3}, "format must be 2, or 1"),
    ],
)
def test_bad_format_arguments_fail_at_construction(options: dict[str, Any], message: str) -> None:
    from blake2sign_web.starlette import SessionMiddleware

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match=message):
        SessionMiddleware(app, SECRET, **options)
