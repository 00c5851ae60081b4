"""A revocation store that cannot work stops start-up, in each framework's words: the wrong kind of store
(Starlette), no key prefix (each framework's own spelling of it), and a store URL that cannot be read, whose
message never shows its credentials."""

from __future__ import annotations

from typing import Any

import flask
import pytest
import quart
from django.core.cache import caches
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from starlette.applications import Starlette

from blake2sign_web.django import conf
from blake2sign_web.flask import FlaskSessions, QuartSessions
from blake2sign_web.flask import quart as quart_revocation
from blake2sign_web.flask import revocation as flask_revocation
from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import redis_stores as redis_store
from blake2sign_web.stores.base import StoreLocation, parse_store_url, redacted
from tests.redis_server import PATIENT_OPTIONS

SECRET = "a-secret-for-start-up-tests-only-0123456789"
PASSWORD = "hunter2"
NOWHERE = "redis://127.0.0.1:1/0"


# A blocking store given to Starlette: refused at start-up, not a 500 on every request with a revocable session.


@pytest.mark.parametrize(
    "blocking",
    [
        lambda: flask_revocation.RedisStore(NOWHERE, key_prefix="shop"),
        lambda: redis_store.RedisStore(NOWHERE, key_prefix="shop"),
    ],
    ids=["flask", "core"],
)
def test_starlette_refuses_a_blocking_store_naming_the_one_to_use(blocking: Any) -> None:
    words = (
        r"SessionMiddleware revocation is a blocking store .*: SessionMiddleware needs an asyncio one, "
        r"blake2sign_web\.starlette\.revocation\.RedisStore\(url, key_prefix=\.\.\.\)"
    )
    with pytest.raises(TypeError, match=words):
        SessionMiddleware(Starlette(), secret_key=SECRET, revocation=blocking())
    SessionMiddleware(Starlette(), secret_key=SECRET, revocation=RedisStore(NOWHERE, key_prefix="shop"))


# No key prefix: the fix in the framework's own spelling, never another framework's setting.


def flask_start(store: object) -> None:
    app = flask.Flask(__name__)
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": store})
    FlaskSessions(app)


def quart_start(store: object) -> None:
    app = quart.Quart(__name__)
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": store})
    QuartSessions(app)


def starlette_start(store: object) -> None:
    SessionMiddleware(Starlette(), secret_key=SECRET, revocation=store)


@pytest.mark.parametrize(
    ("start", "store", "subject"),
    [
        (flask_start, lambda: flask_revocation.RedisStore(NOWHERE), r"BLAKE2SIGN_WEB\['REVOCATION'\]"),
        (quart_start, lambda: quart_revocation.RedisStore(NOWHERE), r"BLAKE2SIGN_WEB\['REVOCATION'\]"),
        (starlette_start, lambda: RedisStore(NOWHERE), "SessionMiddleware revocation"),
    ],
    ids=["flask", "quart", "starlette"],
)
def test_a_store_without_a_key_prefix_names_its_own_argument(start: Any, store: Any, subject: str) -> None:
    with pytest.raises(ValueError, match=subject) as raised:
        start(store())
    message = str(raised.value)
    assert "needs RedisStore(..., key_prefix='<this site>'): RedisStore key_prefix must name this site" in message
    assert "also RedisStore(..., earlier_names_until=<date>)" in message  # what an upgrade from 0.1.0 also needs
    assert "REVOCATION_KEY_PREFIX" not in message
    assert "REVOCATION_EARLIER_NAMES_UNTIL" not in message


def test_django_without_a_key_prefix_names_its_settings(settings: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": NOWHERE, "OPTIONS": {}},
    }
    settings.BLAKE2SIGN_WEB = {"SESSIONS": {"REVOCATION_CACHE": "sessions"}}
    with pytest.raises(ImproperlyConfigured) as raised:
        conf.session_config()
    message = str(raised.value)
    assert 'needs REVOCATION_KEY_PREFIX = "<this site>"' in message
    assert "['REVOCATION_KEY_PREFIX'] must name this site" in message
    assert 'also REVOCATION_EARLIER_NAMES_UNTIL = "<date>"' in message
    assert "RedisStore" not in message


