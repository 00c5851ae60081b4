"""Cookies without a session id under revocation: another engine's (migration) and ours from before it was on.

Such a cookie is checked against the user's cut-off by its own signed date, and gets a session id
derived from it, so that logging out the session it became also refuses every copy of it.
"""

from __future__ import annotations

import json
import time
from base64 import b64encode
from typing import Any

import itsdangerous
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.test import Client
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.django.revocation import log_out_everywhere
from blake2sign_web.django.sessions import DJANGO_SIGNED_COOKIES_SALT
from tests.django_sessions.conftest import signer as django_signer
from tests.redis_server import RedisServer

from .test_sessions_django import session_data, use_revocation, whoami
from .test_sessions_starlette import SECRET, Devices, build

DJANGO_COOKIE = "sessionid"


class _DatedSigner(signing.TimestampSigner):
    """Django's TimestampSigner, signing as if ``age`` seconds ago."""

    def __init__(self, age: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.age = age

    def timestamp(self) -> str:
        return signing.b62_encode(int(time.time() - self.age))


def django_signed_cookie(user: Any, age: float = 30) -> str:
    """A cookie of Django's signed_cookies engine logging ``user`` in, signed ``age`` seconds ago."""
    data = {
        "_auth_user_id": str(user.pk),
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
        "_auth_user_hash": user.get_session_auth_hash(),
    }
    dated = _DatedSigner(age, key=settings.SECRET_KEY, salt=DJANGO_SIGNED_COOKIES_SALT)
    return dated.sign_object(data, serializer=signing.JSONSerializer, compress=True)


def holding(cookie: str) -> Client:
    client = Client()
    client.cookies[DJANGO_COOKIE] = cookie
    return client


@pytest.fixture
def ada(db: Any) -> Any:
    return get_user_model().objects.create_user("ada", password="correct horse")


@pytest.fixture(params=["django-middleware", "our-middleware"])
def migrating(request: pytest.FixtureRequest, settings: Any, redis_server: RedisServer) -> RedisServer:
    if request.param == "our-middleware":
        from tests.django_sessions.conftest import OUR_MIDDLEWARE, middleware_with

        settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    settings.ROOT_URLCONF = "tests.revocation.django_urls"
    use_revocation(settings, redis_server, ACCEPT_DJANGO_SIGNED_COOKIES=True)
    return redis_server


@pytest.mark.django_db
def test_django_signed_cookie_stolen_before_migration_is_refused_after_log_out_everywhere(
    migrating: RedisServer, ada: Any
) -> None:
    stolen = django_signed_cookie(ada)
    assert whoami(holding(stolen)) == "ada"  # migration works
    log_out_everywhere(ada)
    thief = holding(stolen)
    assert whoami(thief) == "anonymous"
    assert session_data(holding(stolen)) == {}  # the whole session, not only the login (Django's hash check)


@pytest.mark.django_db
def test_django_signed_cookie_signed_after_the_cut_off_is_migrated(migrating: RedisServer, ada: Any) -> None:
    log_out_everywhere(ada)
    time.sleep(0.01)
    fresh = django_signed_cookie(ada, age=-60)  # from a server whose clock is well ahead: after any allowance
    assert whoami(holding(fresh)) == "ada"


@pytest.mark.django_db
def test_logging_out_a_migrated_django_session_ends_the_original_cookie(migrating: RedisServer, ada: Any) -> None:
    original = django_signed_cookie(ada)
    browser = holding(original)
    assert whoami(browser) == "ada"
    reissued = browser.cookies[DJANGO_COOKIE].value
    assert ":" not in reissued  # re-issued in this project's format
    assert browser.post("/logout/").content == b"out"
    assert whoami(holding(original)) == "anonymous"  # a copy of the cookie from before the migration
    assert whoami(holding(reissued)) == "anonymous"


@pytest.mark.django_db
def test_our_token_from_before_revocation_was_on_is_ended_by_logout(migrating: RedisServer, ada: Any) -> None:
    data = {
        "_auth_user_id": str(ada.pk),
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
        "_auth_user_hash": ada.get_session_auth_hash(),
    }
    old = django_signer().dumps(data)  # no session id: signed while revocation was off
    browser = holding(old)
    assert whoami(browser) == "ada"
    browser.post("/logout/")
    assert whoami(holding(old)) == "anonymous"


@pytest.mark.django_db
def test_a_migrated_cookie_of_another_user_is_not_affected(migrating: RedisServer, ada: Any) -> None:
    bob = get_user_model().objects.create_user("bob")
    log_out_everywhere(ada)
    assert whoami(holding(django_signed_cookie(bob))) == "bob"


class _DatedItsdangerous(itsdangerous.TimestampSigner):
    age = 30.0

    def get_timestamp(self) -> int:
        return int(time.time() - self.age)


def starlette_cookie(session: dict[str, Any], age: float = 30) -> str:
    """A cookie of Starlette's own SessionMiddleware, signed ``age`` seconds ago."""
    signer = _DatedItsdangerous(SECRET)
    signer.age = age
    return signer.sign(b64encode(json.dumps(session).encode())).decode()


@pytest.fixture
def starlette_devices(redis_server: RedisServer) -> Any:
    from tests.redis_server import patient_store

    with TestClient(build(patient_store(redis_server), migrate_starlette_cookies=True)) as client:
        yield Devices(client)


def test_starlette_cookie_stolen_before_migration_is_refused_after_log_out_everywhere(
    starlette_devices: Devices,
) -> None:
    stolen = starlette_cookie({"user_id": 7})
    starlette_devices.set("thief", stolen)
    starlette_devices.set("user", SerializerSigner(SECRET, purpose="starlette.sessions:session").dumps(
        {"user_id": 7}, session_id=b"\x01" * 8
    ))  # fmt: skip
    assert starlette_devices.who("thief") == "7"  # migration works (and re-issues it)
    starlette_devices.set("thief", stolen)  # the thief keeps sending the original
    assert starlette_devices.get("user", "/everywhere", keep="1").text == "everywhere"
    assert starlette_devices.who("thief") == "anonymous"
    assert starlette_devices.who("user") == "7"


def test_logging_out_a_migrated_starlette_session_ends_the_original_cookie(starlette_devices: Devices) -> None:
    original = starlette_cookie({"user_id": 7})
    starlette_devices.set("browser", original)
    assert starlette_devices.who("browser") == "7"
    assert starlette_devices.jars["browser"] != original  # re-issued in this project's format
    starlette_devices.get("browser", "/logout")
    starlette_devices.set("thief", original)
    assert starlette_devices.who("thief") == "anonymous"


def test_starlette_token_from_before_revocation_was_on_is_ended_by_logout(starlette_devices: Devices) -> None:
    old = SerializerSigner(SECRET, purpose="starlette.sessions:session").dumps({"user_id": 7})  # no session id
    starlette_devices.set("browser", old)
    assert starlette_devices.who("browser") == "7"
    starlette_devices.get("browser", "/logout")
    starlette_devices.set("thief", old)
    assert starlette_devices.who("thief") == "anonymous"
