"""SerializerSigner: JSON values in, timestamped and signed tokens out.

Format 2 is the default; format 1 is still read, and written with ``format=1``. ``formats.py`` has every
layout, docs/format.md the grammar and test vectors. ``dumps`` = serialize -> date -> maybe compress (``_body``,
shared by both kinds of token) -> encode -> sign; ``loads`` = check length -> read the marker -> verify ->
decode -> check times -> maybe decompress -> deserialize, in one pass of Python around the C calls (``_load``).

``typed=True`` and ``encrypt=True`` are a subclass, ``ExtendedSerializerSigner``, that ``SerializerSigner(...)``
returns when either is asked for, so that the plain signer's path carries no test for them; ``typed.py`` and
``encryption.py`` are imported when one is built, never with the package.
"""

from __future__ import annotations

import json
import os
import time
from binascii import b2a_base64
from collections.abc import Callable, Iterable
from hmac import compare_digest
from typing import TYPE_CHECKING, Any, Final, TypeVar

import orjson
import pybase64

from ..exceptions import BadSignature, SignatureMismatch
from ..exceptions import NotJSON as NotJSON  # its home was here: still importable
from . import compression
from .compression import check_options as check_compression
from .encoding import ALTCHARS, PADDING
from .formats import (
    COMPRESSED_1,
    DICTIONARY,
    ENCRYPTED_MARKER,
    EXPIRES,
    ISSUED,
    ISSUED_EXPIRES,
    KEY_ID_CHARS,
    LAYOUT_OF_BYTE,
    MARKERS_1,
    MARKERS_2,
    PYTHON_JSON,
    SESSION_ID,
    TAG_32,
    TIMESTAMP_LIMIT,
    TYPED,
    U32,
    ZSTD_FRAME,
    read_plaintext,
)
from .formats import LAYOUTS as LAYOUTS  # importable from here, as before formats.py
from .formats import NO_COMPRESSION as NO_COMPRESSION
from .formats import SESSION_ID_SIZE as SESSION_ID_SIZE
from .formats import ZSTD as ZSTD
from .formats import ZSTD_DICTIONARY as ZSTD_DICTIONARY
from .formats import Layout as Layout
from .keys import TAG_SIZES, by_id_character, derive_key, key_id
from .signer import MAX_TOKEN_LENGTH, URLSAFE, Signer, is_count, keyed_mac_keys, keys_by_id
from .times import CLOCK_SKEW as CLOCK_SKEW  # importable from here, as before tokens.py
from .times import LoadedToken as LoadedToken
from .times import Seconds as Seconds
from .times import check_times
from .times import to_seconds as to_seconds
from .typed import TYPED_OPTION as TYPED_OPTION
from .typed import python_json as _python_json
from .typed import refuse_non_json

if TYPE_CHECKING:
    from .encryption import EncryptionKeys

#: Without a dictionary, the size from which payloads are compressed: below about 512 bytes
#: plain zstd saves little and costs more (~5 us per round trip) than everything else a token needs.
COMPRESSION_THRESHOLD: Final = 512
#: Without a dictionary, compression is kept only if it saves at least this fraction of the payload.
COMPRESSION_MIN_GAIN: Final = 0.1
#: None: the core compresses without a dictionary unless told otherwise; the session adapters
#: pass dictionaries.SESSION. Measured on the core benchmark, the dictionary halves a ~330 B
#: session token but adds ~3 us to a ~6.5 us round trip (docs/core.md, "Compression").
DEFAULT_DICTIONARY: Final = None
#: Default bound on a decompressed payload.
MAX_DECOMPRESSED_SIZE: Final = 256 * 1024
FORMATS: Final = (1, 2)


#: The items ``_load_any`` returns: LoadedToken's four, the session id, and whether the token was encrypted.
_Loaded = tuple[Any, int, "int | None", bool, "bytes | None", bool]
_S = TypeVar("_S", bound="SerializerSigner")
#: Makes a LoadedToken from its four items without the Python frame of NamedTuple's ``__new__``.
_new_tuple: Final = tuple.__new__


