"""A value token's times and what a read of one returns, below the signers that write and read them.

Signed tokens (``SerializerSigner``) and encrypted ones (``ExtendedSerializerSigner``, ``encrypt=True``) carry
the same times (``formats.py`` has their layout): its issue, maybe its own expiry. ``check_times`` holds the
rules a read applies to them, once for both; ``LoadedToken`` is what a read tells an integration.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, Final, NamedTuple

from ..exceptions import BadSignature, SignatureExpired
from .formats import TIMESTAMP_LIMIT

Seconds = int | float | timedelta

#: Tokens issued up to this many seconds in the future (another server's clock) still load.
CLOCK_SKEW: Final = 60


class _TokenFacts(NamedTuple):
    """The four items of a LoadedToken (described there)."""

    value: Any
    issued_at: int
    expires_at: int | None
    used_fallback: bool


class LoadedToken(_TokenFacts):
    """A verified token's value with the facts an integration may need about it.

    ``value``, ``issued_at`` and ``expires_at`` (Unix seconds; None without expiry), ``used_fallback``
    (a fallback secret verified it: re-sign it with the current secret), and ``session_id``: the 8 bytes
    ``dumps(session_id=...)`` wrote, or None. ``encrypted``: the token was encrypted (``encrypt=True``).
    ``outdated``: the token is in a form this signer reads but no longer writes (an unencrypted token read
    by a signer with ``encrypt=True``). ``rewrite``: write it again even if its value did not change
    (``used_fallback`` or ``outdated``), so that the client holds it under the current secret, in the
    current form.
    """

    # Attributes, not more items, so that ``value, issued_at, expires_at, used_fallback = load_token(...)``
    # keeps working.
    session_id: bytes | None = None
    encrypted: bool = False
    outdated: bool = False

    @property
    def rewrite(self) -> bool:
        """Whether to issue the token again on this response: a fallback secret verified it, or it is outdated."""
        return self.used_fallback or self.outdated


def seconds(count: float) -> str:
    """``count`` seconds in words: "1 second", "600 seconds"."""
    return "1 second" if count == 1 else f"{count} seconds"


def check_times(now: float, issued_at: int, expires_at: int | None, limit: int | None, default_age: int | None) -> None:
    """A read's rules, before anything in the token is decoded: not issued in the future, not older than
    ``limit`` (``max_age``), not past its own expiry, or without one, not older than ``default_age``."""
    if issued_at > now + CLOCK_SKEW:
        raise BadSignature("token issued in the future")
    if limit is not None and now - issued_at > limit:
        raise SignatureExpired(f"token is older than {seconds(limit)}", expired_at=issued_at + limit)
    if expires_at is not None:
        if now >= expires_at:
            raise SignatureExpired("token has passed its expiry", expired_at=expires_at)
    elif default_age is not None and now - issued_at > default_age:
        raise SignatureExpired(f"token is older than {seconds(default_age)}", expired_at=issued_at + default_age)


def to_seconds(value: Seconds, name: str) -> int:
    """Whole seconds from a number or timedelta; ValueError for anything not positive."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value
    else:
        raise TypeError(f"{name} must be seconds (int or float) or a timedelta, not {type(value).__name__}")
    if not seconds > 0 or seconds >= TIMESTAMP_LIMIT:
        raise ValueError(f"{name} must be a positive number of seconds below 2**32; got {value!r}")
    return math.ceil(seconds)
