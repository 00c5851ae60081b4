"""Key derivation and keyed hashing: BLAKE2b, BLAKE2s, BLAKE3, and HMAC-SHA-256 where BLAKE is not to be had.

A secret is never used as a MAC key directly. It is derived, together with the
signer's *domain* (which kind of token) and *purpose* (what the application uses it
for), into a key of the hasher's native size, so that the same secret under two
purposes, two token kinds or two hashers yields unrelated keys. HMAC-SHA-256 is for the
hosts that refuse BLAKE (FIPS mode) and the verifiers that lack it (edge runtimes, nginx).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Protocol, TypeVar

import blake3

HASHERS: Final = ("blake2b", "blake2s", "blake3", "hmac-sha256")

#: Format 1's MAC length in bytes for every hasher: 256 bits, as HMAC-SHA256 gives Django's tokens.
DIGEST_SIZE: Final = 32
#: Tag sizes format 2 offers: 128 bits (the default: a forger has one chance in 2**128 per try) or 256.
TAG_SIZES: Final = (16, 32)
#: Fewest bytes (after UTF-8 encoding) a secret or fallback may have. Not a strength
#: guarantee: it refuses the values that cannot be secret at all ("", "secret", "changeme").
MIN_SECRET_LENGTH: Final = 16
#: BLAKE3 derive_key context; fixed forever for format 1 (changing it changes every key).
_BLAKE3_CONTEXT: Final = "blake2sign_web 2026-11 format 1 signing key"
#: BLAKE2 personalisation for key derivation (at most 16 bytes for blake2b, 8 for blake2s).
_BLAKE2B_PERSON: Final = b"b2sw.derive.v1"
_BLAKE2S_PERSON: Final = b"b2sw.kd1"
#: HMAC-SHA-256 key derivation: HKDF-Extract (RFC 5869) of the key material with this salt.
_HMAC_SALT: Final = b"blake2sign_web hmac-sha256 key v1"
#: Characters of a key id: the start of the unpadded base64url of SHA-256(``_KEY_ID_LABEL`` hasher 0x00 key).
KEY_ID_LENGTH: Final = 6
_KEY_ID_LABEL: Final = b"blake2sign_web key id v1\x00"
T = TypeVar("T")


class KeyedHash(Protocol):
    """A hash state already keyed: copy it, feed it a message, read the tag."""

    def copy(self) -> KeyedHash: ...

    def update(self, data: bytes, /) -> object: ...

    def digest(self) -> bytes: ...


def to_bytes(secret: str | bytes, name: str = "secret") -> bytes:
    """Accept a str or bytes secret of at least MIN_SECRET_LENGTH bytes; reject everything else at construction."""
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    elif isinstance(secret, (bytearray, memoryview)):
        secret = bytes(secret)
    elif not isinstance(secret, bytes):
        raise TypeError(f"{name} must be str or bytes, not {type(secret).__name__}")
    if len(secret) < MIN_SECRET_LENGTH:
        raise ValueError(
            f"{name} is {len(secret)} bytes long, fewer than the minimum of {MIN_SECRET_LENGTH}: "
            "pass a long random string, e.g. from secrets.token_urlsafe(50)"
        )
    return secret


def fallback_secrets(fallbacks: Iterable[str | bytes]) -> tuple[str | bytes, ...]:
    """``fallbacks`` as a tuple. A single str or bytes is refused: split into characters,
    ``"old"`` would make ``"o"``, ``"l"`` and ``"d"`` three one-character secrets."""
    if isinstance(fallbacks, (str, bytes, bytearray, memoryview)):
        raise TypeError("fallbacks must be a list of secrets, not a single secret: write fallbacks=[old_secret]")
    try:
        return tuple(fallbacks)
    except TypeError:
        raise TypeError(f"fallbacks must be a list of secrets, not {type(fallbacks).__name__}") from None


def _key_material(secret: bytes, domain: str, purpose: str) -> bytes:
    # Length prefixes keep ("ab", "c") and ("a", "bc") apart.
    parts = (domain.encode(), purpose.encode(), secret)
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def derive_key(secret: bytes, *, domain: str, purpose: str, hasher: str) -> bytes:
    """The MAC key of (secret, domain, purpose) for ``hasher``: 64 bytes for BLAKE2b, 32 for the others."""
    material = _key_material(secret, domain, purpose)
    if hasher == "blake2b":
        return hashlib.blake2b(material, digest_size=64, person=_BLAKE2B_PERSON).digest()
    if hasher == "blake2s":
        return hashlib.blake2s(material, digest_size=32, person=_BLAKE2S_PERSON).digest()
    if hasher == "blake3":
        return blake3.blake3(material, derive_key_context=_BLAKE3_CONTEXT).digest()
    if hasher == "hmac-sha256":
        return hmac.digest(_HMAC_SALT, material, "sha256")
    raise ValueError(f"hasher must be one of {', '.join(HASHERS)}; got {hasher!r}")


def keyed_with(key: bytes, hasher: str, digest_size: int = DIGEST_SIZE) -> KeyedHash:
    """A hash state keyed with ``key`` (``derive_key``'s). BLAKE2 states give ``digest_size`` bytes (it is part of
    their parameter block); BLAKE3's and HMAC-SHA-256's always give 32, which callers truncate."""
    if hasher == "blake2b":
        return hashlib.blake2b(key=key, digest_size=digest_size)
    if hasher == "blake2s":
        return hashlib.blake2s(key=key, digest_size=digest_size)
    if hasher == "blake3":
        return blake3.blake3(key=key)
    state = hmac.new(key, digestmod=hashlib.sha256)
    # OpenSSL's HMAC inside the wrapper, where there is one: its copy, update and digest are C calls, the wrapper's
    # Python ones (a MAC in 0.75 us instead of 1.0 us here).
    inner: KeyedHash = getattr(state, "_hmac", None) or state
    return inner


def keyed_hash(secret: bytes, *, domain: str, purpose: str, hasher: str, digest_size: int = DIGEST_SIZE) -> KeyedHash:
    """Derive the key for (secret, domain, purpose) and return a hash state keyed with it.

    Callers copy the state for each message: that skips re-processing the key block.
    """
    return keyed_with(derive_key(secret, domain=domain, purpose=purpose, hasher=hasher), hasher, digest_size)


def group_by_key_id(
    keys: list[bytes], states: Sequence[T], hasher: str, id_length: int
) -> dict[str, tuple[list[T], bool]]:
    """``states``, one per derived key of ``keys`` (the current one first), grouped by the first ``id_length``
    characters of their keys' ids: per id, its states in order, and whether the first is a fallback. Two keys of one
    id (a chance in 64 for a token's one character) are both kept, in order: an id picks the keys, the tag decides."""
    named: dict[str, list[tuple[int, T]]] = {}
    for index, (key, state) in enumerate(zip(keys, states, strict=True)):
        named.setdefault(key_id(key, hasher)[:id_length], []).append((index, state))
    return {name: ([state for _, state in found], found[0][0] > 0) for name, found in named.items()}


def by_id_character(named: Mapping[str, T]) -> tuple[T | None, ...]:
    """``named`` (one-character ids) as a table indexed by the id character's byte value: a token's reader looks its
    key id up by index, not by slicing and hashing it; None where no key has the id."""
    return tuple(named.get(chr(value)) for value in range(256))


def key_id(key: bytes, hasher: str) -> str:
    """The public name of a derived key: a verifier holding several keys picks one by it instead of trying each.
    One-way, so it says nothing of the key; ``KEY_ID_LENGTH`` characters of base64url."""
    digest = hashlib.sha256(_KEY_ID_LABEL + hasher.encode() + b"\x00" + key).digest()
    return base64.urlsafe_b64encode(digest).decode()[:KEY_ID_LENGTH]
