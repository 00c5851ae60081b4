"""Signer: sign and verify bytes, the base every token kind in blake2sign_web is built on.

Format 1 (``marker body mac``): the MAC, a 32-byte keyed BLAKE tag over the text before it, is always the last 43
characters and covers the text as sent, so any change fails. Raw tokens stay format 1 (as ``URLSigner``'s
signatures do); ``SerializerSigner`` also writes format 2 under keys of its own (``MacKeys``): ``_seal`` and
``_verify`` take the keys of the format they work for. The grammar and test vectors: docs/format.md.
"""

from __future__ import annotations

from binascii import b2a_base64
from collections.abc import Iterable
from hmac import compare_digest
from typing import Final, NamedTuple

from ..exceptions import BadSignature, SignatureMismatch
from .encoding import b64decode, b64encode
from .keys import DIGEST_SIZE, HASHERS, KeyedHash, derive_key, fallback_secrets, group_by_key_id, keyed_with, to_bytes

#: Characters of an encoded format-1 MAC (32 bytes of unpadded base64url).
MAC_LENGTH = (DIGEST_SIZE * 8 + 5) // 6
#: Default upper bound on a token's length, checked before any hashing: fits a cookie.
MAX_TOKEN_LENGTH = 4096
#: Base64's alphabet to base64url's. A tag is encoded by binascii, then translated: for 16 or 32 bytes, cheaper
#: than pybase64's call (whose SIMD pays from a token body's size on); its padding and newline are sliced off.
URLSAFE: Final = bytes.maketrans(b"+/", b"-_")


class MacKeys(NamedTuple):
    """The keyed hash states of one token format, and the size of its tags."""

    current: KeyedHash
    #: Older secrets' keys: verify only, never sign.
    fallbacks: tuple[KeyedHash, ...]
    #: Bytes of a tag (BLAKE3's 32-byte digests are truncated to it).
    tag_size: int
    #: Characters of an encoded tag: unpadded base64url of ``tag_size`` bytes.
    tag_chars: int


def mac_keys(secrets: list[bytes], *, domain: str, purpose: str, hasher: str, tag_size: int) -> MacKeys:
    """Key a hash state per secret (the current one first) for tags of ``tag_size`` bytes."""
    keys = [derive_key(s, domain=domain, purpose=purpose, hasher=hasher) for s in secrets]
    return keyed_mac_keys(keys, hasher, tag_size)


def keyed_mac_keys(keys: list[bytes], hasher: str, tag_size: int) -> MacKeys:
    """``mac_keys`` of keys already derived (the current one first)."""
    states = [keyed_with(key, hasher, tag_size) for key in keys]
    return MacKeys(states[0], tuple(states[1:]), tag_size, (tag_size * 8 + 5) // 6)


def keys_by_id(keys: list[bytes], keyed: MacKeys, hasher: str, id_length: int) -> dict[str, tuple[MacKeys, bool]]:
    """``keys.group_by_key_id`` of ``keyed``'s states (``keyed_mac_keys`` of ``keys``), each id's as ``Signer._verify``
    tries them: the same states, not keyed again."""
    states = (keyed.current, *keyed.fallbacks)
    return {
        name: (MacKeys(group[0], tuple(group[1:]), keyed.tag_size, keyed.tag_chars), fallback)
        for name, (group, fallback) in group_by_key_id(keys, states, hasher, id_length).items()
    }


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
        self._derive_keys(secrets)

    def _derive_keys(self, secrets: list[bytes]) -> None:
        """Key the hash states once, here; subclasses that write another format derive its keys too."""
        self._format1 = mac_keys(
            secrets, domain=self.domain, purpose=self.purpose, hasher=self.hasher, tag_size=DIGEST_SIZE
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r})"

    def sign(self, data: bytes | str) -> str:
        """A token carrying ``data`` (str is UTF-8 encoded) and its MAC; readable by anyone, changeable by no one."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        return self._seal(b"0" + b64encode(data))

    def unsign(self, token: str | bytes) -> bytes:
        """The bytes ``sign`` was given, once the MAC checks out; BadSignature for anything else."""
        text, _ = self._open(token)
        if text[0] != 0x30:  # b"0"
            raise BadSignature("unknown token format")
        try:
            return b64decode(text[1:])
        except ValueError:
            raise BadSignature("malformed token body") from None

    def _seal(self, text: bytes, keys: MacKeys | None = None) -> str:
        """Append the tag of ``text`` under the current key of ``keys`` (format 1's by default)."""
        if keys is None:
            keys = self._format1
        state = keys.current.copy()
        state.update(text)
        token = text + b2a_base64(state.digest()[: keys.tag_size])[: keys.tag_chars].translate(URLSAFE)
        if len(token) > self.max_token_length:
            raise ValueError(
                f"token of {len(token)} characters exceeds max_token_length={self.max_token_length}: "
                "store less data or raise the limit"
            )
        return token.decode("ascii")

    def _open(self, token: str | bytes) -> tuple[bytes, bool]:
        """Return the verified text before a format-1 MAC, and whether a fallback key verified it."""
        return self._verify(self._ascii(token), self._format1)

    def _ascii(self, token: str | bytes) -> bytes:
        """The token as ASCII bytes, refused when too long before anything else is done with it."""
        if isinstance(token, str):
            if len(token) > self.max_token_length:
                raise BadSignature("token too long")
            try:
                return token.encode("ascii")
            except UnicodeEncodeError:
                raise BadSignature("token is not ASCII") from None
        if isinstance(token, (bytes, bytearray, memoryview)):
            raw = bytes(token)
            if len(raw) > self.max_token_length:
                raise BadSignature("token too long")
            return raw
        raise BadSignature(f"token must be str or bytes, not {type(token).__name__}")

    def _verify(self, raw: bytes, keys: MacKeys) -> tuple[bytes, bool]:
        """The text before the tag if a key of ``keys`` made the tag, and whether a fallback did; nothing is decoded."""
        current, fallbacks, tag_size, tag_chars = keys
        if len(raw) <= tag_chars:  # a marker and a tag at the least
            raise BadSignature("malformed token")
        text = raw[:-tag_chars]
        tag = raw[-tag_chars:]
        state = current.copy()
        state.update(text)
        # Compare encoded text, not decoded bytes: a re-encoded tag must not verify.
        if compare_digest(b2a_base64(state.digest()[:tag_size])[:tag_chars].translate(URLSAFE), tag):
            return text, False
        for key in fallbacks:
            state = key.copy()
            state.update(text)
            if compare_digest(b2a_base64(state.digest()[:tag_size])[:tag_chars].translate(URLSAFE), tag):
                return text, True
        raise SignatureMismatch("signature does not match")


def is_count(value: object) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)
