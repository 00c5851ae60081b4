"""The exceptions a caller handles: one for every rejected token, one more for expiry."""

from __future__ import annotations

from datetime import datetime, timezone


class BadSignature(Exception):
    """A token failed verification or could not be read; its content must not be trusted."""


class SignatureExpired(BadSignature):
    """A token verified but its age or embedded expiry has passed."""

    def __init__(self, message: str, *, expired_at: int) -> None:
        super().__init__(message)
        #: When the token stopped being valid, in seconds since the Unix epoch.
        self.expired_at = expired_at

    @property
    def expired_at_datetime(self) -> datetime:
        """`expired_at` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.expired_at, tz=timezone.utc)
