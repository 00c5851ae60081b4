"""SerializerSigner: JSON values in, timestamped and signed tokens out.

Token format 2, the default (format 1, below, is still read, and written with ``format=1``)::

    >>> signer = SerializerSigner("a long random secret", purpose="sessions", dictionary=1)
    >>> signer.dumps({"user": 42})
    'AaW...<22 characters of tag>'

The marker is one letter ``A`` to ``v``: its index in the base64url alphabet is a bit
field. Bit 1 set means a 32-byte tag (else 16), bit 2 an expiry, bit 4 a payload
written by Python's json module (see ``dumps``), bit 8 a session id; bits 16 and 32
are the compression: 0 none, 16 zstandard against a shipped dictionary, 32 zstandard
without one. The body, before base64url, is::

    issued_at (4 bytes, big-endian Unix seconds)
    [expires_at (4 bytes), when the marker says so]
    [session id (8 bytes), when the marker says so]
    [dictionary id (1 byte), when compressed against a dictionary]
    payload (JSON text, or a magic-less zstandard frame of it)

Format 1's marker is ``"0"`` to ``"7"`` (bit 1 compressed without a dictionary, bit 2
expiry, bit 4 Python json), its body has no session id or dictionary id, and its tag
is 32 bytes, under keys derived apart from format 2's. See docs/format.md.

``dumps`` = serialize -> date -> maybe compress -> frame -> encode -> sign.
``loads`` = check length -> read the marker -> verify -> decode -> check times -> maybe decompress -> deserialize.

``typed=True`` and ``encrypt=True`` (``blake2sign_web.extended``) are implemented by a subclass that
``SerializerSigner(...)`` returns when either is asked for, so that the methods here, the path of every
plain signed token, carry no test for them.
"""

from __future__ import annotations

import json
import math
import struct
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from hmac import compare_digest
from typing import Any, Final, NamedTuple, TypeVar

import orjson
import pybase64

from . import compression, dictionaries
from .compression import LEVEL as COMPRESSION_LEVEL
from .encoding import ALTCHARS, PADDING
from .exceptions import BadSignature, NotJSON, SignatureExpired  # NotJSON's home was here: still importable
from .keys import TAG_SIZES
from .signer import MAX_TOKEN_LENGTH, Signer, is_count, mac_keys

Seconds = int | float | timedelta

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
#: Tokens issued up to this many seconds in the future (another server's clock) still load.
CLOCK_SKEW: Final = 60
FORMATS: Final = (1, 2)

# Marker bits. EXPIRES and PYTHON_JSON mean the same in both formats.
_COMPRESSED: Final = 1  # format 1: a zstandard frame without a dictionary
_TAG_32: Final = 1  # format 2: the tag is 32 bytes, not 16
_EXPIRES: Final = 2
#: The payload is Python json text (values orjson refuses): read it with json.loads, not orjson.
_PYTHON_JSON: Final = 4
_SESSION_ID: Final = 8  # format 2
_DICTIONARY: Final = 16  # format 2: a zstandard frame against the dictionary the body names
_ZSTD: Final = 32  # format 2: a zstandard frame without a dictionary
SESSION_ID_SIZE: Final = 8

#: Format 1's markers, by flags; format 2's are the base64url alphabet, indexed by flags.
_MARKERS_1: Final = (b"0", b"1", b"2", b"3", b"4", b"5", b"6", b"7")
_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_MARKERS_2: Final = tuple(_ALPHABET[i : i + 1] for i in range(48))  # 48 to 63 ("w" to "_") are unused
_TIMESTAMP_LIMIT: Final = 2**32
_ISSUED: Final = struct.Struct(">I")
_ISSUED_EXPIRES: Final = struct.Struct(">II")
_U32: Final = struct.Struct(">I")

NO_COMPRESSION, ZSTD, ZSTD_DICTIONARY = 0, 1, 2


class Layout(NamedTuple):
    """What a marker says about the rest of the token."""

    format: int
    tag_size: int
    expires: bool
    python_json: bool
    session_id: bool
    compression: int  # NO_COMPRESSION, ZSTD or ZSTD_DICTIONARY
    #: Bytes of the body before the payload.
    header_size: int


def _layouts() -> dict[bytes, Layout]:
    layouts = {}
    for flags, marker in enumerate(_MARKERS_1):
        kind = ZSTD if flags & _COMPRESSED else NO_COMPRESSION
        header = 8 if flags & _EXPIRES else 4
        layouts[marker] = Layout(1, 32, bool(flags & _EXPIRES), bool(flags & _PYTHON_JSON), False, kind, header)
    for flags, marker in enumerate(_MARKERS_2):
        kind = ZSTD_DICTIONARY if flags & _DICTIONARY else ZSTD if flags & _ZSTD else NO_COMPRESSION
        header = 4 + 4 * bool(flags & _EXPIRES) + SESSION_ID_SIZE * bool(flags & _SESSION_ID)
        header += kind == ZSTD_DICTIONARY
        layouts[marker] = Layout(
            2,
            32 if flags & _TAG_32 else 16,
            bool(flags & _EXPIRES),
            bool(flags & _PYTHON_JSON),
            bool(flags & _SESSION_ID),
            kind,
            header,
        )
    return layouts


