"""blake2sign_web.sessions.expiry: idle and absolute timeouts, decided in the core from its clock for both adapters."""

from __future__ import annotations

import time

import pytest

from blake2sign_web import SerializerSigner, SignatureExpired
from blake2sign_web.sessions.expiry import (
    REFRESH,
    TIMED_OUT,
    VALID,
    SessionTimedOut,
    check_timeouts,
    idle_past,
    read_timeouts,
    session_start,
)

NAMES = {"idle_name": "IDLE", "absolute_name": "ABSOLUTE"}


def ago(seconds: int) -> int:
    return int(time.time()) - seconds


def test_check_timeouts() -> None:
    """Django's: past means more than the timeout; the message names the framework's setting."""
    assert check_timeouts(ago(10), ago(10), 100, 1000, **NAMES) is False
    assert check_timeouts(ago(30), ago(30), 100, 1000, **NAMES) is True  # past a quarter of IDLE: re-issue
    assert check_timeouts(ago(30), ago(30), None, None, **NAMES) is False
    issued = ago(200)
    with pytest.raises(SessionTimedOut, match=r"IDLE \(100 seconds\)") as idle:
        check_timeouts(issued, issued, 100, 1000, **NAMES)
    assert idle.value.expired_at == issued + 100
    with pytest.raises(SessionTimedOut, match=r"ABSOLUTE \(1000 seconds\)"):
        check_timeouts(ago(10), ago(2000), 100, 1000, **NAMES)
    assert issubclass(SessionTimedOut, SignatureExpired)


def test_read_timeouts() -> None:
    """Starlette's: the absolute timeout is reached at its second; a refresh is due past ``refresh_after``."""
    assert read_timeouts(ago(10), ago(10), 1000, 25.0) == VALID
    assert read_timeouts(ago(30), ago(30), 1000, 25.0) == REFRESH
    assert read_timeouts(ago(30), ago(2000), 1000, 25.0) == TIMED_OUT
    assert read_timeouts(ago(30), ago(30), None, None) == VALID
    assert read_timeouts(None, None, 1000, 25.0) == VALID  # no token, no start: nothing to decide


def test_idle_past_and_session_start() -> None:
    assert idle_past(ago(200), 100)
    assert not idle_past(ago(10), 100)
    assert not idle_past(ago(10**6), None)
    assert session_start(12345) == 12345
    assert abs(session_start(None) - time.time()) < 2


def test_default_age_bounds_only_a_token_without_its_own_expiry() -> None:
    """``load_token(default_age=)``: Django's SESSION_COOKIE_AGE, checked in the core with the signer's clock."""
    writer = SerializerSigner("a long random secret", purpose="timeouts", clock=lambda: time.time() - 500)
    reader = SerializerSigner("a long random secret", purpose="timeouts")
    plain, own = writer.dumps({"a": 1}), writer.dumps({"a": 1}, expires_in=1000)
    assert reader.load_token(plain, default_age=600).value == {"a": 1}
    with pytest.raises(SignatureExpired) as expired:
        reader.load_token(plain, default_age=100)
    assert expired.value.expired_at == reader.load_token(plain).issued_at + 100
    assert reader.load_token(own, default_age=100).expires_at is not None  # its own expiry decides
    typed = SerializerSigner("a long random secret", purpose="timeouts", typed=True, clock=lambda: time.time() - 500)
    with pytest.raises(SignatureExpired):
        SerializerSigner("a long random secret", purpose="timeouts", typed=True).load_token(
            typed.dumps({"a": 1}), default_age=100
        )
