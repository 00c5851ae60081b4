"""Django sessions with revocation in a real redis-server (Django's RedisCache): logout, everywhere, outages."""

from __future__ import annotations

import json
import logging
import secrets
import time
from typing import Any

import django
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.checks import run_checks
from django.test import Client

from blake2sign_web.django import conf
from blake2sign_web.django.revocation import StoreUnavailable, log_out_everywhere
from blake2sign_web.stores import revocation
from tests.django_sessions.conftest import OUR_MIDDLEWARE, middleware_with, signer
from tests.redis_server import FROZEN_OPTIONS, PATIENT_OPTIONS, RedisServer

pytestmark = [pytest.mark.urls("tests.revocation.django_urls"), pytest.mark.django_db]


def use_revocation(settings: Any, server: RedisServer, *, options: Any = PATIENT_OPTIONS, **sessions: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": server.url,
            "OPTIONS": options,
        },
    }
    settings.BLAKE2SIGN_WEB = {
        "SESSIONS": {"REVOCATION_CACHE": "sessions", "REVOCATION_KEY_PREFIX": "tests", **sessions}
    }


@pytest.fixture(params=["django-middleware", "our-middleware"])
def revocable(request: pytest.FixtureRequest, settings: Any, redis_server: RedisServer) -> RedisServer:
    if request.param == "our-middleware":
        settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    use_revocation(settings, redis_server)
    return redis_server


@pytest.fixture
def user() -> Any:
    return get_user_model().objects.create_user("ada", password="correct horse")


def log_in(username: str = "ada") -> Client:
    client = Client()
    assert client.post("/login/", {"username": username}).content == b"in"
    return client


def copy_of(client: Client) -> Client:
    """Another browser holding a copy of ``client``'s session cookie (a stolen cookie)."""
    thief = Client()
    thief.cookies[settings.SESSION_COOKIE_NAME] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return thief


def whoami(client: Client) -> str:
    return client.get("/whoami/").content.decode()


def session_data(client: Client) -> dict[str, Any]:
    """The session as a view reads it, without going through django.contrib.auth."""
    response = client.post("/ops/", json.dumps({"ops": []}), content_type="application/json")
    return json.loads(response.content)["session"]  # type: ignore[no-any-return]


def old_cookie(client: Client, user: Any, age: float = 30, **extra: Any) -> None:
    """Give ``client`` a real session cookie of ``user`` signed ``age`` seconds ago, with a session id."""
    data = {
        "_auth_user_id": str(user.pk),
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
        "_auth_user_hash": user.get_session_auth_hash(),
        **extra,
    }
    token = signer(clock=lambda: time.time() - age).dumps(data, session_id=secrets.token_bytes(8))
    client.cookies[settings.SESSION_COOKIE_NAME] = token


