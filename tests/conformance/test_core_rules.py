"""The rules both adapters take from the session core, at their boundaries (no clock: ``now`` is given)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from blake2sign_web.expiry import EXPIRY_LIMIT, check_expiry
from blake2sign_web.timeouts import absolute_reached


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