#: Every marker a reader knows, by its one byte; any other is not a token of ours.
LAYOUTS: Final = _layouts()
#: LAYOUTS by the byte's value (None: no marker), for the read path: an index, not a slice and a lookup.
_LAYOUT_OF_BYTE: Final = tuple(LAYOUTS.get(bytes([value])) for value in range(256))


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


_S = TypeVar("_S", bound="SerializerSigner")


class SerializerSigner(Signer):
    """Signs JSON-serializable values with an issue time, optional expiry and compression."""

    domain = "serializer"

    def __new__(cls: type[_S], *args: Any, **options: Any) -> _S:
        """A plain signer; with ``typed``, ``encrypt`` or ``decrypt``, the subclass that implements them."""
        if cls is SerializerSigner and (options.get("typed") or options.get("encrypt") or options.get("decrypt")):
            from .extended import ExtendedSerializerSigner

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
        if (typed or encrypt or decrypt) and not isinstance(self, _extended_class()):
            # A subclass of SerializerSigner gets here: only SerializerSigner itself dispatches.
            raise TypeError(f"{type(self).__name__} does not implement typed or encrypted tokens")
        if format == 1 and (typed or encrypt):
            raise ValueError(
                "format=1 writes tokens for releases that read only format 1, which read neither typed nor "
                "encrypted tokens: use format=2 with typed=True or encrypt=True"
            )
        if compress_encrypted and not encrypt:
            raise ValueError("compress_encrypted=True applies to encrypted tokens: pass encrypt=True too")
        if compression not in ("zstd", None):
            raise ValueError(f"compression must be 'zstd' or None; got {compression!r}")
        if dictionary is not None:
            try:
                dictionaries.load(dictionary)
            except ValueError as error:
                raise ValueError(f"dictionary must be a shipped dictionary id or None: {error}") from None
            if compression is not None and format == 2:
                # Read and prepare it now, at construction: the first dumps may run on an event
                # loop, where reading a package file would block it.
                dictionaries.for_compression(dictionary, COMPRESSION_LEVEL)
        if not is_count(compression_threshold) or compression_threshold < 0:
            raise ValueError(f"compression_threshold must be an int of bytes >= 0; got {compression_threshold!r}")
        if not is_count(tag_size) or tag_size not in TAG_SIZES:
            raise ValueError(f"tag_size must be 16 or 32 (bytes); got {tag_size!r}")
        if not is_count(format) or format not in FORMATS:
            raise ValueError(
                f"format must be 2, or 1 while processes that read only format 1 still run; got {format!r}"
            )
        if not is_count(max_decompressed_size) or max_decompressed_size < 1:
            raise ValueError(f"max_decompressed_size must be a positive int; got {max_decompressed_size!r}")
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
        # Format 2 compresses against the dictionary, when there is one, at any size.
        self._dictionary_id = dictionary if compression is not None and format == 2 else None
        self._dictionary_byte = bytes([dictionary]) if dictionary is not None else b""
        self._tag_flag = _TAG_32 if tag_size == 32 else 0
        self._clock = clock
        self.typed = typed
        self.encrypt = encrypt
        self.decrypt = decrypt or encrypt
        self.compress_encrypted = compress_encrypted

    def _derive_keys(self, secrets: list[bytes]) -> None:
        super()._derive_keys(secrets)
        # Format 2's domain names the format and the tag size: a format-1 key never tags
        # format-2 text, and a 16-byte tag is never the start of a 32-byte one.
        self._format2 = mac_keys(
            secrets,
            domain=f"{self.domain}.format2.tag{self.tag_size}",
            purpose=self.purpose,
            hasher=self.hasher,
            tag_size=self.tag_size,
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r}, "
            f"max_age={self.max_age!r}, compression={self.compression!r}, dictionary={self.dictionary!r}, "
            f"tag_size={self.tag_size!r}, format={self.format!r})"
        )

    def dumps(self, obj: Any, *, expires_in: Seconds | None = None, session_id: bytes | None = None) -> str:
        """Serialize, sign and date ``obj``; raises TypeError for values JSON cannot carry.

        What Python's json module refuses is refused here too (``refuse_non_json``), though
        orjson would write some of it (a datetime, UUID, enum or dataclass) and read it back
        as another type.

        orjson writes the value; what it refuses but Python's json module accepts (integers
        beyond 64 bits, strings with lone surrogates, non-str dict keys, nesting deeper than
        254), as Django's and Starlette's session serializers do, is written by json instead
        and marked so, because orjson would read a big integer back as a float.

        ``session_id`` (exactly 8 bytes) is carried in the token, under the MAC, and given
        back by ``load_token``: what lets a server revoke one session among many.
        """
        refuse_non_json(obj)
        try:
            payload = orjson.dumps(obj)
            flags = 0
        except orjson.JSONEncodeError:
            payload = _python_json(obj)
            flags = _PYTHON_JSON
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
            flags |= _EXPIRES
        if self.format == 1:
            return self._dumps_format_1(payload, header, flags, session_id)
        if session_id is not None:
            if type(session_id) is not bytes or len(session_id) != SESSION_ID_SIZE:
                raise ValueError(f"session_id must be exactly {SESSION_ID_SIZE} bytes; got {session_id!r}")
            header += session_id
            flags |= _SESSION_ID
        if self._dictionary_id is not None:
            packed = compression.compress(payload, self._dictionary_id)
            # Kept when the token gets shorter. base64url writes n bytes as (4n + 2) // 3 characters, which grows
            # with every byte, so that is when the frame and the dictionary's byte are fewer bytes than the JSON.
            if len(packed) + 1 < len(payload):
                header += self._dictionary_byte
                payload, flags = packed, flags | _DICTIONARY
        elif self._compress and len(payload) >= self.compression_threshold:
            packed = compression.compress(payload)
            if len(packed) <= len(payload) * (1 - COMPRESSION_MIN_GAIN):
                payload, flags = packed, flags | _ZSTD
        body = pybase64.b64encode(header + payload, ALTCHARS).rstrip(b"=")
        return self._seal(_MARKERS_2[flags | self._tag_flag] + body, self._format2)

    def _dumps_format_1(self, payload: bytes, header: bytes, flags: int, session_id: bytes | None) -> str:
        """Format 1, for a fleet still upgrading: no session id, no dictionary, a 32-byte tag."""
        if session_id is not None:
            raise ValueError("format 1 tokens cannot carry a session_id: use format=2")
        if self._compress and len(payload) >= self.compression_threshold:
            packed = compression.compress(payload)
            if len(packed) <= len(payload) * (1 - COMPRESSION_MIN_GAIN):
                payload, flags = packed, flags | _COMPRESSED
        body = pybase64.b64encode(header + payload, ALTCHARS).rstrip(b"=")
        return self._seal(_MARKERS_1[flags] + body, self._format1)

    def loads(self, token: str | bytes, *, max_age: Seconds | None = None) -> Any:
        """Return the value of a valid token; BadSignature (or SignatureExpired) otherwise."""
        return self._load(token, max_age)[0]

    def load_token(self, token: str | bytes, *, max_age: Seconds | None = None) -> LoadedToken:
        """Like ``loads``, but also tell when the token was issued and expires, by which key, and its session id."""
        value, issued_at, expires_at, used_fallback, session_id = self._load(token, max_age)
        loaded = LoadedToken(value, issued_at, expires_at, used_fallback)
        if session_id is not None:
            loaded.session_id = session_id
        return loaded

    # extended.py repeats the steps after verification (times, decompression, parsing) for encrypted tokens:
    # a change here belongs there too.
    def _load(self, token: str | bytes, max_age: Seconds | None) -> tuple[Any, int, int | None, bool, bytes | None]:
        # Every request with a session cookie runs this: the layout is unpacked once, as locals.
        raw = token if type(token) is bytes and len(token) <= self.max_token_length else self._ascii(token)
        # Not yet verified: the marker only picks which format's keys and tag length to try.
        layout = _LAYOUT_OF_BYTE[raw[0]] if raw else None
        if layout is None:
            if raw[:1] == b"x":  # encryption.MARKER
                raise BadSignature("unknown token format: an encrypted one, and this signer does not decrypt")
            raise BadSignature("unknown token format")
        format, tag_size, expires, python_json, has_session_id, kind, header_size = layout
        keys = self._format2 if format == 2 else self._format1
        # The current key first, here (_verify's first step, without its call); _verify tries them all.
        current, _, key_tag_size, tag_chars = keys
        if len(raw) <= tag_chars:  # a marker and a tag at the least
            raise BadSignature("malformed token")
        text = raw[:-tag_chars]
        state = current.copy()
        state.update(text)
        if compare_digest(pybase64.b64encode(state.digest()[:key_tag_size], ALTCHARS)[:tag_chars], raw[-tag_chars:]):
            used_fallback = False
        else:
            text, used_fallback = self._verify(raw, keys)
        if format == 2 and tag_size != self.tag_size:  # a marker never chooses a shorter tag than configured
            raise BadSignature("token has another tag size")
        encoded = text[1:]
        try:
            body = pybase64.b64decode(encoded + PADDING[len(encoded) % 4], ALTCHARS, True)  # validate
        except ValueError:
            raise BadSignature("malformed token body") from None
        if len(body) < header_size:
            raise BadSignature("token body too short")
        if expires:
            issued_at, expires_at = _ISSUED_EXPIRES.unpack_from(body)
        else:
            issued_at, expires_at = _U32.unpack_from(body)[0], None
        session_id = None
        if has_session_id:
            start = 8 if expires else 4
            session_id = body[start : start + SESSION_ID_SIZE]
        now = self._clock()
        if issued_at > now + CLOCK_SKEW:
            raise BadSignature("token issued in the future")
        limit = self.max_age if max_age is None else to_seconds(max_age, "max_age")
        if limit is not None and now - issued_at > limit:
            raise SignatureExpired(f"token is older than {limit} seconds", expired_at=issued_at + limit)
        if expires_at is not None and now >= expires_at:
            raise SignatureExpired("token has passed its expiry", expired_at=expires_at)
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


