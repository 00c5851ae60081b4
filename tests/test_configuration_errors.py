"""Every configuration error names the setting as the user's own framework spells it (issue 27, items 8 and 9).

One table of mistakes, each made in both frameworks: Starlette's ``SessionMiddleware`` (what Starlette builds at
start-up) must name its argument (``https_only=True``), Django's start-up (the real middleware stack, through
the test client) its setting (``SESSION_COOKIE_SECURE = True``), and neither the other's. A value a session
cannot hold (a datetime) names the typed option the same way: ``typed=True``, ``['TYPED'] = True``, and
``SerializerSigner(typed=True)`` for the core.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.exceptions import NotJSON
from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.revocation import RedisStore

SECRET = "configuration-errors-test-secret-0123456789abcdefghijklmnop"
OUR_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
DJANGO_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
#: Spellings of the core itself, which a user of either framework never writes.
CORE_SPELLINGS = ("the cookie's secure option", "the Secure attribute", "SerializerSigner(")


@dataclass(frozen=True)
class Mistake:
    """One mistake in both frameworks, and how each must name the fix."""

    name: str
    #: SessionMiddleware's arguments (None: the mistake cannot be made in Starlette).
    starlette: dict[str, Any] | None
    starlette_fix: str
    #: Django settings; "SESSIONS" goes into BLAKE2SIGN_WEB["SESSIONS"].
    django: dict[str, Any]
    django_fix: str


MISTAKES = [
    Mistake(
        "host-prefix-without-secure",
        {"session_cookie": "__Host-session"},
        "https_only=True",
        {"SESSION_COOKIE_NAME": "__Host-session", "SESSION_COOKIE_SECURE": False},
        "SESSION_COOKIE_SECURE = True",
    ),
    Mistake(
        "secure-prefix-without-secure",
        {"session_cookie": "__Secure-session"},
        "https_only=True",
        {"SESSION_COOKIE_NAME": "__Secure-session", "SESSION_COOKIE_SECURE": False},
        "SESSION_COOKIE_SECURE = True",
    ),
    Mistake(
        "host-prefix-with-a-path",
        {"session_cookie": "__Host-session", "https_only": True, "path": "/app"},
        "path='/'",
        {"SESSION_COOKIE_NAME": "__Host-session", "SESSION_COOKIE_PATH": "/app/"},
        'SESSION_COOKIE_PATH = "/"',
    ),
    Mistake(
        "host-prefix-with-a-domain",
        {"session_cookie": "__Host-session", "https_only": True, "domain": "example.com"},
        "domain=None",
        {"SESSION_COOKIE_NAME": "__Host-session", "SESSION_COOKIE_DOMAIN": "example.com"},
        "SESSION_COOKIE_DOMAIN = None",
    ),
    Mistake(
        "http-prefix-without-httponly",  # Starlette's cookie is always HttpOnly
        None,
        "",
        {"SESSION_COOKIE_NAME": "__Host-Http-session", "SESSION_COOKIE_HTTPONLY": False},
        "SESSION_COOKIE_HTTPONLY = True",
    ),
    Mistake(
        "samesite-none-without-secure",
        {"same_site": "none"},
        "https_only=True",
        {"SESSION_COOKIE_SAMESITE": "None", "SESSION_COOKIE_SECURE": False},
        "SESSION_COOKIE_SECURE = True",
    ),
    Mistake("short-secret", {"secret_key": "short"}, "SessionMiddleware secret_key", {"SECRET_KEY": "s"}, "SECRET_KEY"),
    Mistake(
        "zero-idle-timeout", {"idle_timeout": 0}, "idle_timeout", {"SESSIONS": {"IDLE_TIMEOUT": 0}}, "IDLE_TIMEOUT"
    ),
    Mistake(
        "compress-encrypted-without-encrypt",
        {"compress_encrypted": True},
        "encrypt=True",
        {"SESSIONS": {"COMPRESS_ENCRYPTED": True}},
        "ENCRYPT = True",
    ),
    Mistake(
        "partitioned-without-secure",
        {"partitioned": True},
        "https_only=True",
        {"SESSION_COOKIE_PARTITIONED": True, "SESSION_COOKIE_SECURE": False},
        "SESSION_COOKIE_SECURE = True",
    ),
    Mistake(
        "max-chunks-without-chunked",
        {"max_chunks": 3},
        "chunked=True",
        {"SESSIONS": {"MAX_CHUNKS": 3}},
        "CHUNKED = True",
    ),
    Mistake(
        "fallbacks-a-single-string",  # one key per character: the core's rule (Django's E009)
        {"fallback_secrets": "an-old-secret-key-0123456789"},
        "fallback_secrets",
        {"SECRET_KEY_FALLBACKS": "an-old-secret-key-0123456789"},
        "SECRET_KEY_FALLBACKS = [old_key]",
    ),
    Mistake(
        "revocation-clock-skew",
        {"revocation": "clock_skew=10**6"},
        "clock_skew",
        {"SESSIONS": {"REVOCATION_CLOCK_SKEW": 10**6}},
        "REVOCATION_CLOCK_SKEW",
    ),
]


def _starlette_error(options: dict[str, Any]) -> str:
    options = {"secret_key": SECRET, **options}
    if options.get("revocation") == "clock_skew=10**6":
        with pytest.raises((ValueError, TypeError)) as raised:
            RedisStore("redis://127.0.0.1:1", clock_skew=10**6)  # the store is an argument's value: built first
        return str(raised.value)
    with pytest.raises((ValueError, TypeError)) as raised:
        SessionMiddleware(Starlette(), **options)
    return str(raised.value)


def _django_error(changes: dict[str, Any]) -> str:
    sessions = changes.get("SESSIONS", {})
    others = {key: value for key, value in changes.items() if key != "SESSIONS"}
    middleware = [OUR_MIDDLEWARE if m == DJANGO_MIDDLEWARE else m for m in django_settings.MIDDLEWARE]
    body = json.dumps({"ops": [["__setitem__", "a", 1]]})
    with (
        override_settings(
            MIDDLEWARE=middleware,
            ROOT_URLCONF="tests.django_sessions.urls",
            BLAKE2SIGN_WEB={"SESSIONS": sessions},
            **others,
        ),
        pytest.raises(ImproperlyConfigured) as raised,
    ):
        # The real stack: the middleware checks the cookie settings when it is built, the engine the rest.
        Client().post("/ops/", body, content_type="application/json")
    return str(raised.value)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_starlette_names_its_own_argument(mistake: Mistake) -> None:
    if mistake.starlette is None:
        SessionMiddleware(Starlette(), secret_key=SECRET, session_cookie="__Host-Http-session", https_only=True)
        return  # no such mistake: the cookie is always HttpOnly, and the name works
    message = _starlette_error(mistake.starlette)
    assert mistake.starlette_fix in message
    assert mistake.django_fix not in message
    for foreign in ("SESSION_COOKIE_", "BLAKE2SIGN_WEB", "SECRET_KEY", *CORE_SPELLINGS):
        assert foreign not in message


@pytest.mark.django_db
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_django_names_its_own_setting(mistake: Mistake) -> None:
    message = _django_error(mistake.django)
    assert mistake.django_fix in message
    if mistake.starlette_fix:
        assert mistake.starlette_fix not in message
    for foreign in ("https_only", "session_cookie", "SessionMiddleware", "_timeout", "encrypt=True", *CORE_SPELLINGS):
        assert foreign not in message


# Item 9: a value a session cannot hold names the option that stores it, in the user's framework.

LAST_VISIT = datetime(2026, 11, 25, 9, 30, tzinfo=timezone.utc)


def test_starlette_names_typed_true_for_a_datetime() -> None:
    async def remember(request: Request) -> JSONResponse:
        request.session["last_visit"] = LAST_VISIT
        return JSONResponse({})

    app = Starlette(
        routes=[Route("/visit", remember, methods=["POST"])],
        middleware=[Middleware(SessionMiddleware, secret_key=SECRET)],
    )
    with pytest.raises(NotJSON) as raised:
        TestClient(app).post("/visit")
    message = str(raised.value)
    assert "value at ['last_visit'] is datetime" in message
    assert "typed=True" in message
    assert "TYPED" not in message
    assert "SerializerSigner" not in message


@pytest.mark.django_db
def test_django_names_the_typed_setting_for_a_datetime() -> None:
    with override_settings(ROOT_URLCONF="tests.django_sessions.urls"), pytest.raises(NotJSON) as raised:
        Client().get("/typed/store/")  # stores a datetime, a UUID, a Decimal... with TYPED off
    message = str(raised.value)
    assert "is datetime" in message
    assert "BLAKE2SIGN_WEB['SESSIONS']['TYPED'] = True" in message
    assert "typed=True" not in message
    assert "SerializerSigner" not in message


@pytest.mark.parametrize("typed_kind", [LAST_VISIT, {1, 2}, b"raw"])
def test_the_core_names_its_own_option(typed_kind: object) -> None:
    with pytest.raises(NotJSON, match=r"with typed tokens: SerializerSigner\(typed=True\)"):
        SerializerSigner(SECRET, purpose="test").dumps({"value": typed_kind})


def test_no_option_is_named_for_what_typed_tokens_cannot_hold_either() -> None:
    with pytest.raises(NotJSON) as raised:
        SerializerSigner(SECRET, purpose="test").dumps({"value": object()})
    assert "typed" not in str(raised.value)
    with pytest.raises(NotJSON) as raised:
        SerializerSigner(SECRET, purpose="test", typed=True).dumps({"value": object()})
    assert "typed=True" not in str(raised.value)
