"""blake2sign_web.sessions.expiry: the one rule behind both frameworks' expiry accessors and the cookie's Max-Age."""

from __future__ import annotations

import time
from datetime import timedelta, timezone

import pytest

from blake2sign_web.sessions.expiry import (
    SessionEnd,
    WrittenEnd,
    date_after,
    longest_expiry,
    now_datetime,
    seconds_until,
    session_end,
    written_end,
)

#: A time with a fraction of a second, as time.time() gives: whole-second ages must still come back exact.
NOW = 1_795_000_000.734


def end(**options: object) -> SessionEnd:
    options.setdefault("default_age", 1000)
    options.setdefault("browser_session_default", False)
    return session_end(NOW, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "age", "max_age"),
    [
        ({}, 1000, 1000),
        ({"idle_timeout": 4}, 4, 4),
        ({"expiry": 5000}, 5000, 5000),  # an expiry of its own replaces the default age
        ({"expiry": 5000, "idle_timeout": 4}, 4, 4),
        ({"expiry": 0}, 1000, None),  # browser close: no Max-Age, the server's limit stays
        ({"expiry": 0, "idle_timeout": 4}, 4, None),
        ({"browser_session_default": True, "idle_timeout": 4}, 4, None),
        ({"browser_session_default": True, "expiry": 30}, 30, 30),
        ({"expiry_at": NOW + 99.5}, 100, 100),  # rounded up, as the token's expiry
        ({"expiry_at": NOW + 99.5, "absolute_timeout": 60}, 60, 60),
        ({"absolute_timeout": 60, "started": NOW - 50.5}, 10, 10),
        ({"expiry": -10}, -10, -10),  # ended
        ({"default_age": None, "browser_session_default": True}, None, None),
        ({"default_age": None, "browser_session_default": True, "absolute_timeout": 7}, 7, None),
    ],
)
def test_session_end(options: dict[str, object], age: int | None, max_age: int | None) -> None:
    result = end(**options)
    assert (result.age, result.max_age) == (age, max_age)
    if age is None:
        assert result.at is None
    else:
        assert result.at == pytest.approx(NOW + age, abs=1)


def test_seconds_and_a_date_together_are_refused() -> None:
    with pytest.raises(ValueError, match="expiry or expiry_at"):
        end(expiry=5, expiry_at=NOW + 5)


def test_without_now_the_core_reads_the_clock() -> None:
    """``now=None`` (what the adapters pass): the end is counted from the wall clock, in the core."""
    before = time.time()
    result = session_end(None, default_age=1000, browser_session_default=False)
    assert result.age == 1000
    assert result.at is not None
    assert before + 1000 <= result.at <= time.time() + 1000


def test_a_new_session_starts_at_its_whole_second_when_asked() -> None:
    """Starlette's accessors count an absolute timeout from the second its token will carry."""
    result = session_end(
        NOW, default_age=None, browser_session_default=True, absolute_timeout=60, start_whole_second=True
    )
    assert result.at == int(NOW) + 60
    assert session_end(NOW, default_age=None, browser_session_default=True, absolute_timeout=60).at == NOW + 60


def test_written_end() -> None:
    """What a write signs: its own expiry (set_expiry, absolute timeout), its start, the cookie's Max-Age."""
    plain = written_end(default_age=1000, browser_session_default=False)
    assert plain == WrittenEnd(None, None, 1000)
    seconds = written_end(default_age=1000, browser_session_default=False, expiry=600)
    assert seconds == WrittenEnd(600, None, 600)
    browser = written_end(default_age=1000, browser_session_default=False, expiry=0)
    assert browser == WrittenEnd(None, None, None)
    started = int(time.time()) - 50
    absolute = written_end(default_age=1000, browser_session_default=False, absolute_timeout=60, started=started)
    assert absolute is not None
    assert absolute.started == started
    assert absolute.expires_in in (9, 10)
    assert absolute.cookie_max_age == absolute.expires_in
    new = written_end(default_age=1000, browser_session_default=False, absolute_timeout=60)
    assert new is not None
    assert new.expires_in == 60
    assert new.started is not None
    assert abs(new.started - time.time()) < 2


def test_written_end_of_an_ended_session_is_none() -> None:
    past = int(time.time()) - 5
    assert written_end(default_age=1000, browser_session_default=False, expiry_at=past) is None
    assert written_end(default_age=1000, browser_session_default=False, absolute_timeout=60, started=past - 60) is None


def test_set_expiry_arithmetic() -> None:
    before = time.time()
    assert 99 <= seconds_until(time.time() + 100) <= 100
    after = date_after(timedelta(seconds=90))
    assert after.tzinfo is timezone.utc
    assert before + 90 <= after.timestamp() <= time.time() + 90
    assert now_datetime(True).tzinfo is timezone.utc
    assert now_datetime(False).tzinfo is None


def test_the_revocation_cap_is_the_default_age_only_with_revocation_on() -> None:
    assert longest_expiry(3600, True) == 3600
    assert longest_expiry(3600, False) is None
    assert longest_expiry(None, True) is None