def test_logout_ends_a_copied_cookie_everywhere(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    thief = copy_of(browser)
    assert whoami(thief) == "ada"
    assert browser.post("/logout/").content == b"out"
    assert whoami(thief) == "anonymous"
    assert whoami(browser) == "anonymous"


def test_without_revocation_a_copied_cookie_outlives_logout(settings: Any, user: Any) -> None:
    """The weakness this feature removes, shown on the stateless default (and its tokens carry no session id)."""
    settings.ROOT_URLCONF = "tests.revocation.django_urls"
    browser = log_in()
    thief = copy_of(browser)
    browser.post("/logout/")
    assert whoami(thief) == "ada"
    loaded = conf.session_config().signer.load_token(thief.cookies[settings.SESSION_COOKIE_NAME].value)
    assert loaded.session_id is None


def test_revoked_cookie_is_deleted(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    thief = copy_of(browser)
    browser.post("/logout/")
    response = thief.get("/whoami/")
    assert response.cookies[settings.SESSION_COOKIE_NAME].value == ""  # deleted


def test_session_id_survives_resaves_and_changes_at_login(revocable: RedisServer, user: Any) -> None:
    client = Client()
    client.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", 1]]}), content_type="application/json")
    read = conf.session_config().signer.load_token
    anonymous = read(client.cookies[settings.SESSION_COOKIE_NAME].value).session_id
    client.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", 2]]}), content_type="application/json")
    assert read(client.cookies[settings.SESSION_COOKIE_NAME].value).session_id == anonymous
    assert anonymous is not None
    client.post("/login/", {"username": "ada"})
    assert read(client.cookies[settings.SESSION_COOKIE_NAME].value).session_id not in (None, anonymous)


def test_login_revokes_the_anonymous_session_it_replaces(revocable: RedisServer, user: Any) -> None:
    client = Client()
    client.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", 1]]}), content_type="application/json")
    before_login = copy_of(client)
    client.post("/login/", {"username": "ada"})
    assert session_data(before_login) == {}


def test_log_out_everywhere(revocable: RedisServer, user: Any) -> None:
    phone, laptop = Client(), Client()
    old_cookie(phone, user)
    old_cookie(laptop, user, age=100)
    other_user = get_user_model().objects.create_user("bob")
    bob = Client()
    old_cookie(bob, other_user)
    assert [whoami(phone), whoami(laptop), whoami(bob)] == ["ada", "ada", "bob"]
    log_out_everywhere(user)
    assert [whoami(phone), whoami(laptop), whoami(bob)] == ["anonymous", "anonymous", "bob"]
    later = log_in()  # a login after it
    assert [whoami(later), whoami(later)] == ["ada", "ada"]  # not affected


def test_log_out_everywhere_is_exact_whatever_the_clocks(revocable: RedisServer, user: Any) -> None:
    """No clock decides: a session dated after the cut-off by a clock ahead of ours is refused, and a login right
    after "log out everywhere" (a password change by an administrator, changepassword) sticks at once."""
    browser = log_in()
    ahead = Client()  # a session signed by a server whose clock runs a minute ahead
    old_cookie(ahead, user, age=-60)
    log_out_everywhere(user)
    assert [whoami(browser), whoami(ahead)] == ["anonymous", "anonymous"]
    again = log_in()
    assert [whoami(again), whoami(again), whoami(again)] == ["ada", "ada", "ada"]  # was anonymous for ~5 s
    log_out_everywhere(user)  # and a second time ends that one too, however it was re-signed
    assert whoami(again) == "anonymous"


def test_a_login_during_log_out_everywhere_sticks_with_its_generation(revocable: RedisServer, user: Any) -> None:
    """The generation is read when the login's session is first signed; re-signing keeps it."""
    log_out_everywhere(user)
    browser = log_in()
    token = browser.cookies[settings.SESSION_COOKIE_NAME].value
    data = conf.session_config().signer.loads(token)
    cache = caches["sessions"]
    record = cache.get(revocation.user_key(str(user.pk), "tests"))
    assert record.startswith("g:" + data[revocation.GENERATION_KEY] + ":")
    assert revocation.GENERATION_KEY not in session_data(browser)  # the engine's own key: never the view's


def test_log_out_everywhere_record_lives_as_long_as_a_session(revocable: RedisServer, user: Any) -> None:
    log_out_everywhere(user)
    cache = caches["sessions"]
    key = cache.make_and_validate_key(revocation.user_key(str(user.pk), "tests"))
    ttl = cache._cache.get_client(key).ttl(key)  # type: ignore[attr-defined]
    # The last session of an earlier generation, signed now by a clock up to the skew ahead, lives
    # SESSION_COOKIE_AGE, by clocks up to RECORD_MARGIN behind.
    longest = settings.SESSION_COOKIE_AGE + revocation.DEFAULT_CLOCK_SKEW + revocation.RECORD_MARGIN
    assert longest - 5 <= ttl <= longest


def test_an_ended_session_record_outlives_the_token_by_the_clocks_margin(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    browser.post("/logout/")
    cache = caches["sessions"]
    client = cache._cache.get_client(None)  # type: ignore[attr-defined]
    (key,) = client.keys("*:sid:*")
    # Every copy of the cookie, re-signed up to now, lives SESSION_COOKIE_AGE at most: the record outlives them.
    longest = revocation.record_ttl(settings.SESSION_COOKIE_AGE, revocation.DEFAULT_CLOCK_SKEW)
    assert longest == settings.SESSION_COOKIE_AGE + revocation.DEFAULT_CLOCK_SKEW + revocation.RECORD_MARGIN
    assert longest - 5 <= client.ttl(key) <= longest


def test_password_change_logs_out_everywhere_but_keeps_this_session(revocable: RedisServer, user: Any) -> None:
    other_device = Client()
    old_cookie(other_device, user, cart=3)
    browser = Client()
    old_cookie(browser, user)
    assert session_data(other_device)["cart"] == 3
    assert browser.post("/password/", {"password": "new horse battery"}).content == b"changed"
    assert whoami(browser) == "ada"  # update_session_auth_hash re-signed it after the cut-off
    # The whole session is gone, not only the login (Django's own hash check would only log it out).
    assert session_data(other_device) == {}


def test_a_second_login_keeps_the_session_and_one_after_a_password_change_starts_a_new_one(
    revocable: RedisServer, user: Any
) -> None:
    """Django's LoginTest.test_session_key_flushed_on_login_after_password_change, by what the session holds and
    which cookies still work rather than by the cookie's text (signed again at each login, in its own second)."""
    browser = log_in()
    browser.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", 3]]}), content_type="application/json")
    before = copy_of(browser)
    log_in_again = browser.post("/login/", {"username": "ada"})
    assert log_in_again.content == b"in"
    assert session_data(browser)["cart"] == 3  # not flushed: the same session
    assert session_data(before)["cart"] == 3  # and its earlier cookie is still that session's
    user.set_password("new horse battery")
    user.save()
    assert browser.post("/login/", {"username": "ada"}).content == b"in"
    assert "cart" not in session_data(browser)  # flushed: a new session
    assert whoami(browser) == "ada"
    assert session_data(before) == {}  # the old session ended with the flush


@pytest.mark.parametrize(
    "path",
    [
        "/everywhere/",
        pytest.param(
            "/aeverywhere/",
            marks=pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no request.auser()"),
        ),
    ],
)
def test_log_out_my_other_devices_keeps_this_one(revocable: RedisServer, user: Any, path: str) -> None:
    browser = log_in()
    copy = copy_of(browser)
    other_device = Client()
    old_cookie(other_device, user)
    assert browser.post(path).content == b"everywhere"
    assert whoami(browser) == "ada"
    assert [whoami(copy), whoami(other_device)] == ["anonymous", "anonymous"]


def test_password_reset_that_logs_the_user_in_keeps_that_session(revocable: RedisServer, user: Any) -> None:
    """PasswordResetConfirmView(post_reset_login=True): the cut-off, then login() in the same request."""
    other_device = Client()
    old_cookie(other_device, user)
    browser = Client()
    assert browser.post("/reset/", {"username": "ada", "password": "new horse battery"}).content == b"reset"
    assert whoami(browser) == "ada"  # the anonymous session of the reset was kept, and became the login
    assert session_data(other_device) == {}


def test_an_administrator_setting_a_password_keeps_only_the_administrators_session(
    revocable: RedisServer, user: Any
) -> None:
    admin = get_user_model().objects.create_user("root")
    admin_browser = log_in("root")
    users_browser = Client()
    old_cookie(users_browser, user)
    before = admin_browser.cookies[settings.SESSION_COOKIE_NAME].value
    response = admin_browser.post("/set-password/", {"username": "ada", "password": "new horse battery"})
    assert response.content == b"set"
    assert settings.SESSION_COOKIE_NAME not in response.cookies  # the administrator's session is left alone
    assert admin_browser.cookies[settings.SESSION_COOKIE_NAME].value == before
    assert whoami(admin_browser) == admin.username
    assert session_data(users_browser) == {}


def test_log_out_everywhere_outside_a_request_keeps_no_session(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    from django.core.signals import request_finished

    request_finished.send(sender=None)  # as a management command or a task runs: no request being served
    log_out_everywhere(user)
    assert whoami(browser) == "anonymous"


def test_a_record_not_written_by_us_refuses_the_users_sessions(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    cache = caches["sessions"]
    cache.set(revocation.user_key(str(user.pk), "tests"), "not a cut-off")
    assert whoami(browser) == "anonymous"


def test_one_round_trip_per_request(revocable: RedisServer, user: Any) -> None:
    browser = log_in()
    assert whoami(browser) == "ada"
    revocable.command("CONFIG", "RESETSTAT")
    assert whoami(browser) == "ada"
    stats = revocable.command("INFO", "commandstats").decode()
    calls = {line.split(":")[0].split("|")[0]: line for line in stats.splitlines() if line.startswith("cmdstat_")}
    assert set(calls) <= {"cmdstat_mget", "cmdstat_config", "cmdstat_info"}
    assert "calls=1," in calls["cmdstat_mget"]


def test_a_bad_cookie_costs_no_round_trip(revocable: RedisServer, user: Any) -> None:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = "not-a-token"
    revocable.command("CONFIG", "RESETSTAT")
    assert whoami(client) == "anonymous"
    assert "cmdstat_mget" not in revocable.command("INFO", "commandstats").decode()


def test_redis_down_reads_an_empty_session_and_keeps_the_cookie(
    settings: Any, own_redis_server: RedisServer, user: Any, caplog: pytest.LogCaptureFixture
) -> None:
    use_revocation(settings, own_redis_server)
    browser = log_in()
    own_redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.revocation"):
        response = browser.get("/whoami/")
    assert response.content == b"anonymous"
    assert settings.SESSION_COOKIE_NAME not in response.cookies  # not deleted: the session comes back
    assert "Session read as empty" in caplog.text
    own_redis_server.start()
    assert whoami(browser) == "ada"


def test_hung_redis_reads_an_empty_session(settings: Any, own_redis_server: RedisServer, user: Any) -> None:
    use_revocation(settings, own_redis_server, options=FROZEN_OPTIONS)
    browser = log_in()
    own_redis_server.pause()
    try:
        frozen = whoami(browser)
    finally:
        own_redis_server.resume()
    assert frozen == "anonymous"
    assert whoami(browser) == "ada"


def test_redis_down_fails_open_when_asked(
    settings: Any, own_redis_server: RedisServer, user: Any, caplog: pytest.LogCaptureFixture
) -> None:
    use_revocation(settings, own_redis_server, REVOCATION_UNAVAILABLE="open")
    browser = log_in()
    own_redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.revocation"):
        assert whoami(browser) == "ada"
    assert "accepted unchecked" in caplog.text


def test_logout_while_redis_is_down_fails_loudly_and_still_deletes_the_cookie(
    settings: Any, own_redis_server: RedisServer, user: Any
) -> None:
    use_revocation(settings, own_redis_server)
    browser = log_in()
    own_redis_server.stop()
    browser.raise_request_exception = False
    response = browser.post("/logout/")
    assert response.status_code == 500
    assert response.cookies[settings.SESSION_COOKIE_NAME].value == ""
    with pytest.raises(StoreUnavailable):
        log_out_everywhere(user)


def test_log_out_everywhere_without_revocation_is_a_configuration_error(user: Any) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="REVOCATION_CACHE"):
        log_out_everywhere(user)


@pytest.mark.parametrize(
    ("caches", "sessions", "check_id", "message"),
    [
        (None, {"REVOCATION_CACHE": "missing"}, "blake2sign_web.E013", "REVOCATION_CACHE'] must be None or an alias"),
        ("redis", {"REVOCATION_UNAVAILABLE": "maybe"}, "blake2sign_web.E013", "REVOCATION_UNAVAILABLE'] must be"),
        ("redis", {"FORMAT": 1}, "blake2sign_web.E013", "needs FORMAT 2"),
        ("redis", {"REVOCATION_CLOCK_SKEW": -1}, "blake2sign_web.E013", "REVOCATION_CLOCK_SKEW'] must be a number"),
        ("redis", {"REVOCATION_CLOCK_SKEW": "5"}, "blake2sign_web.E013", "REVOCATION_CLOCK_SKEW'] must be a number"),
        ("redis", {"REVOCATION_KEY_PREFIX": ""}, "blake2sign_web.E013", "REVOCATION_KEY_PREFIX'] must name this site"),
        ("locmem", {}, "blake2sign_web.W005", "per process"),
        ("redis-no-timeout", {}, "blake2sign_web.W005", "socket_timeout"),
    ],
)
def test_system_checks(
    settings: Any, caches: str | None, sessions: dict[str, Any], check_id: str, message: str
) -> None:
    backends = {
        "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0",
                  "OPTIONS": PATIENT_OPTIONS},
        "redis-no-timeout": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                             "LOCATION": "redis://127.0.0.1:1/0"},
        "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }  # fmt: skip
    settings.CACHES = {"default": backends["locmem"], **({"sessions": backends[caches]} if caches else {})}
    settings.BLAKE2SIGN_WEB = {
        "SESSIONS": {"REVOCATION_CACHE": "sessions", "REVOCATION_KEY_PREFIX": "tests", **sessions}
    }
    found = [m for m in run_checks() if m.id == check_id]
    assert len(found) == 1, run_checks()
    assert message in found[0].msg


def test_cycle_key_before_any_read_keeps_the_data(revocable: RedisServer, user: Any) -> None:
    """Django's SessionTestsMixin.test_cycle_with_no_session_cache, with revocation on.

    ``update_session_auth_hash()`` and a view's own ``cycle_key()`` reach a session nothing has
    read yet: its data must survive under the new id, and the old cookie must end.
    """
    from blake2sign_web.django.sessions import SessionStore

    session = SessionStore()
    session["a"] = "b"
    session.save()
    old_key = session.session_key
    fresh = SessionStore(old_key)
    fresh.cycle_key()  # nothing read before this
    assert fresh.session_key != old_key
    assert dict(fresh.items()) == {"a": "b"}
    assert dict(SessionStore(fresh.session_key).items()) == {"a": "b"}
    assert dict(SessionStore(old_key).items()) == {}  # the old id was revoked


@pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no async session API")
def test_acycle_key_before_any_read_keeps_the_data(revocable: RedisServer) -> None:
    from asgiref.sync import async_to_sync, sync_to_async

    from blake2sign_web.django.sessions import SessionStore

    async def scenario() -> dict[str, Any]:
        session = SessionStore()
        await session.aset("a", "b")
        await session.asave()
        fresh = SessionStore(session.session_key)
        await fresh.acycle_key()
        return await sync_to_async(lambda: dict(SessionStore(fresh.session_key).items()))()

    assert async_to_sync(scenario)() == {"a": "b"}


@pytest.mark.parametrize("middleware", ["django-middleware", "our-middleware"])
@pytest.mark.parametrize("during_outage", ["untouched", "write"])
def test_a_request_while_redis_is_down_never_overwrites_the_session(
    settings: Any, own_redis_server: RedisServer, user: Any, middleware: str, during_outage: str
) -> None:
    """SESSION_SAVE_EVERY_REQUEST (or a write): the session read as empty is not signed over the client's."""
    if middleware == "our-middleware":
        settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    settings.SESSION_SAVE_EVERY_REQUEST = True
    use_revocation(settings, own_redis_server)
    browser = log_in()
    before = browser.cookies[settings.SESSION_COOKIE_NAME].value
    own_redis_server.stop()
    if during_outage == "untouched":
        response = browser.get("/untouched/")
    else:
        ops = {"ops": [["__setitem__", "cart", 1]]}
        response = browser.post("/ops/", json.dumps(ops), content_type="application/json")
    assert response.status_code == 200
    sent = response.cookies.get(settings.SESSION_COOKIE_NAME)
    assert sent is None or sent.value == before  # ours sends none; Django's sends the same token back
    assert browser.cookies[settings.SESSION_COOKIE_NAME].value == before
    own_redis_server.start()
    assert whoami(browser) == "ada"  # logged in again once Redis is back


@pytest.mark.parametrize("middleware", ["django-middleware", "our-middleware"])
def test_logging_in_while_redis_is_down_starts_a_new_session(
    settings: Any, own_redis_server: RedisServer, user: Any, middleware: str
) -> None:
    """login() (cycle_key) starts a session of its own: that one is written."""
    if middleware == "our-middleware":
        settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    use_revocation(settings, own_redis_server)
    get_user_model().objects.create_user("bob")
    browser = log_in()
    own_redis_server.stop()
    assert browser.post("/login/", {"username": "bob"}).content == b"in"
    own_redis_server.start()
    assert whoami(browser) == "bob"


def test_an_empty_key_prefix_is_fine_when_the_cache_has_its_own(settings: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "sessions": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": PATIENT_OPTIONS,
            "KEY_PREFIX": "shop",
        },
    }
    settings.BLAKE2SIGN_WEB = {"SESSIONS": {"REVOCATION_CACHE": "sessions"}}
    assert [m.id for m in run_checks() if m.id == "blake2sign_web.E013"] == []


def test_a_copy_re_signed_before_logout_never_outlives_the_record(revocable: RedisServer, user: Any) -> None:
    """Review 4: the record was kept for the presented cookie's remaining life, and a thief's copy that kept
    being re-signed ended later: once the record expired, the copy read as the victim again."""
    age = settings.SESSION_COOKIE_AGE
    victim = Client()
    old_cookie(victim, user, age=age - 100)  # 100 s left
    thief = copy_of(victim)
    ops = json.dumps({"ops": [["__setitem__", "cart", 1]]})
    thief.post("/ops/", ops, content_type="application/json")  # re-signed now: ends SESSION_COOKIE_AGE from now
    copy = conf.session_config().signer.load_token(thief.cookies[settings.SESSION_COOKIE_NAME].value)
    assert victim.post("/logout/").content == b"out"
    client = caches["sessions"]._cache.get_client(None)  # type: ignore[attr-defined]
    (key,) = client.keys("*:sid:*")
    copy_left = copy.issued_at + age - time.time()
    assert client.pttl(key) / 1000 >= copy_left + revocation.DEFAULT_CLOCK_SKEW  # was 100 + 60 s
    assert whoami(thief) == "anonymous"


def test_set_expiry_longer_than_the_cookie_age_is_refused_with_revocation(revocable: RedisServer) -> None:
    from blake2sign_web.django.sessions import SessionStore

    session = SessionStore()
    with pytest.raises(ValueError, match=r"longer than SESSION_COOKIE_AGE \(1209600 seconds\)"):
        session.set_expiry(settings.SESSION_COOKIE_AGE + 60)
    session.set_expiry(settings.SESSION_COOKIE_AGE)  # as long as a session lives: fine