class SerializerSigner(Signer):
    """Signs JSON-serializable values with an issue time, optional expiry and compression."""

    domain = "serializer"

    def __new__(cls: type[_S], *args: Any, **options: Any) -> _S:
        """A plain signer; with ``typed``, ``encrypt`` or ``decrypt``, the subclass that implements them."""
        if cls is SerializerSigner and (options.get("typed") or options.get("encrypt") or options.get("decrypt")):
            return ExtendedSerializerSigner.__new__(ExtendedSerializerSigner)  # type: ignore[return-value]
        return super().__new__(cls)

    def __init__(
        self,
        secret: str | bytes,
        *,
        purpose: str,
        max_age: Seconds | None = None,
        fallbacks: Iterable[str | bytes] = (),
        hasher: str = "blake2b",
        compression: str | None = "zstd",
        dictionary: int | None = DEFAULT_DICTIONARY,
        compression_threshold: int = COMPRESSION_THRESHOLD,
        tag_size: int = 16,
        format: int = 2,
        max_token_length: int = MAX_TOKEN_LENGTH,
        max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
        clock: Callable[[], float] = time.time,
        typed: bool = False,
        encrypt: bool = False,
        decrypt: bool = False,
        compress_encrypted: bool = False,
    ) -> None:
        for name, flag in (
            ("typed", typed),
            ("encrypt", encrypt),
            ("decrypt", decrypt),
            ("compress_encrypted", compress_encrypted),
        ):
            if type(flag) is not bool:
                raise TypeError(f"{name} must be True or False; got {flag!r}")
        if (typed or encrypt or decrypt) and not isinstance(self, ExtendedSerializerSigner):
            # A subclass of SerializerSigner gets here: only SerializerSigner itself dispatches.
            raise TypeError(f"{type(self).__name__} does not implement typed or encrypted tokens")
        if format == 1 and (typed or encrypt):
            raise ValueError(
                "format=1 writes tokens for releases that read only format 1, which read neither typed nor "
                "encrypted tokens: use format=2 with typed=True or encrypt=True"
            )
        if compress_encrypted and not encrypt:
            raise ValueError("compress_encrypted=True applies to encrypted tokens: pass encrypt=True too")
        check_compression(compression, dictionary, compression_threshold, max_decompressed_size, format == 2)
        if not is_count(tag_size) or tag_size not in TAG_SIZES:
            raise ValueError(f"tag_size must be 16 or 32 (bytes); got {tag_size!r}")
        if not is_count(format) or format not in FORMATS:
            raise ValueError(
                f"format must be 2, or 1 while processes that read only format 1 still run; got {format!r}"
            )
        if not callable(clock):
            raise TypeError("clock must be a callable returning Unix seconds, like time.time")
        self.tag_size = tag_size  # before Signer.__init__, which derives the keys
        super().__init__(secret, purpose=purpose, fallbacks=fallbacks, hasher=hasher, max_token_length=max_token_length)
        self.max_age = None if max_age is None else to_seconds(max_age, "max_age")
        self.compression = compression
        self.dictionary = dictionary
        self.compression_threshold = compression_threshold
        self.format = format
        self.max_decompressed_size = max_decompressed_size
        self._compress = compression is not None
        #: The flag of a payload compressed without a dictionary.
        self._frame_flag = ZSTD_FRAME if format == 2 else COMPRESSED_1
        # Format 2 compresses against the dictionary, when there is one, at any size.
        self._dictionary_id = dictionary if compression is not None and format == 2 else None
        self._dictionary_byte = bytes([dictionary]) if dictionary is not None else b""
        self._tag_flag = TAG_32 if tag_size == 32 else 0
        self._clock = clock
        self.typed = typed
        self.encrypt = encrypt
        self.decrypt = decrypt or encrypt
        self.compress_encrypted = compress_encrypted

    def _derive_keys(self, secrets: list[bytes]) -> None:
        super()._derive_keys(secrets)
        # Format 2's domain names the format and the tag size: a format-1 key never tags
        # format-2 text, and a 16-byte tag is never the start of a 32-byte one.
        keys = [
            derive_key(s, domain=f"{self.domain}.format2.tag{self.tag_size}", purpose=self.purpose, hasher=self.hasher)
            for s in secrets
        ]
        self._format2 = keyed_mac_keys(keys, self.hasher, self.tag_size)
        # A format-2 token names its key by one character after the marker (``formats.KEY_ID_CHARS``), so a reader
        # computes one tag, not one per fallback. Per byte value of that character, unpacked for the read path: the
        # first key's state, the keys of the id, their tag size and characters, whether the first is a fallback.
        self._format2_id = key_id(keys[0], self.hasher)[:KEY_ID_CHARS].encode("ascii")
        named = keys_by_id(keys, self._format2, self.hasher, KEY_ID_CHARS)
        self._format2_named = by_id_character(
            {name: (ks.current, ks, ks.tag_size, ks.tag_chars, fallback) for name, (ks, fallback) in named.items()}
        )
        #: A format-2 token of at most this length is malformed: a marker, a key id, a tag and no body.
        self._format2_shortest = 1 + KEY_ID_CHARS + self._format2.tag_chars

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r}, "
            f"max_age={self.max_age!r}, compression={self.compression!r}, dictionary={self.dictionary!r}, "
            f"tag_size={self.tag_size!r}, format={self.format!r})"
        )

    def dumps(self, obj: Any, *, expires_in: Seconds | None = None, session_id: bytes | None = None) -> str:
        """Serialize, sign and date ``obj``; raises TypeError for values JSON cannot carry.

        What Python's json module refuses is refused here too (``refuse_non_json``), though orjson would write
        some of it (a datetime, UUID, enum or dataclass) and read it back as another type. ``session_id``
        (exactly 8 bytes) is carried under the MAC and given back by ``load_token``: what lets a server revoke
        one session among many.
        """
        refuse_non_json(obj)
        if self.format == 1:
            if session_id is not None:
                raise ValueError("format 1 tokens cannot carry a session_id: use format=2")
            flags, body = self._body(obj, 0, expires_in, None, self._compress)
            return self._seal(MARKERS_1[flags] + pybase64.b64encode(body, ALTCHARS).rstrip(b"="), self._format1)
        flags, body = self._body(obj, 0, expires_in, session_id, self._compress)
        text = MARKERS_2[flags | self._tag_flag] + self._format2_id + pybase64.b64encode(body, ALTCHARS).rstrip(b"=")
        return self._seal(text, self._format2)

    def _body(
        self, obj: Any, flags: int, expires_in: Seconds | None, session_id: bytes | None, compress: bool
    ) -> tuple[int, bytes]:
        """A token's body before it is signed or sealed, in one pass, and its flags (``formats.py``); what orjson
        refuses but Python's json accepts (big integers, lone surrogates, non-str keys, deep nesting) is written by
        json and marked so."""
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
            header = ISSUED.pack(now)
        else:
            expires_at = now + to_seconds(expires_in, "expires_in")
            if expires_at >= TIMESTAMP_LIMIT:
                raise ValueError("expires_in reaches past 2106, the format's last representable second")
            header = ISSUED_EXPIRES.pack(now, expires_at)
            flags |= EXPIRES
        if session_id is not None:
            if type(session_id) is not bytes or len(session_id) != SESSION_ID_SIZE:
                raise ValueError(f"session_id must be exactly {SESSION_ID_SIZE} bytes; got {session_id!r}")
            header += session_id
            flags |= SESSION_ID
        if not compress:
            return flags, header + payload
        if self._dictionary_id is not None:  # format 2: against the dictionary, at any size
            packed = compression.compress(payload, self._dictionary_id)
            # Kept when the token gets shorter. base64url writes n bytes as (4n + 2) // 3 characters, which grows
            # with every byte, so that is when the frame and the dictionary's byte are fewer bytes than the JSON.
            if len(packed) + 1 < len(payload):
                return flags | DICTIONARY, header + self._dictionary_byte + packed
        elif len(payload) >= self.compression_threshold:
            packed = compression.compress(payload)
            if len(packed) <= len(payload) * (1 - COMPRESSION_MIN_GAIN):
                return flags | self._frame_flag, header + packed
        return flags, header + payload

    def loads(self, token: str | bytes, *, max_age: Seconds | None = None) -> Any:
        """Return the value of a valid token; BadSignature (or SignatureExpired) otherwise."""
        return self._load(token, max_age, None)[0]

    def load_token(
        self, token: str | bytes, *, max_age: Seconds | None = None, default_age: int | None = None
    ) -> LoadedToken:
        """Like ``loads``, but also tell when the token was issued and expires, by which key, and its session id.

        ``default_age``: seconds a token *without an expiry of its own* lives after its issue (a session's
        default age: Django's ``SESSION_COOKIE_AGE``); one with its own expiry is bounded by that alone.
        """
        value, issued_at, expires_at, used_fallback, session_id = self._load(token, max_age, default_age)
        loaded: LoadedToken = _new_tuple(LoadedToken, (value, issued_at, expires_at, used_fallback))
        if session_id is not None:
            loaded.session_id = session_id
        return loaded

    def _load(
        self, token: str | bytes, max_age: Seconds | None, default_age: int | None
    ) -> tuple[Any, int, int | None, bool, bytes | None]:
        """The one path of a signed token: check its length, verify, decode, check its times, decompress, parse."""
        # Every request with a session cookie runs this: the layout is unpacked once, as locals.
        raw = token if type(token) is bytes and len(token) <= self.max_token_length else self._ascii(token)
        # Not yet verified: the marker only picks which format's keys and tag length to try.
        layout = LAYOUT_OF_BYTE[raw[0]] if raw else None
        if layout is None:
            if raw[:1] == ENCRYPTED_MARKER:
                raise BadSignature("unknown token format: an encrypted one, and this signer does not decrypt")
            raise BadSignature("unknown token format")
        format, tag_size, expires, python_json, has_session_id, kind, header_size = layout
        if format == 2:
            if len(raw) <= self._format2_shortest:
                raise BadSignature("malformed token")
            # The key id picks the keys to try (not yet verified either: the tag covers it).
            named = self._format2_named[raw[1]]
            if named is None:
                raise SignatureMismatch("unknown key id")
            # The first key here (_verify's first step, without its call); _verify tries them all.
            current, keys, key_tag_size, tag_chars, used_fallback = named
        else:
            keys = self._format1
            current, _, key_tag_size, tag_chars = keys
            if len(raw) <= tag_chars:  # a marker and a tag at the least
                raise BadSignature("malformed token")
            used_fallback = False
        text = raw[:-tag_chars]
        state = current.copy()
        state.update(text)
        if not compare_digest(
            b2a_base64(state.digest()[:key_tag_size])[:tag_chars].translate(URLSAFE), raw[-tag_chars:]
        ):
            text, later = self._verify(raw, keys)
            used_fallback = used_fallback or later
        if format == 2 and tag_size != self.tag_size:  # a marker never chooses a shorter tag than configured
            raise BadSignature("token has another tag size")
        encoded = text[format:]  # after the marker, and format 2's key id
        try:
            body = pybase64.b64decode(encoded + PADDING[len(encoded) % 4], ALTCHARS, True)  # validate
        except ValueError:
            raise BadSignature("malformed token body") from None
        if len(body) < header_size:
            raise BadSignature("token body too short")
        if expires:
            issued_at, expires_at = ISSUED_EXPIRES.unpack_from(body)
        else:
            issued_at, expires_at = U32.unpack_from(body)[0], None
        now = self._clock()
        limit = self.max_age if max_age is None else to_seconds(max_age, "max_age")
        # check_times' rules, tested without its call; it says which one the token broke.
        if not (issued_at <= now + CLOCK_SKEW and (limit is None or now - issued_at <= limit)) or (
            now >= expires_at if expires_at is not None else default_age is not None and now - issued_at > default_age
        ):
            check_times(now, issued_at, expires_at, limit, default_age)
        session_id = None
        if has_session_id:
            start = 8 if expires else 4
            session_id = body[start : start + SESSION_ID_SIZE]
        try:
            if kind == ZSTD_DICTIONARY:  # its id is the header's last byte
                payload = compression.decompress(body[header_size:], self.max_decompressed_size, body[header_size - 1])
            elif kind == ZSTD:
                payload = compression.decompress(body[header_size:], self.max_decompressed_size)
            else:
                payload = body[header_size:]
                if len(payload) > self.max_decompressed_size:
                    raise ValueError("payload too large")
            value = json.loads(payload.decode("ascii")) if python_json else orjson.loads(payload)
        # orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError, an unknown dictionary id and
        # int's digit limit are ValueErrors; json raises RecursionError for nesting deeper than the stack allows.
        except (ValueError, RecursionError) as error:
            raise BadSignature(f"unreadable payload: {error}") from None
        return value, issued_at, expires_at, used_fallback, session_id


