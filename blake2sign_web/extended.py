"""Typed and encrypted tokens: the ``SerializerSigner`` that ``typed=True``, ``encrypt=True`` or ``decrypt=True`` build.

``SerializerSigner(...)`` returns an ``ExtendedSerializerSigner`` (a subclass) when any of them is set, so
the plain signer's methods, on the path of every session cookie that uses neither, test for none of them.

**Typed** signed tokens (``typed.py`` says how values are tagged) have format 2's layout exactly, under keys
of another domain (``serializer.typed.format2.tag16``): a signer without ``typed=True`` refuses them
(``BadSignature``), so no reader ever takes a tag for a user's dict, and a typed reader knows a token it
must decode by the key that verified it. A typed reader also reads plain tokens (format 1 or 2, made before
``typed=True`` was turned on) as plain JSON, untouched.

**Encrypted** tokens are ``x`` and the unpadded base64url of ``encryption.seal(plaintext)``; the plaintext
is a flags byte and format 2's body::

    flags       1 byte: 1 typed, 2 expiry, 4 Python json, 8 session id, 16 dictionary, 32 zstd (16 and 32
                never together; 64 and 128 never set)
    issued_at   4 bytes, big-endian Unix seconds
    [expires_at 4 bytes] [session id 8 bytes] [dictionary id 1 byte]
    payload     JSON (tagged when typed), or a zstandard frame of it

A signer with ``encrypt=True`` writes them and reads them, and reads signed tokens too (made before it
encrypted: ``LoadedToken.outdated`` says to write them again, encrypted). ``decrypt=True`` reads encrypted
tokens and writes signed ones: the first step of turning encryption on in a fleet, or the way back.
Encrypted payloads are not compressed unless ``compress_encrypted=True``: a compressed length tells what
the plaintext holds (see docs/core.md).
"""

from __future__ import annotations

import json
import os
from typing import Any, Final, NamedTuple

import orjson
import pybase64

from . import compression, typed
from .encoding import ALTCHARS, PADDING
from .encryption import MARKER, EncryptionKeys, encryption_keys, seal, unseal
from .exceptions import BadSignature, SignatureExpired, SignatureMismatch
from .serializer import (
    _ISSUED,
    _ISSUED_EXPIRES,
    _TIMESTAMP_LIMIT,
    _U32,
    CLOCK_SKEW,
    COMPRESSION_MIN_GAIN,
    NO_COMPRESSION,
    SESSION_ID_SIZE,
    ZSTD,
    ZSTD_DICTIONARY,
    LoadedToken,
    Seconds,
    SerializerSigner,
    _python_json,
    refuse_non_json,
    to_seconds,
)

# The plaintext's flag bits.
TYPED: Final = 1
EXPIRES: Final = 2
PYTHON_JSON: Final = 4
SESSION_ID: Final = 8
DICTIONARY: Final = 16
ZSTD_FLAG: Final = 32


class PlaintextLayout(NamedTuple):
    """What an encrypted token's flags byte says about the rest of its plaintext."""

    typed: bool
    expires: bool
    python_json: bool
    session_id: bool
    compression: int  # NO_COMPRESSION, ZSTD or ZSTD_DICTIONARY
    #: Bytes of the plaintext before the payload, the flags byte included.
    header_size: int


def _plaintext_layouts() -> dict[int, PlaintextLayout]:
    layouts = {}
    for flags in range(64):
        if flags & DICTIONARY and flags & ZSTD_FLAG:
            continue
        kind = ZSTD_DICTIONARY if flags & DICTIONARY else ZSTD if flags & ZSTD_FLAG else NO_COMPRESSION
        header = 1 + 4 + 4 * bool(flags & EXPIRES) + SESSION_ID_SIZE * bool(flags & SESSION_ID)
        header += kind == ZSTD_DICTIONARY
        layouts[flags] = PlaintextLayout(
            bool(flags & TYPED),
            bool(flags & EXPIRES),
            bool(flags & PYTHON_JSON),
            bool(flags & SESSION_ID),
            kind,
            header,
        )
    return layouts


#: Every flags byte a reader knows; any other is refused (after decryption: only a key holder made it).
PLAINTEXT_LAYOUTS: Final = _plaintext_layouts()

#: The items ``_load_any`` returns: LoadedToken's four, the session id, and whether the token was encrypted.
_Loaded = tuple[Any, int, "int | None", bool, "bytes | None", bool]


class _TypedSigner(SerializerSigner):
    """Format 1 and 2 signed tokens under keys of the ``serializer.typed`` domain: the typed tokens' signer."""

    domain = "serializer.typed"