#: Exact types json writes as they are: checked by identity, the common case.
_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
#: Containers visited before giving up on a value (a cycle, or a huge one): json then decides.
_MAX_CONTAINERS: Final = 100_000


def refuse_non_json(value: Any) -> None:
    """NotJSON (a TypeError) for any value Python's json module would refuse, naming where it is.

    orjson writes datetimes, dates, UUIDs, enums and dataclasses natively, and they would read
    back as strings or dicts, far from the cause; Django's and Starlette's session serializers
    (json) raise TypeError at save instead, and so does this. Subclasses of str, int, float,
    dict, list and tuple are accepted, as json accepts them (an IntEnum is written as its int).
    Dict keys are left to the serializers (json refuses the same keys). One loop without
    recursion: about 2 us for a login-sized session on the reference machine.
    """
    pending = [value]
    visited = 0
    while pending and visited < _MAX_CONTAINERS:
        container = pending.pop()
        visited += 1
        if type(container) in _JSON_SCALARS:
            continue
        if isinstance(container, dict):
            items: Any = container.values()
        elif isinstance(container, (list, tuple)):
            items = container
        elif isinstance(container, (str, int, float)):
            continue
        else:
            raise _locate(value, ())
        for item in items:
            if type(item) not in _JSON_SCALARS:
                pending.append(item)


