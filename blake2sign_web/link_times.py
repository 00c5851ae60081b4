"""The times of a signed link: when it expires and when it starts being valid, as ``sign`` writes them and
``verify_link`` reads them (``URLSigner``, ``urls.py``).

Both are Unix seconds in the link's query (``expires``, ``starts``), signed like its other parameters, at most
10 digits. ``sign`` takes an expiry as a lifetime (``expires_in``) or a time (``expires_at``), a start as a time
only (``starts``: Unix seconds or an aware datetime), and refuses a start at or after the expiry. A link is
refused from its expiry on (``SignatureExpired``), and before its start (``SignatureNotYetValid``) with the
margin tokens allow for another server's clock (``CLOCK_SKEW``): it is accepted from ``starts - CLOCK_SKEW``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Final

from .exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from .signer import is_count
from .tokens import CLOCK_SKEW, Seconds, to_seconds

#: Latest time a link can carry: ``verify`` reads at most 10 digits.
MAX_EXPIRES_AT: Final = 9_999_999_999


def unix_time(value: int | datetime, name: str) -> int:
    """``value`` (Unix seconds, or an aware datetime rounded up to the second) as Unix seconds for a link;
    TypeError or ValueError naming the keyword (``name``)."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"{name} must be an aware datetime (with tzinfo), or Unix seconds")
        value = math.ceil(value.timestamp())
    elif not is_count(value):
        raise TypeError(f"{name} must be Unix seconds (an int) or an aware datetime; got {value!r}")
    if not 0 <= value <= MAX_EXPIRES_AT:
        raise ValueError(f"{name} must be Unix seconds from 0 to {MAX_EXPIRES_AT}; got {value!r}")
    return value


def expiry(expires_in: Seconds | None, expires_at: int | datetime | None, clock: Callable[[], float]) -> int | None:
    """The link's expiry in Unix seconds, from ``expires_in`` or ``expires_at`` (at most one), or None."""
    if expires_in is not None and expires_at is not None:
        raise ValueError("pass expires_in or expires_at, not both")
    if expires_in is not None:
        return int(clock()) + to_seconds(expires_in, "expires_in")
    if expires_at is None:
        return None
    return unix_time(expires_at, "expires_at")


def start(starts: int | datetime | None, expires: int | None) -> int | None:
    """The link's start in Unix seconds, or None; ValueError for a start at or after the expiry (``expires``)."""
    if starts is None:
        return None
    starts_at = unix_time(starts, "starts")
    if expires is not None and starts_at >= expires:
        raise ValueError(
            f"starts ({starts_at}) must be before the link's expiry ({expires}): such a link would never be valid"
        )
    return starts_at


def read_time(value: str, what: str) -> int:
    """A time in a link's (signed) query; BadSignature ("malformed expiry", "malformed start") unless 1 to 10
    ASCII digits."""
    if not (value.isascii() and value.isdigit() and len(value) <= 10):
        raise BadSignature(f"malformed {what}")
    return int(value)


def verified_times(
    expires: str | None, starts: str | None, clock: Callable[[], float]
) -> tuple[int | None, int | None]:
    """The expiry and start of a link whose MAC was checked, from their text (None: the link has none), if
    ``clock()`` is within them: BadSignature if malformed, SignatureExpired, SignatureNotYetValid."""
    expires_at = None if expires is None else read_time(expires, "expiry")
    starts_at = None if starts is None else read_time(starts, "start")
    if expires_at is not None and starts_at is not None and starts_at >= expires_at:
        raise BadSignature("URL starts at or after its expiry")  # sign() never writes one
    now = clock()
    if expires_at is not None and now >= expires_at:
        raise SignatureExpired("signed URL has expired", expired_at=expires_at)
    if starts_at is not None and now < starts_at - CLOCK_SKEW:
        raise SignatureNotYetValid("signed URL is not valid yet", valid_from=starts_at)
    return expires_at, starts_at