class ExtendedSerializerSigner(SerializerSigner):
    """A ``SerializerSigner`` with ``typed``, ``encrypt`` or ``decrypt``: built by ``SerializerSigner(...)``."""

    _encryption: EncryptionKeys

    def __init__(
        self,
        secret: str | bytes,
        *,
        typed: bool = False,
        encrypt: bool = False,
        decrypt: bool = False,
        compress_encrypted: bool = False,
        **options: Any,
    ) -> None:
        # Read by _derive_keys, which Signer.__init__ calls.
        self._derives_encryption_keys = encrypt or decrypt
        super().__init__(
            secret, typed=typed, encrypt=encrypt, decrypt=decrypt, compress_encrypted=compress_encrypted, **options
        )
        #: Writes and verifies typed signed tokens; None when not typed.
        self._typed_signer = _TypedSigner(secret, **options) if typed else None
        #: Where nonces come from (the test vectors replace it).
        self._random_bytes = os.urandom

    def _derive_keys(self, secrets: list[bytes]) -> None:
        super()._derive_keys(secrets)
        if self._derives_encryption_keys:
            self._encryption = encryption_keys(secrets, purpose=self.purpose, hasher=self.hasher)

    def __repr__(self) -> str:
        return (
            f"{super().__repr__()[:-1]}, typed={self.typed!r}, encrypt={self.encrypt!r}, decrypt={self.decrypt!r}, "
            f"compress_encrypted={self.compress_encrypted!r})"
        )

    def dumps(self, obj: Any, *, expires_in: Seconds | None = None, session_id: bytes | None = None) -> str:
        """As ``SerializerSigner.dumps``; typed values tagged (``typed=True``), the token encrypted (``encrypt=True``).

        A typed signer raises ``typed.TypedNotJSON`` (a ``NotJSON``, so a ``TypeError``) for a value it cannot hold.
        """
        if self.encrypt:
            return self._dumps_encrypted(obj, expires_in, session_id)
        if self._typed_signer is not None:
            return self._typed_signer.dumps(typed.encode(obj), expires_in=expires_in, session_id=session_id)
        return super().dumps(obj, expires_in=expires_in, session_id=session_id)

    def load_token(self, token: str | bytes, *, max_age: Seconds | None = None) -> LoadedToken:
        value, issued_at, expires_at, used_fallback, session_id, encrypted = self._load_any(token, max_age)
        loaded = LoadedToken(value, issued_at, expires_at, used_fallback)
        if session_id is not None:
            loaded.session_id = session_id
        if encrypted:
            loaded.encrypted = True
        elif self.encrypt:
            loaded.outdated = True  # signed before encryption was turned on: write it again, encrypted
        return loaded

    def _load(self, token: str | bytes, max_age: Seconds | None) -> tuple[Any, int, int | None, bool, bytes | None]:
        return self._load_any(token, max_age)[:5]

    def _load_any(self, token: str | bytes, max_age: Seconds | None) -> _Loaded:
        raw = self._ascii(token)
        if raw[:1] == MARKER and self.decrypt:
            return self._load_encrypted(raw, max_age)
        if self._typed_signer is not None:
            try:
                value, issued_at, expires_at, used_fallback, session_id = self._typed_signer._load(raw, max_age)
            except SignatureMismatch:
                pass  # not a typed token; maybe a plain one, from before typed=True: read as it was written
            else:
                try:
                    value = typed.decode(value)
                except ValueError as error:
                    raise BadSignature(f"unreadable payload: {error}") from None
                return value, issued_at, expires_at, used_fallback, session_id, False
        return (*super()._load(raw, max_age), False)

    # _dumps_encrypted and _load_encrypted repeat steps of SerializerSigner.dumps and _load (serialize, date,
    # compress; check times, decompress, parse) on purpose: shared helpers would add calls to the plain
    # signed path, which every session cookie takes. A change to those steps there belongs here too.

    def _dumps_encrypted(self, obj: Any, expires_in: Seconds | None, session_id: bytes | None) -> str:
        if self.typed:
            obj = typed.encode(obj)
            flags = TYPED
        else:
            refuse_non_json(obj)
            flags = 0
        try:
            payload = orjson.dumps(obj)
        except orjson.JSONEncodeError:
            payload = _python_json(obj)
            flags |= PYTHON_JSON
        if len(payload) > self.max_decompressed_size:
            raise ValueError(
                f"serialized value of {len(payload)} bytes exceeds max_decompressed_size={self.max_decompressed_size}"
            )
        now = int(self._clock())
        if expires_in is None:
            header = _ISSUED.pack(now)
        else:
            expires_at = now + to_seconds(expires_in, "expires_in")
            if expires_at >= _TIMESTAMP_LIMIT:
                raise ValueError("expires_in reaches past 2106, the format's last representable second")
            header = _ISSUED_EXPIRES.pack(now, expires_at)
            flags |= EXPIRES
        if session_id is not None:
            if type(session_id) is not bytes or len(session_id) != SESSION_ID_SIZE:
                raise ValueError(f"session_id must be exactly {SESSION_ID_SIZE} bytes; got {session_id!r}")
            header += session_id
            flags |= SESSION_ID
        if self.compress_encrypted and self._compress:
            if self._dictionary_id is not None:
                packed = compression.compress(payload, self._dictionary_id)
                if len(packed) + 1 < len(payload):
                    header += self._dictionary_byte
                    payload, flags = packed, flags | DICTIONARY
            elif len(payload) >= self.compression_threshold:
                packed = compression.compress(payload)
                if len(packed) <= len(payload) * (1 - COMPRESSION_MIN_GAIN):
                    payload, flags = packed, flags | ZSTD_FLAG
        sealed = seal(self._encryption, bytes([flags]) + header + payload, self._random_bytes(24))
        token = MARKER + pybase64.b64encode(sealed, ALTCHARS).rstrip(b"=")
        if len(token) > self.max_token_length:
            raise ValueError(
                f"token of {len(token)} characters exceeds max_token_length={self.max_token_length}: "
                "store less data or raise the limit"
            )
        return token.decode("ascii")

    def _load_encrypted(self, raw: bytes, max_age: Seconds | None) -> _Loaded:
        encoded = raw[1:]
        # One token, one spelling. Nothing authenticates the text itself (the GCM tag covers the bytes), and
        # the decoder lets "+" and "/" through beside "-" and "_" (with a DeprecationWarning) and ignores the
        # spare bits of the last character: refuse the first, and any text that is not the bytes' encoding.
        if b"+" in encoded or b"/" in encoded:
            raise BadSignature("malformed token body")
        try:
            sealed = pybase64.b64decode(encoded + PADDING[len(encoded) % 4], ALTCHARS, True)  # validate
        except ValueError:
            raise BadSignature("malformed token body") from None
        if pybase64.b64encode(sealed, ALTCHARS).rstrip(b"=") != encoded:
            raise BadSignature("malformed token body")
        # The GCM tag is checked here, before a byte of the plaintext is read.
        plaintext, used_fallback = unseal(self._encryption, sealed)
        layout = PLAINTEXT_LAYOUTS.get(plaintext[0])
        if layout is None:
            raise BadSignature("unknown encrypted token flags")
        if layout.typed and not self.typed:
            # Its values may not be JSON (a datetime): this signer could not save them again.
            raise BadSignature("typed token, and this signer is not typed=True")
        if len(plaintext) < layout.header_size:
            raise BadSignature("token body too short")
        issued_at = _U32.unpack_from(plaintext, 1)[0]
        expires_at = _U32.unpack_from(plaintext, 5)[0] if layout.expires else None
        session_id = None
        if layout.session_id:
            start = 9 if layout.expires else 5
            session_id = plaintext[start : start + SESSION_ID_SIZE]
        payload = plaintext[layout.header_size :]
        self._check_times(issued_at, expires_at, max_age)
        try:
            if layout.compression == ZSTD_DICTIONARY:
                payload = compression.decompress(payload, self.max_decompressed_size, plaintext[layout.header_size - 1])
            elif layout.compression == ZSTD:
                payload = compression.decompress(payload, self.max_decompressed_size)
            elif len(payload) > self.max_decompressed_size:
                raise ValueError("payload too large")
            value = json.loads(payload.decode("ascii")) if layout.python_json else orjson.loads(payload)
            if layout.typed:
                value = typed.decode(value)
        except (ValueError, RecursionError) as error:
            raise BadSignature(f"unreadable payload: {error}") from None
        return value, issued_at, expires_at, used_fallback, session_id, True

    def _check_times(self, issued_at: int, expires_at: int | None, max_age: Seconds | None) -> None:
        """The signed path's rules: not from the future, not older than max_age, not past its expiry."""
        now = self._clock()
        if issued_at > now + CLOCK_SKEW:
            raise BadSignature("token issued in the future")
        limit = self.max_age if max_age is None else to_seconds(max_age, "max_age")
        if limit is not None and now - issued_at > limit:
            raise SignatureExpired(f"token is older than {limit} seconds", expired_at=issued_at + limit)
        if expires_at is not None and now >= expires_at:
            raise SignatureExpired("token has passed its expiry", expired_at=expires_at)
