"""Record keys: no two users share one, applications sharing a Redis keep theirs apart, earlier names count during
an upgrade's window only, and a record dated in the future is ignored."""

from __future__ import annotations

import datetime
import hashlib
import logging
import secrets
import time
from functools import partial
from typing import Any

import anyio
import pytest
import redis
from django.core.cache import caches
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from blake2sign_web.django import conf
from blake2sign_web.django.revocation import log_out_everywhere
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from blake2sign_web.stores.redis_stores import RedisStore as BlockingStore
from tests.redis_server import PATIENT_OPTIONS, PATIENT_TIMEOUT, RedisServer, patient_store

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

    async def scenario(**window: Any) -> bool:
        store = patient_store(redis_server, key_prefix=prefix, **window)
        result = await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())
        await store.aclose()
        return result

    assert run(partial(scenario, earlier_names_until=TOMORROW)) is revoked
    # Outside an upgrade's window, only this application's own names are read: none of these is one.
    assert run(scenario) is False
    assert run(partial(scenario, earlier_names_until=YESTERDAY)) is False


TODAY = datetime.datetime.now(datetime.timezone.utc).date()
TOMORROW, YESTERDAY = TODAY + datetime.timedelta(days=1), TODAY - datetime.timedelta(days=1)
EARLIER_SESSION_RECORD = "blake2sign_web:sid:" + SOME_SESSION.hex()


@pytest.mark.parametrize("kind", ["asyncio", "blocking"])
def test_earlier_names_are_read_until_the_window_ends(redis_server: RedisServer, kind: str) -> None:
    """The window is read by the store's clock: through the day given (UTC), then never again."""
    redis.Redis.from_url(redis_server.url).set(EARLIER_SESSION_RECORD, "1")  # another application, no TTL
    end = datetime.datetime.combine(TOMORROW, datetime.time(), datetime.timezone.utc).timestamp()

    def revoked(now: float) -> bool:
        options: dict[str, Any] = {"key_prefix": "shop", "earlier_names_until": TODAY, "clock": lambda: now}
        if kind == "blocking":
            store = BlockingStore(redis_server.url, timeout=PATIENT_TIMEOUT, **options)
            try:
                return store.is_revoked(SOME_SESSION, None, int(now) - 30)
            finally:
                store.close()

        async def scenario() -> bool:
            store = patient_store(redis_server, **options)
            try:
                return await store.is_revoked(SOME_SESSION, None, int(now) - 30)
            finally:
                await store.aclose()

        return bool(run(scenario))

    assert [revoked(end - 1), revoked(end), revoked(end + 86400)] == [True, False, False]


@pytest.mark.parametrize("value", ["2027-13-01", "tomorrow", 1767225600, True, datetime.datetime(2027, 1, 1)])
def test_a_bad_earlier_names_window_is_refused_naming_the_argument(value: Any) -> None:
    with pytest.raises(ValueError, match=r"RedisStore earlier_names_until must be None .* or the date until which"):
        RedisStore("redis://127.0.0.1:1/0", key_prefix="shop", earlier_names_until=value)
    with pytest.raises(ValueError, match="RedisStore earlier_names_until must be None"):
        BlockingStore("redis://127.0.0.1:1/0", key_prefix="shop", earlier_names_until=value)


@pytest.mark.parametrize(
    ("value", "end"),
    [
        (datetime.date(2027, 1, 31), "2027-02-01T00:00:00+00:00"),
        ("2027-01-31", "2027-02-01T00:00:00+00:00"),
        ("2027-01-31T12:00:00+02:00", "2027-01-31T10:00:00+00:00"),
        (datetime.datetime(2027, 1, 31, 12, tzinfo=datetime.timezone.utc), "2027-01-31T12:00:00+00:00"),
        (None, None),
    ],
)
def test_the_window_ends_when_the_date_given_ends(value: Any, end: str | None) -> None:
    found = revocation.check_earlier_names_until(value, "x")
    assert found == (None if end is None else datetime.datetime.fromisoformat(end).timestamp())


