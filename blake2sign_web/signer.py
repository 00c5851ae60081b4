"""Signer: sign and verify bytes, the base every token kind in blake2sign_web is built on.

Token format 1, for raw data (``Signer``)::

    >>> Signer("a long random secret", purpose="greeting").sign(b"hello")
    '0aGVsbG8<43 characters of MAC>'

``marker body mac``: a one-character marker (format and flags), the unpadded
base64url body, and the unpadded base64url of a 32-byte keyed BLAKE tag over the
ASCII text before it. The MAC is always the last 43 characters, so no separator is
spent on it. It covers the text as sent, so changing any character, including a
non-canonical re-encoding, fails verification. See docs/format.md for the full
grammar and test vectors.
"""

from __future__ import annotations

from collections.abc import Iterable
from hmac import compare_digest

import pybase64

from .encoding import ALTCHARS, b64decode, b64encode
from .exceptions import BadSignature
from .keys import DIGEST_SIZE, HASHERS, KeyedHash, fallback_secrets, keyed_hash, to_bytes

#: Characters of an encoded MAC (32 bytes of unpadded base64url).
MAC_LENGTH = (DIGEST_SIZE * 8 + 5) // 6
#: Default upper bound on a token's length, checked before any hashing: fits a cookie.
MAX_TOKEN_LENGTH = 4096


class Signer:
    """Signs bytes with ``secret``; verifies with ``secret`` or any of ``fallbacks``."""

    domain = "signer"

    def __init__(
        self,
        secret: str | bytes,
        *,
        purpose: str,
        fallbacks: Iterable[str | bytes] = (),
        hasher: str = "blake2b",
        max_token_length: int = MAX_TOKEN_LENGTH,
    ) -> None:
        if not isinstance(purpose, str) or not purpose:
            raise ValueError("purpose must be a non-empty str naming what the tokens are for, e.g. 'sessions'")
        if hasher not in HASHERS:
            raise ValueError(f"hasher must be one of {', '.join(HASHERS)}; got {hasher!r}")
        if not is_count(max_token_length) or max_token_length < MAC_LENGTH + 1:
            raise ValueError(f"max_token_length must be an int of at least {MAC_LENGTH + 1}; got {max_token_length!r}")
        self.purpose = purpose
        self.hasher = hasher
        self.max_token_length = max_token_length
        secrets = [to_bytes(secret)]
        secrets += [to_bytes(old, f"fallbacks[{i}]") for i, old in enumerate(fallback_secrets(fallbacks))]
        keyed = [keyed_hash(s, domain=self.domain, purpose=purpose, hasher=hasher) for s in secrets]
        self._key = keyed[0]
        self._fallback_keys: tuple[KeyedHash, ...] = tuple(keyed[1:])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r})"

    def sign(self, data: bytes | str) -> str:
        if isinstance(data, str):
            data = data.encode("utf-8")
        return self._seal(b"0" + b64encode(data))

    def unsign(self, token: str | bytes) -> bytes:
        text, _ = self._open(token)
        if text[0] != 0x30:  # b"0"
            raise BadSignature("unknown token format")
        try:
            return b64decode(text[1:])
        except ValueError:
            raise BadSignature("malformed token body") from None

    def _seal(self, text: bytes) -> str:
        """Append the MAC of ``text`` under the current key."""
        state = self._key.copy()
        state.update(text)
        token = text + pybase64.b64encode(state.digest(), ALTCHARS).rstrip(b"=")
        if len(token) > self.max_token_length:
            raise ValueError(
                f"token of {len(token)} characters exceeds max_token_length={self.max_token_length}: "
                "store less data or raise the limit"
            )
        return token.decode("ascii")

    def _open(self, token: str | bytes) -> tuple[bytes, bool]:
        """Return the verified text before the MAC, and whether a fallback key verified it.

        Length and shape are checked before any hashing; nothing is decoded here.
        """
        if isinstance(token, str):
            if len(token) > self.max_token_length:
                raise BadSignature("token too long")
            try:
                raw = token.encode("ascii")
            except UnicodeEncodeError:
                raise BadSignature("token is not ASCII") from None
        elif isinstance(token, (bytes, bytearray, memoryview)):
            raw = bytes(token)
            if len(raw) > self.max_token_length:
                raise BadSignature("token too long")
        else:
            raise BadSignature(f"token must be str or bytes, not {type(token).__name__}")
        if len(raw) < MAC_LENGTH + 1:  # a marker and a MAC at the least
            raise BadSignature("malformed token")
        text = raw[:-MAC_LENGTH]
        tag = raw[-MAC_LENGTH:]
        state = self._key.copy()
        state.update(text)
        # Compare encoded text, not decoded bytes: a re-encoded tag must not verify.
        if compare_digest(pybase64.b64encode(state.digest(), ALTCHARS).rstrip(b"="), tag):
            return text, False
        for key in self._fallback_keys:
            state = key.copy()
            state.update(text)
            if compare_digest(b64encode(state.digest()), tag):
                return text, True
        raise BadSignature("signature does not match")


def is_count(value: object) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)
