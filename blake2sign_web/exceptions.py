"""The exceptions a caller handles: one for every rejected token, one more for expiry; one for unwritable values."""

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


class SignatureMismatch(BadSignature):
    """No key of the signer, current or fallback, made the token's MAC: the token is not this signer's.

    Raised where ``BadSignature("signature does not match")`` always was; a reader that knows two kinds of
    keys (typed and plain tokens) tells "not these keys" from "these keys, but expired or unreadable" by it.
    """


class NotJSON(TypeError):
    """A value the token cannot hold; ``path`` leads to it from the top, as in ``['cart'][0]``.

    ``dumps`` raises it for what Python's json module refuses; typed signers (``typed=True``) for what
    neither JSON nor their tags carry (``blake2sign_web.serializer.NotJSON`` is this class).
    """

    #: What the message suggests storing instead.
    advice = "store a str, number, bool, None, list or dict (e.g. a datetime's .isoformat(), a UUID's str())"
    #: What cannot hold the value.
    holder = "JSON"

    def __init__(self, kind: str, path: str = "") -> None:
        self.kind = kind
        self.path = path
        where = f"value at {path}" if path else "value"
        super().__init__(f"{where} is {kind}, which {self.holder} cannot hold: {self.advice}")
