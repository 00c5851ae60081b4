"""The rules both adapters take from the session core, at their boundaries (no clock: ``now`` is given)."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from blake2sign_web import SerializerSigner
from blake2sign_web.sessions.cookies import OversizePolicy, SessionCookie
from blake2sign_web.sessions.expiry import EXPIRY_LIMIT, absolute_reached, check_expiry
from blake2sign_web.sessions.token import (
    BAD,
    INCUMBENT_SHAPE,
    MIGRATED,
    NOT_A_SESSION,
    TIMED_OUT,
    VALID,
    SessionTokenReader,
    session_signers,
)
from tests.hasher import HASHER


def test_the_absolute_timeout_is_reached_at_its_second_in_both_frameworks() -> None:
    """Issue 28: Django's engine counted it reached past the second (``>``), Starlette's at it (``>=``)."""
    assert not absolute_reached(1_000_099.5, 1_000_000, 100)
    assert absolute_reached(1_000_100.0, 1_000_000, 100)
    assert not absolute_reached(10**9, 1_000_000, None)


@pytest.mark.parametrize(
    "value",
    [2**32, timedelta(seconds=2**32), datetime.fromtimestamp(EXPIRY_LIMIT, timezone.utc)],
    ids=["seconds", "timedelta", "datetime"],
)
def test_an_expiry_past_2106_is_refused_with_the_framework_s_way_back(value: object) -> None:
    with pytest.raises(ValueError, match=r"past 2106-02-07 06:28:15 UTC, .*or set_expiry\(None\) for max_age"):
        check_expiry(value, default="set_expiry(None) for max_age")


def test_with_revocation_an_expiry_longer_than_the_record_is_refused_naming_the_setting() -> None:
    check_expiry(600, longest=600, longest_name="SESSION_COOKIE_AGE")
    check_expiry(None, longest=600, longest_name="SESSION_COOKIE_AGE")
    with pytest.raises(ValueError, match=r"longer than SESSION_COOKIE_AGE \(600 seconds\)"):
        check_expiry(601, longest=600, longest_name="SESSION_COOKIE_AGE")


# --- The session core's reading of a cookie: every outcome named ------------------------------------------

SECRET = "core-rules-secret-0123456789abcdefghijklmnopqrstuv"


def _reader(**options: Any) -> tuple[SessionTokenReader, SerializerSigner]:
    signers = session_signers(
        SECRET,
        max_age=3600,
        idle_timeout=options.pop("idle_timeout", None),
        reader_limit=4096,
        purpose="core-rules",
        hasher=HASHER,
    )
    reader = SessionTokenReader(
        signers.reader,
        signers.unbounded,
        needs_token=True,
        idle_timeout=None,
        absolute_timeout=options.pop("absolute_timeout", None),
        incumbent=options.pop("incumbent", None),
        incumbent_shape=lambda cookie: ":" in cookie,
        **options,
    )
    return reader, signers.writer


def test_a_valid_cookie_reads_its_data_and_meta() -> None:
    reader, writer = _reader()
    read = reader.read(writer.dumps([{"user": "ada"}, {"e": 600}]))
    assert (read.outcome, read.data, read.meta, read.reissue) == (VALID, {"user": "ada"}, {"e": 600}, False)


def test_bad_not_a_session_and_incumbent_shape_are_named() -> None:
    reader, writer = _reader()
    assert reader.read("garbage").outcome == BAD
    assert reader.read(writer.dumps([1, 2, 3])).outcome == NOT_A_SESSION
    shaped = reader.read("payload:timestamp:signature")
    assert shaped.outcome == INCUMBENT_SHAPE
    assert shaped.error is not None


def test_an_incumbent_cookie_is_migrated_and_reissued() -> None:
    reader, _ = _reader(incumbent=lambda cookie: ({"user": "ada"}, 1_700_000_000))
    read = reader.read("payload:timestamp:signature")
    assert (read.outcome, read.data, read.migrated_at, read.reissue) == (MIGRATED, {"user": "ada"}, 1_700_000_000, True)


def test_past_the_absolute_timeout_is_timed_out_naming_the_setting() -> None:
    reader, writer = _reader(absolute_timeout=100, timeout_names=("IDLE_TIMEOUT", "ABSOLUTE_TIMEOUT"))
    read = reader.read(writer.dumps([{"user": "ada"}, {"c": int(time.time()) - 200}]))
    assert read.outcome == TIMED_OUT
    assert "ABSOLUTE_TIMEOUT" in str(read.error)


def test_django_s_layout_takes_the_start_out_of_the_data() -> None:
    reader, writer = _reader(started_key="_b2sw_started")
    read = reader.read(writer.dumps({"user": "ada", "_b2sw_started": 1_700_000_000}))
    assert (read.data, read.started) == ({"user": "ada"}, 1_700_000_000)


def test_the_session_cookie_is_found_as_request_cookies_finds_it() -> None:
    cookie = SessionCookie(
        "session",
        path="/",
        max_age=60,
        same_site="lax",
        secure=True,
        domain=None,
        partitioned=True,
        max_chunks=0,
        oversize=OversizePolicy("session", True, ValueError, "", "", "", logging.getLogger("test")),
    )
    assert cookie.read([(b"cookie", b'a=1; session="abc"; b=2')]) == "abc"
    assert cookie.token_in(b"session=abc") == b"abc"
    assert cookie.suffix == "; path=/; Max-Age=60; httponly; samesite=lax; secure; partitioned"
    assert cookie.deletion.startswith(b"session=null; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT; httponly")
    with pytest.raises(ValueError, match="would take"):
        cookie.set_cookie("x" * 5000, cookie.suffix)