# Store URLs: what cannot be read is named without its credentials.

BAD_URLS = [
    f"app:{PASSWORD}@127.0.0.1:6379",  # no scheme
    f"redis+cluster://app:{PASSWORD}@",
    f"redis+cluster://app:{PASSWORD}@h:1/2",
    f"redis+cluster://app:{PASSWORD}@h:x",
    f"redis+sentinel://:{PASSWORD}@h:26379",
    f"redis+sentinel://:{PASSWORD}@h:26379/name/x",
    f"redis+cluster://:{PASSWORD}@h:1?ssl_cert_reqs=none",
    f"redis+sentinel://h:26379?sentinel_password={PASSWORD}",
    f"redis+cluster://h:1?password={PASSWORD}",
    # An unescaped "#", "?" or "/" in a password: redis-py reads what follows it as the port, and quotes it.
    "redis://:hun#ter2@127.0.0.1:6379/0",
    "redis://:hun?ter2@127.0.0.1:6379/0",
    "redis://:hun/ter2@127.0.0.1:6379/0",
]


def secret_in(text: str) -> bool:
    return PASSWORD in text or "hun" in text or "ter2" in text


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize(
    "store",
    [RedisStore, flask_revocation.RedisStore, quart_revocation.RedisStore, redis_store.RedisStore],
    ids=["starlette", "flask", "quart", "core-blocking"],
)
def test_a_store_url_that_cannot_be_read_is_named_without_its_credentials(url: str, store: Any) -> None:
    with pytest.raises(ValueError, match=r"\*\*\*") as raised:
        store(url, key_prefix="shop")
    assert not secret_in(str(raised.value)), str(raised.value)


@pytest.mark.parametrize("url", BAD_URLS)
def test_django_checks_name_a_store_cache_url_without_its_credentials(settings: Any, url: str) -> None:
    """Django's cache checks build every cache (caches.W003): RedisStoreCache reads its URL then, or on first use."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "records": {
            "BACKEND": "blake2sign_web.django.revocation.RedisStoreCache",
            "LOCATION": url,
            "OPTIONS": PATIENT_OPTIONS,
        },
    }
    with pytest.raises(ValueError, match=r"\*\*\*") as raised:
        checked_then_used()
    assert not secret_in(str(raised.value)), str(raised.value)


def checked_then_used() -> None:
    run_checks()
    caches["records"].get("anything")


def test_django_store_cache_with_several_urls_shows_none(settings: Any) -> None:
    urls = [f"redis://:{PASSWORD}@a:6379/0", f"redis://:{PASSWORD}@b:6379/0"]
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "records": {"BACKEND": "blake2sign_web.django.revocation.RedisStoreCache", "LOCATION": urls},
    }
    with pytest.raises(ImproperlyConfigured, match="LOCATION is one URL") as raised:
        run_checks()
    assert PASSWORD not in str(raised.value)


@pytest.mark.parametrize(
    "url",
    [
        f"redis+sentinel://app:{PASSWORD}@s1,s2/mymaster/3?sentinel_password={PASSWORD}",
        f"redis://:{PASSWORD}@127.0.0.1:6379/0",
        f"rediss+cluster://app:{PASSWORD}@node-1:6380/",
    ],
)
def test_a_store_location_shows_no_credential(url: str) -> None:
    location = parse_store_url(url)
    assert PASSWORD not in repr(location)
    assert PASSWORD not in str(location)
    assert location == parse_store_url(url)  # the URL itself is kept, for redis-py


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://app:pw@127.0.0.1:6379/0", "redis://***@127.0.0.1:6379/0"),
        ("unix://:pw@/run/redis.sock?db=1&password=pw", "unix://***@/run/redis.sock?db=1&password=***"),
        ("redis+sentinel://s1,s2/m?sentinel_password=pw", "redis+sentinel://s1,s2/m?sentinel_password=***"),
    ],
)
def test_redacted(url: str, shown: str) -> None:
    assert redacted(url) == shown
    assert repr(StoreLocation("single", url)).count("pw") == 0