class _TypedSigner(SerializerSigner):
    """Format 1 and 2 signed tokens under keys of the ``serializer.typed`` domain: the typed tokens' signer."""

    domain = "serializer.typed"


class ExtendedSerializerSigner(SerializerSigner):
    """A ``SerializerSigner`` with ``typed``, ``encrypt`` or ``decrypt``: built by ``SerializerSigner(...)``.

    Typed tokens are format 2 under keys of another domain, so a plain signer refuses them (no reader takes a tag
    for a user's dict) and a typed one reads plain tokens as plain JSON. Encrypted tokens are ``x`` and
    ``encryption.seal`` of a flags byte and format 2's body (``formats.PLAINTEXT_LAYOUTS``), uncompressed unless
    ``compress_encrypted=True``; ``decrypt=True`` reads them and writes signed ones. Why each: docs/core.md,
    "Typed values" and "Encrypted tokens"."""

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
        # Imported here, not with the package: plain signers, the usual ones, never need them.
        from .encryption import opened_token, sealed_token
        from .typed import decode, encode

        self._encode_typed: Callable[[Any], Any] = encode
        self._decode_typed: Callable[[Any], Any] = decode
        self._sealed_token: Callable[[EncryptionKeys, bytes, bytes, int], str] = sealed_token
        self._opened_token: Callable[[EncryptionKeys, bytes], tuple[bytes, bool]] = opened_token

    def _derive_keys(self, secrets: list[bytes]) -> None:
        super()._derive_keys(secrets)
        if self._derives_encryption_keys:
            from .encryption import encryption_keys

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
            return self._typed_signer.dumps(self._encode_typed(obj), expires_in=expires_in, session_id=session_id)
        return super().dumps(obj, expires_in=expires_in, session_id=session_id)

    def load_token(
        self, token: str | bytes, *, max_age: Seconds | None = None, default_age: int | None = None
    ) -> LoadedToken:
        value, issued_at, expires_at, used_fallback, session_id, encrypted = self._load_any(token, max_age, default_age)
        loaded: LoadedToken = _new_tuple(LoadedToken, (value, issued_at, expires_at, used_fallback))
        if session_id is not None:
            loaded.session_id = session_id
        if encrypted:
            loaded.encrypted = True
        elif self.encrypt:
            loaded.outdated = True  # signed before encryption was turned on: write it again, encrypted
        return loaded

    def _load(
        self, token: str | bytes, max_age: Seconds | None, default_age: int | None
    ) -> tuple[Any, int, int | None, bool, bytes | None]:
        return self._load_any(token, max_age, default_age)[:5]

    def _load_any(self, token: str | bytes, max_age: Seconds | None, default_age: int | None) -> _Loaded:
        raw = self._ascii(token)
        if raw[:1] == ENCRYPTED_MARKER and self.decrypt:
            return self._load_encrypted(raw, max_age, default_age)
        if self._typed_signer is not None:
            try:
                value, issued_at, expires_at, used_fallback, session_id = self._typed_signer._load(
                    raw, max_age, default_age
                )
            except SignatureMismatch:
                pass  # not a typed token; maybe a plain one, from before typed=True: read as it was written
            else:
                try:
                    value = self._decode_typed(value)
                except ValueError as error:
                    raise BadSignature(f"unreadable payload: {error}") from None
                return value, issued_at, expires_at, used_fallback, session_id, False
        return (*super()._load(raw, max_age, default_age), False)

    def _dumps_encrypted(self, obj: Any, expires_in: Seconds | None, session_id: bytes | None) -> str:
        if self.typed:
            obj, flags = self._encode_typed(obj), TYPED
        else:
            refuse_non_json(obj)
            flags = 0
        # The signed token's body, behind a flags byte: compressed only when asked (see the class's docstring).
        flags, body = self._body(obj, flags, expires_in, session_id, self.compress_encrypted and self._compress)
        plaintext = bytes([flags]) + body
        return self._sealed_token(self._encryption, plaintext, self._random_bytes(24), self.max_token_length)

    def _load_encrypted(self, raw: bytes, max_age: Seconds | None, default_age: int | None) -> _Loaded:
        plaintext, used_fallback = self._opened_token(self._encryption, raw)  # verified: the GCM tag
        layout, issued_at, expires_at, session_id = read_plaintext(plaintext)
        if layout.typed and not self.typed:
            # Its values may not be JSON (a datetime): this signer could not save them again.
            raise BadSignature("typed token, and this signer is not typed=True")
        limit = self.max_age if max_age is None else to_seconds(max_age, "max_age")
        check_times(self._clock(), issued_at, expires_at, limit, default_age)
        payload = plaintext[layout.header_size :]
        # The signed path's steps after its times (SerializerSigner._load): a change there belongs here too.
        try:
            if layout.compression == ZSTD_DICTIONARY:
                payload = compression.decompress(payload, self.max_decompressed_size, plaintext[layout.header_size - 1])
            elif layout.compression == ZSTD:
                payload = compression.decompress(payload, self.max_decompressed_size)
            elif len(payload) > self.max_decompressed_size:
                raise ValueError("payload too large")
            value = json.loads(payload.decode("ascii")) if layout.python_json else orjson.loads(payload)
            if layout.typed:
                value = self._decode_typed(value)
        except (ValueError, RecursionError) as error:
            raise BadSignature(f"unreadable payload: {error}") from None
        return value, issued_at, expires_at, used_fallback, session_id, True
