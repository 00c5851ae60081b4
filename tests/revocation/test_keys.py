"""Record keys: no two users share one, applications sharing a Redis keep theirs apart, earlier names still count."""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

import anyio
import pytest
import redis
from django.core.cache import caches
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from blake2sign_web import revocation
from blake2sign_web.django import conf
from blake2sign_web.django.revocation import log_out_everywhere
from blake2sign_web.starlette.revocation import RedisStore
from tests.redis_server import PATIENT_OPTIONS, RedisServer, patient_store

from .test_sessions_django import old_cookie, use_revocation, whoami

SOME_SESSION = b"\x01" * 8
NOT_PLAIN = "José Smith"  # a space and non-ASCII: hashed in its key
#: A plain id (anyone may choose it as a user name) that spells the key a hashed id had before.
SPELLED = "h" + hashlib.blake2b(NOT_PLAIN.encode(), digest_size=16).hexdigest()


def thirty_seconds_ago() -> int:
    return int(time.time()) - 30


def run(scenario: Any) -> Any:
    return anyio.run(scenario)


@pytest.mark.parametrize(("logged_out", "other"), [(SPELLED, NOT_PLAIN), (NOT_PLAIN, SPELLED)])
def test_a_plain_user_id_never_shares_a_key_with_a_hashed_one(
    redis_server: RedisServer, logged_out: str, other: str
) -> None:
    async def scenario() -> tuple[bool, bool]:
        store = patient_store(redis_server)
        await store.log_out_everywhere(logged_out, 3600)
        mine = await store.is_revoked(SOME_SESSION, logged_out, thirty_seconds_ago())
        theirs = await store.is_revoked(SOME_SESSION, other, thirty_seconds_ago())
        await store.aclose()
        return mine, theirs

    assert run(scenario) == (True, False)


def test_user_keys_are_distinct_across_ids_and_prefixes() -> None:
    ids = ["42", SPELLED, NOT_PLAIN, "~" + SPELLED[1:], "user:42", "sid:01", "a" * 65]
    prefixes = ["", "shop", "user", "sid", "once"]
    keys = [revocation.user_key(i, p) for i in ids for p in prefixes]
    keys += [revocation.session_key(SOME_SESSION, p) for p in prefixes]
    assert len(set(keys)) == len(keys)


def test_applications_with_their_own_key_prefix_keep_their_records_apart(redis_server: RedisServer) -> None:
    async def scenario() -> list[bool]:
        shop = patient_store(redis_server, key_prefix="shop")
        blog = patient_store(redis_server, key_prefix="blog", clock_skew=0)
        session = secrets.token_bytes(8)
        await shop.log_out_everywhere(42, 3600)
        await shop.revoke_session(session, 3600)
        seen = [
            await shop.is_revoked(SOME_SESSION, 42, thirty_seconds_ago()),
            await blog.is_revoked(SOME_SESSION, 42, thirty_seconds_ago()),  # the blog's user 42 is someone else
            await blog.is_revoked(session, None, thirty_seconds_ago()),
        ]
        await blog.log_out_everywhere(42, 1)  # short sessions: a record of one second
        await anyio.sleep(1.5)
        seen.append(await shop.is_revoked(SOME_SESSION, 42, thirty_seconds_ago()))  # the shop's is untouched
        await shop.aclose()
        await blog.aclose()
        return seen

    assert run(scenario) == [True, False, False, True]
    assert redis.Redis.from_url(redis_server.url).exists("blake2sign_web:shop:user:42")