FAR_FUTURE = "9999999999"


@pytest.mark.parametrize(
    ("key", "value", "user", "generation"),
    [
        ("blake2sign_web:shop:user:carol", FAR_FUTURE, "carol", ""),  # its own name, no TTL: every login refused
        ("blake2sign_web:shop:user:carol", FAR_FUTURE + ":", "carol", ""),
        ("blake2sign_web:user:carol", FAR_FUTURE, "carol", ""),  # an earlier name, during the window
        ("blake2sign_web:shop:user:carol", "g:" + "ab" * 16 + ":" + FAR_FUTURE, "carol", None),  # a migrated cookie
    ],
)
def test_a_cut_off_later_than_now_is_ignored_and_logged_without_the_key(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture, key: str, value: str, user: object, generation: Any
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.set(key, value)

    async def scenario(issued_at: int) -> bool:
        store = patient_store(redis_server, key_prefix="shop", earlier_names_until=TOMORROW)
        try:
            return await store.is_revoked(SOME_SESSION, user, issued_at, generation)
        finally:
            await store.aclose()

    with caplog.at_level(logging.WARNING, logger="blake2sign_web.revocation"):
        assert run(partial(scenario, int(time.time()))) is False  # a login now is not refused
    [logged] = [r.getMessage() for r in caplog.records if r.name == "blake2sign_web.revocation"]
    assert "ahead of this server's clock" in logged
    assert key not in logged
    assert "carol" not in logged
    # The same rule dates what is not in the future: a cut-off of now still refuses what was issued before it.
    client.set(key, value.replace(FAR_FUTURE, str(int(time.time()))))
    assert run(partial(scenario, thirty_seconds_ago())) is True


def test_a_cut_off_within_the_clock_skew_still_counts() -> None:
    """A server whose clock runs ahead, by less than clock_skew, wrote it: honoured."""
    now = 1_800_000_000.0
    check = revocation.session_check(None, 42, int(now) - 30, "", "shop", 5.0, clock=lambda: now)
    assert check is not None
    assert check.revoked([str(int(now) + 5)]) is True
    assert check.revoked([str(int(now) + 6)]) is False


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
    assert whoami(browser) == "ada"  # outside an upgrade's window: not this application's name
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="shop", REVOCATION_EARLIER_NAMES_UNTIL=YESTERDAY)
    assert whoami(browser) == "ada"
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="shop", REVOCATION_EARLIER_NAMES_UNTIL=TOMORROW)
    assert whoami(browser) == "anonymous"


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
def test_django_ignores_a_cut_off_later_than_now(settings: Any, redis_server: RedisServer) -> None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("ada")
    use_revocation(settings, redis_server, REVOCATION_KEY_PREFIX="shop")
    caches["sessions"].set(f"blake2sign_web:shop:user:{user.pk}", FAR_FUTURE, None)  # no TTL
    browser = Client()
    old_cookie(browser, user)
    assert whoami(browser) == "ada"


@pytest.mark.parametrize("value", ["31/01/2027", datetime.datetime(2027, 1, 31), 0])
def test_django_bad_earlier_names_window_is_reported_and_refused_at_start_up(settings: Any, value: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": PATIENT_OPTIONS,
        },
    }
    settings.BLAKE2SIGN_WEB = {
        "SESSIONS": {
            "REVOCATION_CACHE": "sessions",
            "REVOCATION_KEY_PREFIX": "shop",
            "REVOCATION_EARLIER_NAMES_UNTIL": value,
        }
    }
    found = [m for m in run_checks() if m.id == "blake2sign_web.E013"]
    assert [m.msg.split(" must ")[0] for m in found] == ["BLAKE2SIGN_WEB['SESSIONS']['REVOCATION_EARLIER_NAMES_UNTIL']"]
    with pytest.raises(ImproperlyConfigured, match=r"\['REVOCATION_EARLIER_NAMES_UNTIL'\] must be None"):
        conf.session_config()


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