def _locate(value: Any, path: tuple[object, ...]) -> NotJSON:
    """The slow path, once something was refused: find the first such value and say where it is."""
    stack: list[tuple[Any, tuple[object, ...]]] = [(value, path)]
    visited = 0
    while stack and visited < _MAX_CONTAINERS:
        item, where = stack.pop()
        visited += 1
        if type(item) in _JSON_SCALARS:
            continue
        if isinstance(item, dict):
            stack.extend((child, (*where, key)) for key, child in reversed(item.items()))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, (*where, index)) for index, child in reversed(list(enumerate(item))))
        elif not isinstance(item, (str, int, float)):
            return NotJSON(type(item).__qualname__, "".join(f"[{key!r}]" for key in where), _typed_option(item))
    return NotJSON(type(value).__qualname__, "", _typed_option(value))


#: What names typed tokens for the core's own callers: adapters rename it (``NotJSON.name_option``).
TYPED_OPTION: Final = "SerializerSigner(typed=True)"


def _typed_option(value: Any) -> str | None:
    """``TYPED_OPTION`` when a typed token would keep ``value`` as itself (a datetime, a UUID...), else None."""
    from .typed import HOLDS  # only on this slow path, once a value was refused

    return TYPED_OPTION if isinstance(value, HOLDS) else None


def _python_json(obj: Any) -> bytes:
    """``obj`` as ASCII JSON by Python's json module, NaN and infinities written as null as orjson does."""
    try:
        return json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
    except (ValueError, RecursionError) as error:  # a cycle, a NaN dict key, too deep, too many digits
        raise TypeError(f"value is not JSON serializable: {error}") from None


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None, in lists, tuples and dict values."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _extended_class() -> type[SerializerSigner]:
    from .extended import ExtendedSerializerSigner

    return ExtendedSerializerSigner


def to_seconds(value: Seconds, name: str) -> int:
    """Whole seconds from a number or timedelta; ValueError for anything not positive."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value
    else:
        raise TypeError(f"{name} must be seconds (int or float) or a timedelta, not {type(value).__name__}")
    if not seconds > 0 or seconds >= _TIMESTAMP_LIMIT:
        raise ValueError(f"{name} must be a positive number of seconds below 2**32; got {value!r}")
    return math.ceil(seconds)
