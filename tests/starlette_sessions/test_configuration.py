"""Configuration errors fail when the middleware is built, naming the argument and the fix."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.datastructures import Secret

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET

APP = Starlette()


@pytest.mark.parametrize(
    ("options", "error", "pattern"),
    [
        ({"secret_key": ""}, ValueError, r"secret_key must not be empty.*token_urlsafe"),
        ({"secret_key": Secret("")}, ValueError, r"secret_key must not be empty"),
        ({"secret_key": None}, TypeError, r"secret_key must be a str or starlette.datastructures.Secret"),
        ({"secret_key": b"bytes"}, TypeError, r"secret_key must be a str"),
        ({"fallback_secrets": "one-secret"}, TypeError, r"fallback_secrets must be a list of secrets"),
        ({"fallback_secrets": [""]}, ValueError, r"fallback_secrets must not be empty"),
        ({"session_cookie": ""}, ValueError, r"session_cookie must be a cookie name"),
        ({"session_cookie": "a;b"}, ValueError, r"session_cookie must be a cookie name"),
        ({"session_cookie": "sess ion"}, ValueError, r"session_cookie must be a cookie name"),
        ({"session_cookie": "s=x"}, ValueError, r"session_cookie must be a cookie name"),
        ({"session_cookie": "s\r\nSet-Cookie: x"}, ValueError, r"session_cookie must be a cookie name"),
        ({"session_cookie": "séance"}, ValueError, r"session_cookie must be a cookie name"),
        ({"path": "/; domain=evil.example"}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"path": "/\r\nX-Injected: 1"}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"path": "/a\nb"}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"path": "/\x1b[31m"}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"path": "/\x00"}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"path": None}, ValueError, r"SessionMiddleware path must be printable ASCII"),
        ({"domain": "example.com; secure"}, ValueError, r"SessionMiddleware domain must be printable ASCII"),
        ({"domain": "example.com\r\n"}, ValueError, r"SessionMiddleware domain must be printable ASCII"),
        ({"domain": "ex\tample.com"}, ValueError, r"SessionMiddleware domain must be printable ASCII"),
        ({"same_site": "none"}, ValueError, r"same_site='none' needs https_only=True"),
        ({"same_site": "Lax "}, ValueError, r"same_site must be 'lax', 'strict' or 'none'"),
        ({"on_oversize": "truncate"}, ValueError, r"on_oversize must be 'raise' or 'log'"),
        ({"hasher": "md5"}, ValueError, r"hasher must be one of blake2b, blake2s, blake3"),
        ({"compression": "gzip"}, ValueError, r"compression must be 'zstd' or None"),
        ({"compression_threshold": -1}, ValueError, r"compression_threshold must be an int"),
        ({"secret_key": "fifteen-chars!!"}, ValueError, r"secret.*16"),
        ({"fallback_secrets": ["short"]}, ValueError, r"16"),
        ({"max_age": "14d"}, TypeError, r"max_age must be seconds"),
    ],
)
def test_bad_configuration_fails_at_construction(options: dict[str, Any], error: type, pattern: str) -> None:
    options.setdefault("secret_key", SECRET)
    with pytest.raises(error, match=pattern):
        SessionMiddleware(APP, **options)


def test_the_secret_is_not_in_the_repr_of_anything_kept() -> None:
    middleware = SessionMiddleware(APP, secret_key=SECRET)
    assert SECRET not in repr(middleware.signer)
    assert SECRET not in repr(vars(middleware))


@pytest.mark.parametrize(
    "options",
    [
        {"same_site": "none", "https_only": True},
        {"path": "/app/some path/~user"},
        {"domain": ".example.com"},
        # Every token character; a __Host- name needs Secure (https_only), or browsers drop the cookie.
        {"session_cookie": "__Host-session.v2!#$%&'*+-^_`|~", "https_only": True},
    ],
)
def test_good_configuration_is_accepted(options: dict[str, Any]) -> None:
    SessionMiddleware(APP, secret_key=SECRET, **options)
