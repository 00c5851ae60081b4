"""Authenticated encryption for ``SerializerSigner(encrypt=True)``: AES-256-GCM under a key of its own per token.

A token's 24 random bytes of nonce pick its subkey (the signer's keyed hash of them, keyed for the secret, the
domain ``serializer.encrypted.x1`` and the purpose); AES-256-GCM under it takes a fixed 12-byte nonce and the
purpose as associated data. The GCM tag is the token's only authenticator, checked before a byte is read.
The bytes, and why this construction rather than plain AES-GCM, ChaCha20-Poly1305 or AES-GCM-SIV:
docs/format.md, "Encrypted tokens". ``cryptography`` is imported when a signer that encrypts or decrypts is
built, never otherwise (without it, ImportError names the ``encrypted`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, NamedTuple, Protocol

import pybase64

from ..exceptions import BadSignature
from .encoding import ALTCHARS, PADDING
from .formats import ENCRYPTED_MARKER as MARKER  # importable from here, as before formats.py had it
from .formats import KEY_ID_CHARS
from .keys import KeyedHash, by_id_character, derive_key, group_by_key_id, key_id, keyed_with

NONCE_SIZE: Final = 24
TAG_SIZE: Final = 16
#: The key derivation's domain: apart from every MAC key's.
DOMAIN: Final = "serializer.encrypted.x1"
AAD_PREFIX: Final = b"blake2sign_web x1\x00"
_GCM_NONCE: Final = bytes(12)
#: Fewest bytes of a sealed body: nonce, tag, and a plaintext's flags byte and issue time.
MIN_SEALED_SIZE: Final = NONCE_SIZE + TAG_SIZE + 1 + 4

_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#: By an unpadded base64url text's length mod 4, the last characters that leave no spare bit set (2 characters
#: carry a byte and 4 spare bits, 3 carry two and 2): a text whose last character is one of them, and which
#: decodes, is its bytes' own encoding (what encoding them again would show, for a call's cost).
_CANONICAL_LAST: Final = (_ALPHABET, _ALPHABET, _ALPHABET[::16], _ALPHABET[::4])

EXTRA_HINT: Final = "pip install 'blake2sign-web[encrypted]' (or pip install cryptography)"


class AEAD(Protocol):
    """cryptography's AESGCM, as used here."""

    def encrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...

    def decrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...


class EncryptionKeys(NamedTuple):
    """What seals and opens one signer's tokens: a keyed hash per secret (current first), and the AAD."""

    current: KeyedHash
    fallbacks: tuple[KeyedHash, ...]
    aad: bytes
    #: cryptography's AESGCM class and its InvalidTag exception, imported when the keys were made.
    aesgcm: Callable[[bytes], AEAD]
    invalid_tag: type[Exception]
    #: The current key's id character, written after the marker (``formats.KEY_ID_CHARS``).
    key_id: bytes = b""
    #: Per byte value of a token's key id character: the keys it names, in order, and whether the first is a
    #: fallback; None for an id no key has.
    named: tuple[tuple[tuple[KeyedHash, ...], bool] | None, ...] = ()


def load_cryptography() -> tuple[Callable[[bytes], AEAD], type[Exception]]:
    """cryptography's AESGCM and InvalidTag; ImportError naming the extra when it is not installed."""
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as error:
        raise ImportError(
            f"encrypted tokens (encrypt=True or decrypt=True) need the cryptography package: {EXTRA_HINT}"
        ) from error
    return AESGCM, InvalidTag


def encryption_keys(secrets: list[bytes], *, purpose: str, hasher: str) -> EncryptionKeys:
    """The key derivation states of ``secrets`` (the current one first) for ``purpose``."""
    aesgcm, invalid_tag = load_cryptography()
    keys = [derive_key(s, domain=DOMAIN, purpose=purpose, hasher=hasher) for s in secrets]
    keyed = [keyed_with(key, hasher, 32) for key in keys]
    named = {
        name: (tuple(group), fallback)
        for name, (group, fallback) in group_by_key_id(keys, keyed, hasher, KEY_ID_CHARS).items()
    }
    return EncryptionKeys(
        keyed[0],
        tuple(keyed[1:]),
        AAD_PREFIX + purpose.encode(),
        aesgcm,
        invalid_tag,
        key_id(keys[0], hasher)[:KEY_ID_CHARS].encode("ascii"),
        by_id_character(named),
    )


