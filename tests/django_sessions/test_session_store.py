"""SessionStore used directly, as Django's own session tests use a store: expiry edges and load()."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

import django
import pytest
from asgiref.sync import async_to_sync
from django.contrib.sessions.backends import signed_cookies
from django.test import Client

from blake2sign_web.django.sessions import SessionStore, SessionTooLarge

from .conftest import cookie, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
needs_async_api = pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no async session API")

PAST = [-10, timedelta(seconds=-10), "datetime"]
PAST_IDS = ["seconds", "timedelta", "datetime"]


def past_expiry(kind: Any) -> Any:
    return datetime.now(timezone.utc) - timedelta(seconds=10) if kind == "datetime" else kind


# A past expiry ends the session at once -----------------------------------------


@pytest.mark.parametrize("kind", PAST, ids=PAST_IDS)
def test_a_past_expiry_empties_the_session_at_once(kind: Any) -> None:
    store = SessionStore()
    store["a"] = 1
    store.set_expiry(past_expiry(kind))
    store.save()
    assert SessionStore(store.session_key).load() == {}
    assert SessionStore(store.session_key).get("a") is None


@needs_async_api
@pytest.mark.parametrize("kind", PAST, ids=PAST_IDS)
def test_a_past_expiry_empties_the_session_at_once_async(kind: Any) -> None:
    async def scenario() -> None:
        store = SessionStore()
        await store.aset("a", 1)
        await store.aset_expiry(past_expiry(kind))
        await store.asave()
        assert await SessionStore(store.session_key).aload() == {}
        assert await SessionStore(store.session_key).aget("a") is None

    async_to_sync(scenario)()


def test_a_past_expiry_through_the_middleware_sends_a_cookie_that_holds_nothing(
    client: Client, session_middleware: str
) -> None:
    response = run(client, ["__setitem__", "a", 1], ["set_expiry", {"timedelta": -10}])
    morsel = cookie(response)
    assert morsel["max-age"] <= 0
    assert signer().loads(morsel.value) == {}
    assert session_of(run(client)) == {}


def test_a_future_expiry_still_keeps_the_data() -> None:
    store = SessionStore()
    store["a"] = 1
    store.set_expiry(timedelta(seconds=30))
    store.save()
    assert SessionStore(store.session_key)["a"] == 1


# Expiries the token cannot carry (its times end in 2106) ------------------------

BEYOND_2106 = [
    timedelta(days=200 * 365),
    datetime(2200, 1, 1, tzinfo=timezone.utc),
    datetime(2106, 2, 7, 6, 28, 16, tzinfo=timezone.utc),
    2**32,
    10**30,
]
BEYOND_IDS = ["timedelta", "datetime-2200", "datetime-first-second-too-late", "int-2**32", "int-10**30"]


@pytest.mark.parametrize("value", BEYOND_2106, ids=BEYOND_IDS)
def test_set_expiry_past_2106_is_a_clear_value_error(value: Any) -> None:
    store = SessionStore()
    store["a"] = 1
    with pytest.raises(ValueError, match=r"past 2106-02-07 06:28:15 UTC, the last second a session token") as raised:
        store.set_expiry(value)
    assert not isinstance(raised.value, SessionTooLarge)
    assert "_session_expiry" not in store  # refused before it was stored
    store.save()
    assert SessionStore(store.session_key)["a"] == 1


@needs_async_api
@pytest.mark.parametrize("value", BEYOND_2106, ids=BEYOND_IDS)
def test_aset_expiry_past_2106_is_a_clear_value_error(value: Any) -> None:
    async def scenario() -> None:
        store = SessionStore()
        with pytest.raises(ValueError, match=r"past 2106-02-07 06:28:15 UTC") as raised:
            await store.aset_expiry(value)
        assert not isinstance(raised.value, SessionTooLarge)

    async_to_sync(scenario)()


@pytest.mark.parametrize("value", [2**40, "2200-01-01T00:00:00+00:00"], ids=["seconds", "iso-datetime"])
def test_an_expiry_past_2106_stored_directly_fails_at_save(value: Any) -> None:
    store = SessionStore()
    store["_session_expiry"] = value
    with pytest.raises(ValueError, match=r"past 2106-02-07 06:28:15 UTC") as raised:
        store.save()
    assert not isinstance(raised.value, SessionTooLarge)


@needs_async_api
def test_an_expiry_past_2106_stored_directly_fails_at_asave() -> None:
    async def scenario() -> None:
        store = SessionStore()
        await store.aset("_session_expiry", 2**40)
        with pytest.raises(ValueError, match=r"past 2106-02-07 06:28:15 UTC") as raised:
            await store.asave()
        assert not isinstance(raised.value, SessionTooLarge)

    async_to_sync(scenario)()


def test_the_last_second_before_2106_is_accepted() -> None:
    store = SessionStore()
    store["a"] = 1
    store.set_expiry(datetime(2106, 2, 7, 6, 28, 15, tzinfo=timezone.utc))
    store.save()
    assert SessionStore(store.session_key)["a"] == 1


# load() without a key -----------------------------------------------------------


def test_load_without_a_key_is_an_empty_session() -> None:
    """Django's middleware tests call it after a 5xx response; signed_cookies returns {} too."""
    assert SessionStore().load() == {}
    assert signed_cookies.SessionStore().load() == {}


@needs_async_api
def test_aload_without_a_key_is_an_empty_session() -> None:
    assert async_to_sync(SessionStore().aload)() == {}


# Values neither orjson nor json can carry ---------------------------------------


@pytest.mark.parametrize("store_class", [SessionStore, signed_cookies.SessionStore], ids=["ours", "signed_cookies"])
@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes"], ids=["set", "object", "bytes"])
def test_values_json_cannot_carry_fail_at_save_as_in_djangos_engine(store_class: type, value: Any) -> None:
    store = store_class()
    store["x"] = value
    with pytest.raises(TypeError):
        store.save()


# The oversize message ------------------------------------------------------------


def test_the_oversize_message_is_one_sentence_naming_cookie_size_limit_and_remedy() -> None:
    store = SessionStore()
    store["noise"] = secrets.token_urlsafe(4000)  # incompressible
    with pytest.raises(SessionTooLarge) as raised:
        store.save()
    message = str(raised.value)
    assert message.startswith("Session cookie 'sessionid' would take ")
    assert message.endswith(
        " bytes, over the limit of 4096 bytes: store less in the session (keep large data server-side, keyed by "
        "the user), or set BLAKE2SIGN_WEB['SESSIONS']['CHUNKED'] = True to split it over several cookies."
    )
    size = int(message.split("would take ")[1].split(" bytes")[0])
    assert size > 4096
    assert message.count(". ") == 0  # one sentence
    assert "raise the limit" not in message
    assert "max_token_length" not in message


def test_json_over_max_decompressed_size_is_reported_as_such() -> None:
    store = SessionStore()
    store["blob"] = "x" * 100_000  # compresses to little, but would never be read back
    with pytest.raises(SessionTooLarge) as raised:
        store.save()
    assert str(raised.value) == (
        "Session cookie 'sessionid' holds over 65536 bytes of JSON, over the limit of 4096 bytes: "
        "store less in the session (keep large data server-side, keyed by the user)."
    )
