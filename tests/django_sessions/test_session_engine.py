"""Expiry, size, keys, bad cookies and migration, through the real middleware stack."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import secrets
import statistics
import time
from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.backends import signed_cookies
from django.contrib.sessions.serializers import JSONSerializer
from django.test import Client, override_settings

from blake2sign_web import SerializerSigner, signer_cache_info
from blake2sign_web.django import conf
from blake2sign_web.django.sessions import SessionStore, SessionTooLarge

from .conftest import SUSPICIOUS, cookie, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
HOUR = 3600


def past(seconds: int) -> Any:
    """A clock that reads ``seconds`` ago, for tokens issued in the past."""
    return lambda: time.time() - seconds


def send(client: Client, token: str) -> None:
    client.cookies[settings.SESSION_COOKIE_NAME] = token


# Expiry -----------------------------------------------------------------------


def test_global_policy_max_age_cookie_and_no_expiry_in_the_token(client: Client, session_middleware: str) -> None:
    response = run(client, ["__setitem__", "a", 1])
    morsel = cookie(response)
    assert morsel["max-age"] == settings.SESSION_COOKIE_AGE
    assert morsel["expires"]
    assert signer().load_token(morsel.value).expires_at is None


@override_settings(SESSION_COOKIE_AGE=HOUR)
def test_session_cookie_age_is_enforced_from_the_signed_issue_time(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    send(client, signer(clock=past(HOUR - 60)).dumps({"a": 1}))
    assert session_of(run(client)) == {"a": 1}
    send(client, signer(clock=past(HOUR + 60)).dumps({"a": 1}))
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert session_of(run(client)) == {}
    assert "expired" in caplog.text


@pytest.mark.parametrize(
    ("expiry", "seconds"),
    [(600, 600), ({"timedelta": 900}, 900), ({"datetime_in": 1200}, 1200)],
    ids=["seconds", "timedelta", "datetime"],
)
def test_set_expiry_is_signed_into_the_token(
    client: Client, session_middleware: str, expiry: Any, seconds: int
) -> None:
    response = run(client, ["__setitem__", "a", 1], ["set_expiry", expiry])
    morsel = cookie(response)
    assert abs(morsel["max-age"] - seconds) <= 2
    expires_at = signer().load_token(morsel.value).expires_at
    assert expires_at is not None
    assert abs(expires_at - (time.time() + seconds)) <= 2
    assert session_of(run(client))["a"] == 1


def test_set_expiry_is_enforced_by_the_server(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    send(client, signer(clock=past(700)).dumps({"a": 1, "_session_expiry": 600}, expires_in=600))
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert session_of(run(client)) == {}
    assert "expired" in caplog.text


@override_settings(SESSION_COOKIE_AGE=HOUR)
def test_a_longer_set_expiry_outlives_session_cookie_age(client: Client) -> None:
    month = 30 * 24 * HOUR
    send(client, signer(clock=past(2 * HOUR)).dumps({"a": 1, "_session_expiry": month}, expires_in=month))
    assert session_of(run(client))["a"] == 1


def test_set_expiry_zero_is_a_browser_close_cookie(client: Client, session_middleware: str) -> None:
    response = run(client, ["__setitem__", "a", 1], ["set_expiry", 0], ["get_expire_at_browser_close"])
    morsel = cookie(response)
    assert json.loads(response.content)["results"][-1] is True
    assert morsel["max-age"] == ""
    assert morsel["expires"] == ""
    assert signer().load_token(morsel.value).expires_at is None  # SESSION_COOKIE_AGE still holds server-side


def test_set_expiry_none_returns_to_the_global_policy(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1], ["set_expiry", 60])
    response = run(client, ["set_expiry", None])
    assert cookie(response)["max-age"] == settings.SESSION_COOKIE_AGE
    assert signer().load_token(cookie(response).value).expires_at is None


@override_settings(SESSION_EXPIRE_AT_BROWSER_CLOSE=True)
def test_expire_at_browser_close_setting(client: Client, session_middleware: str) -> None:
    morsel = cookie(run(client, ["__setitem__", "a", 1]))
    assert morsel["max-age"] == ""
    assert morsel["expires"] == ""


@override_settings(SESSION_SAVE_EVERY_REQUEST=True)
def test_save_every_request_refreshes_the_cookie(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", 1])
    response = run(client, ["get", "a"])
    assert cookie(response) is not None
    assert signer().loads(cookie(response).value) == {"a": 1}


def test_a_past_expiry_sends_a_cookie_the_browser_drops(client: Client, session_middleware: str) -> None:
    response = run(client, ["__setitem__", "a", 1], ["set_expiry", {"datetime_in": -60}])
    assert cookie(response)["max-age"] <= 0


# Size -------------------------------------------------------------------------


def login_session(rng: random.Random) -> dict[str, str]:
    """What django.contrib.auth.login() stores: the user id, backend and a SHA-256 HMAC hex."""
    return {
        "_auth_user_id": str(rng.randrange(10 ** rng.randint(1, 9))),
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
        "_auth_user_hash": hashlib.sha256(rng.randbytes(16)).hexdigest(),
    }


def token_lengths(data: dict[str, Any]) -> tuple[int, int]:
    ours, theirs = SessionStore(), signed_cookies.SessionStore()
    ours.update(data)
    theirs.update(data)
    ours.save()
    theirs.save()
    assert ours.session_key is not None
    assert theirs.session_key is not None
    return len(ours.session_key), len(theirs.session_key)


def test_a_logged_in_session_is_about_half_of_djangos_signed_cookie() -> None:
    rng = random.Random(20261121)
    data = login_session(rng) | {"_auth_user_hash": "3f1c7a9e0b5d2c8f6a4e1b7d9c3f5a2e8b6d4c1a7f9e3b5d2c8a6f4e1b7d9c3f"}
    ours, theirs = token_lengths(data)
    assert ours <= theirs * 0.55
    # Over many users (ids of 1 to 9 digits, random hashes): format 2's session dictionary and
    # 16-byte tag make every cookie at most 55% of signed_cookies' (measured: 52% at most), 50% on average.
    ratios = [ours / theirs for ours, theirs in map(token_lengths, (login_session(rng) for _ in range(500)))]
    assert max(ratios) <= 0.55
    assert statistics.mean(ratios) <= 0.50


def big_value(size: int) -> str:
    return secrets.token_urlsafe(size)[:size]  # incompressible


def test_an_oversized_session_raises_by_default(client: Client, session_middleware: str) -> None:
    with pytest.raises(SessionTooLarge, match=r"would take \d+ bytes, over the limit of 4096 bytes"):
        run(client, ["__setitem__", "blob", big_value(3900)])


def test_a_session_just_under_the_limit_goes_out(client: Client, session_middleware: str) -> None:
    response = run(client, ["__setitem__", "blob", big_value(2900)])
    line = cookie(response).OutputString()
    assert len(line) <= 4096
    assert session_of(run(client))["blob"]


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"OVERSIZE": "log"}})
def test_oversize_log_policy_keeps_the_previous_cookie(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    previous = cookie(run(client, ["__setitem__", "a", 1])).value
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.django.sessions"):
        response = run(client, ["__setitem__", "blob", big_value(3900)])
    assert "over the limit of 4096 bytes" in caplog.text
    if cookie(response) is not None:  # Django's middleware always writes: it re-sends the previous value
        assert cookie(response).value == previous
    else:
        assert session_middleware.startswith("blake2sign_web")
    assert session_of(run(client)) == {"a": 1}


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"COOKIE_SIZE_LIMIT": 1024}})
def test_the_limit_is_configurable(client: Client) -> None:
    with pytest.raises(SessionTooLarge, match="over the limit of 1024 bytes"):
        run(client, ["__setitem__", "blob", big_value(1000)])


# Keys and the signer cache ------------------------------------------------------


def test_no_signer_is_built_per_request(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "n", 0])
    before = signer_cache_info().constructed
    for n in range(1, 51):
        assert session_of(run(client, ["__setitem__", "n", n]))["n"] == n
    assert signer_cache_info().constructed == before


def test_a_new_secret_key_takes_effect_and_rejects_old_cookies(client: Client) -> None:
    run(client, ["__setitem__", "a", 1])
    with override_settings(SECRET_KEY="another-secret-key-" + "x" * 40):
        assert session_of(run(client)) == {}


def test_fallback_keys_verify_and_the_session_is_re_signed(client: Client, session_middleware: str) -> None:
    old = run(client, ["__setitem__", "a", 1])
    old_key = settings.SECRET_KEY
    with override_settings(SECRET_KEY="rotated-secret-key-" + "y" * 40, SECRET_KEY_FALLBACKS=[old_key]):
        response = run(client, ["get", "a"])
        assert json.loads(response.content)["results"] == [1]
        new_token = cookie(response).value
        assert new_token != cookie(old).value
        current_only = SerializerSigner(settings.SECRET_KEY, purpose=conf.PURPOSE)
        assert current_only.loads(new_token) == {"a": 1}


# Bad cookies ------------------------------------------------------------------


def bad_cookies() -> dict[str, str]:
    good = signer().dumps({"a": 1})
    tampered = good[:5] + ("A" if good[5] != "A" else "B") + good[6:]
    theirs = signed_cookies.SessionStore()
    theirs["a"] = 1
    theirs.save()
    assert theirs.session_key is not None
    return {
        "garbage": "not-a-session-cookie-at-all",
        "tampered": tampered,
        "expired": signer(clock=past(settings.SESSION_COOKIE_AGE + 60)).dumps({"a": 1}),
        "django-format": theirs.session_key,
        "db-session-key": "k" * 32,
        "oversized": good + "A" * 5000,
        "other-purpose": SerializerSigner(settings.SECRET_KEY, purpose="something-else").dumps({"a": 1}),
        "not-a-dict": signer().dumps([1, 2, 3]),
        "future": signer(clock=past(-HOUR)).dumps({"a": 1}),
    }


BAD_KINDS = [
    "garbage",
    "tampered",
    "expired",
    "django-format",
    "db-session-key",
    "oversized",
    "other-purpose",
    "not-a-dict",
    "future",
]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_bad_cookie_gives_an_empty_session_and_a_warning(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    token = bad_cookies()[kind]
    send(client, token)
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = run(client, ["get", "a"])
    assert session_of(response) == {}
    warnings = [r for r in caplog.records if r.name == SUSPICIOUS]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    logged = caplog.text
    assert token not in logged
    assert token[:20] not in logged
    assert settings.SECRET_KEY not in logged
    assert cookie(response).value == ""
    assert cookie(response)["max-age"] == 0


# Migration from Django's signed_cookies ---------------------------------------


def django_signed_cookie(data: dict[str, Any]) -> str:
    theirs = signed_cookies.SessionStore()
    theirs.update(data)
    theirs.save()
    assert theirs.session_key is not None
    return theirs.session_key


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"ACCEPT_DJANGO_SIGNED_COOKIES": True}})
def test_django_signed_cookies_are_accepted_and_re_issued(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    send(client, django_signed_cookie({"_auth_user_id": "7", "a": [1, 2]}))
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = run(client, ["get", "a"])
    assert json.loads(response.content)["results"] == [[1, 2]]
    assert not caplog.records
    assert signer().loads(cookie(response).value) == {"_auth_user_id": "7", "a": [1, 2]}


@override_settings(SESSION_COOKIE_AGE=HOUR, BLAKE2SIGN_WEB={"SESSIONS": {"ACCEPT_DJANGO_SIGNED_COOKIES": True}})
def test_migration_still_refuses_bad_django_cookies(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    token = django_signed_cookie({"a": 1})
    send(client, token[:-3] + ("xyz" if not token.endswith("xyz") else "abc"))
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert session_of(run(client)) == {}
    assert caplog.records
    with override_settings(SECRET_KEY="another-secret-key-" + "z" * 40):
        send(client, token)
        assert session_of(run(client)) == {}


def test_sessionbase_serializer_is_resolved_when_asked_for() -> None:
    """SessionBase resolves SESSION_SERIALIZER in __init__, on every request; this engine when something asks."""
    store = SessionStore()
    assert "serializer" not in vars(store)
    assert store.serializer is JSONSerializer
    assert store.decode(store.encode({"a": 1})) == {"a": 1}  # SessionBase's encode() and decode() use it
    with override_settings(SESSION_SERIALIZER="tests.django_sessions.test_session_engine.UpperSerializer"):
        assert SessionStore().serializer is UpperSerializer


class UpperSerializer(JSONSerializer):
    """A SESSION_SERIALIZER of the project's own."""


def test_session_cookie_age_follows_the_setting() -> None:
    assert SessionStore().get_session_cookie_age() == settings.SESSION_COOKIE_AGE
    with override_settings(SESSION_COOKIE_AGE=123):
        assert SessionStore().get_session_cookie_age() == 123
        assert SessionStore().get_expiry_age() == 123
