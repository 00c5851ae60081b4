"""The exceptions a caller handles: one for every rejected token, one more for expiry (and one for a link before its
start); one for unwritable values."""

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


class SignatureNotYetValid(BadSignature):
    """A signed link verified but its start (``URLSigner.sign(..., starts=...)``) has not come yet."""

    def __init__(self, message: str, *, valid_from: int) -> None:
        super().__init__(message)
        #: When the link becomes valid, in seconds since the Unix epoch (it is accepted ``CLOCK_SKEW`` earlier).
        self.valid_from = valid_from

    @property
    def valid_from_datetime(self) -> datetime:
        """`valid_from` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.valid_from, tz=timezone.utc)


class SignatureMismatch(BadSignature):
    """No key of the signer, current or fallback, made the token's MAC: the token is not this signer's.

    Raised where ``BadSignature("signature does not match")`` always was; a reader that knows two kinds of
    keys (typed and plain tokens) tells "not these keys" from "these keys, but expired or unreadable" by it.
    """


class NotJSON(TypeError):
    """A value the token cannot hold; ``path`` leads to it from the top, as in ``['cart'][0]``.

    ``dumps`` raises it for what Python's json module refuses; typed signers (``typed=True``) for what
    neither JSON nor their tags carry (``blake2sign_web.signing.serializer.NotJSON`` is this class).
    """

    #: What the message suggests storing instead.
    advice = "store a str, number, bool, None, list or dict (e.g. a datetime's .isoformat(), a UUID's str())"
    #: What cannot hold the value.
    holder = "JSON"

    def __init__(self, kind: str, path: str = "", typed_option: str | None = None) -> None:
        self.kind = kind
        self.path = path
        #: The option that stores such a value as itself (typed tokens), as the user's framework spells it;
        #: None when no option would (the value is no type typed tokens hold, or they are already on).
        self.typed_option = typed_option
        super().__init__(self._message())

    def name_option(self, typed_option: str) -> None:
        """Name the typed option as the caller's framework spells it (``typed=True``), if the message names one.

        The core names ``SerializerSigner(typed=True)``; an adapter that catches this error calls this with its
        own spelling before re-raising it, so that the message points at the setting the user can change.
        """
        if self.typed_option is not None:
            self.typed_option = typed_option
            self.args = (self._message(),)

    def _message(self) -> str:
        where = f"value at {self.path}" if self.path else "value"
        message = f"{where} is {self.kind}, which {self.holder} cannot hold: {self.advice}"
        if self.typed_option is not None:
            message += f"; or keep it as a {self.kind} with typed tokens: {self.typed_option}"
        return message