@pytest.mark.parametrize(
    ("key", "value", "user", "prefix", "revoked"),
    [
        # Records of the code before key prefixes, still within their TTL after an upgrade: they count.
        ("blake2sign_web:user:" + SPELLED, "{old}", NOT_PLAIN, "", True),
        ("blake2sign_web:user:42", "{old}", 42, "shop", True),
        ("blake2sign_web:sid:" + SOME_SESSION.hex(), "1", None, "shop", True),
        # Records of releases whose prefix was optional, written before this application took one: they count
        # (else an upgrade, which now needs a prefix, would bring the sessions they ended back).
        ("blake2sign_web:user:42", "{old}:", 42, "shop", True),
        ("blake2sign_web:user:" + revocation.user_key(NOT_PLAIN).rpartition(":")[2], "{old}:", NOT_PLAIN, "shop", True),
        ("blake2sign_web:sid:" + SOME_SESSION.hex(), "ended", None, "shop", True),  # revocation.SESSION_ENDED
        # Names another user's records can have: only the format of the code that used them for this user counts.
        ("blake2sign_web:user:" + SPELLED, "{old}:", NOT_PLAIN, "", False),  # the plain user SPELLED, logged out
        ("blake2sign_web:user:" + SPELLED, "{old}:", NOT_PLAIN, "shop", False),
        ("blake2sign_web:user:42", "g:" + "ab" * 16 + ":{old}", 42, "shop", False),  # no release wrote it there
    ],
)
def test_records_under_earlier_names_count_only_in_the_formats_written_there(
    redis_server: RedisServer, key: str, value: str, user: object, prefix: str, revoked: bool
) -> None:
    redis.Redis.from_url(redis_server.url).set(key, value.format(old=int(time.time())), ex=60)

    async def scenario() -> bool:
        store = patient_store(redis_server, key_prefix=prefix)
        result = await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())
        await store.aclose()
        return result

    assert run(scenario) is revoked


@pytest.mark.parametrize("prefix", ["a:b", "with space", "é", "x" * 65, 7, None])
def test_a_bad_key_prefix_is_refused_naming_the_argument(prefix: Any) -> None:
    with pytest.raises(ValueError, match="RedisStore key_prefix must be a str of at most 64 letters"):
        RedisStore("redis://127.0.0.1:1/0", key_prefix=prefix)


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
def test_django_sites_with_their_own_key_prefix_keep_their_records_apart(
    settings: Any, redis_server: RedisServer
) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("ada")
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="shop")
    signed = Client()
    old_cookie(signed, user)
    cookie = signed.cookies[settings.SESSION_COOKIE_NAME].value
    log_out_everywhere(user)
    assert whoami(holding(cookie)) == "anonymous"
    cache = caches["sessions"]
    raw = cache._cache.get_client(None)  # type: ignore[attr-defined]
    assert raw.exists(cache.make_and_validate_key(f"blake2sign_web:shop:user:{user.pk}"))
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="blog")  # another site: its user 1 is not ada
    assert whoami(holding(cookie)) == "ada"


def holding(cookie: str) -> Client:
    from django.conf import settings

    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    return client


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
def test_django_honours_a_session_ended_under_the_earlier_name(settings: Any, redis_server: RedisServer) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("ada")
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="shop")
    browser = Client()
    session = secrets.token_bytes(8)
    old_cookie(browser, user)
    assert whoami(browser) == "ada"
    from tests.django_sessions.conftest import signer

    data = {"_auth_user_id": str(user.pk), "_auth_user_backend": "django.contrib.auth.backends.ModelBackend"}
    data["_auth_user_hash"] = user.get_session_auth_hash()
    browser.cookies[settings.SESSION_COOKIE_NAME] = signer().dumps(data, session_id=session)
    caches["sessions"].set("blake2sign_web:sid:" + session.hex(), 1, 60)  # as the code before prefixes wrote it
    assert whoami(browser) == "anonymous"


@pytest.mark.parametrize("prefix", ["a:b", 7, None])
def test_django_bad_key_prefix_is_reported_and_refused_at_start_up(settings: Any, prefix: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": PATIENT_OPTIONS,
        },
    }
    settings.BLAKE2SIGN_WEB = {"SESSIONS": {"REVOCATION_CACHE": "sessions", "REVOCATION_KEY_PREFIX": prefix}}
    found = [m for m in run_checks() if m.id == "blake2sign_web.E013"]
    assert len(found) == 1
    assert "BLAKE2SIGN_WEB['SESSIONS']['REVOCATION_KEY_PREFIX'] must be a str" in found[0].msg
    with pytest.raises(ImproperlyConfigured, match=r"\['REVOCATION_KEY_PREFIX'\] must be a str"):
        conf.session_config()