def subkey(key: KeyedHash, nonce: bytes) -> bytes:
    """The AES-256 key of the token whose nonce is ``nonce``."""
    state = key.copy()
    state.update(nonce)
    return state.digest()[:32]


def seal(keys: EncryptionKeys, plaintext: bytes, nonce: bytes | None = None) -> bytes:
    """``nonce || ciphertext || tag`` of ``plaintext`` under the current key; a fresh random nonce unless given."""
    if nonce is None:
        nonce = os.urandom(NONCE_SIZE)
    elif len(nonce) != NONCE_SIZE:
        raise ValueError(f"nonce must be {NONCE_SIZE} bytes")
    return nonce + keys.aesgcm(subkey(keys.current, nonce)).encrypt(_GCM_NONCE, plaintext, keys.aad)


def unseal(keys: EncryptionKeys, sealed: bytes, key_id: int) -> tuple[bytes, bool]:
    """The plaintext, and whether a fallback secret's key opened it; BadSignature if no key does. ``key_id``, the
    byte value of a token's key id character, picks the keys to try."""
    if len(sealed) < MIN_SEALED_SIZE:
        raise BadSignature("token body too short")
    named = keys.named[key_id]
    if named is None:
        raise BadSignature("unknown key id")
    tried, fallback = named
    nonce, ciphertext = sealed[:NONCE_SIZE], sealed[NONCE_SIZE:]
    for key in tried:
        try:
            return keys.aesgcm(subkey(key, nonce)).decrypt(_GCM_NONCE, ciphertext, keys.aad), fallback
        except keys.invalid_tag:
            fallback = True  # the keys after the first are fallbacks, in either order
    raise BadSignature("token does not decrypt under any key")


def sealed_token(keys: EncryptionKeys, plaintext: bytes, nonce: bytes, max_token_length: int) -> str:
    """The encrypted token of ``plaintext``: ``x`` and the unpadded base64url of ``seal``'s bytes."""
    token = MARKER + keys.key_id + pybase64.b64encode(seal(keys, plaintext, nonce), ALTCHARS).rstrip(b"=")
    if len(token) > max_token_length:
        raise ValueError(
            f"token of {len(token)} characters exceeds max_token_length={max_token_length}: "
            "store less data or raise the limit"
        )
    return token.decode("ascii")


def opened_token(keys: EncryptionKeys, raw: bytes) -> tuple[bytes, bool]:
    """The plaintext of the encrypted token ``raw`` (ASCII, its marker and key id first) and ``unseal``'s fallback
    flag. The key id is outside the GCM tag: it only picks the keys, and another id picks keys that cannot open it."""
    if len(raw) < 2:
        raise BadSignature("token body too short")
    encoded = raw[2:]
    # One token, one spelling. Nothing authenticates the text itself (the GCM tag covers the bytes), and
    # the decoder lets "+" and "/" through beside "-" and "_" (with a DeprecationWarning) and ignores the
    # spare bits of the last character: refuse the first, and any text that is not the bytes' encoding.
    if b"+" in encoded or b"/" in encoded:
        raise BadSignature("malformed token body")
    try:
        sealed = pybase64.b64decode(encoded + PADDING[len(encoded) % 4], ALTCHARS, True)  # validate
    except ValueError:
        raise BadSignature("malformed token body") from None
    if encoded and encoded[-1] not in _CANONICAL_LAST[len(encoded) % 4]:
        raise BadSignature("malformed token body")
    # The GCM tag is checked here, before a byte of the plaintext is read.
    return unseal(keys, sealed, raw[1])
