"""SerializerSigner: JSON values in, timestamped and signed tokens out.

Token format 1 for values (``SerializerSigner``)::

    >>> signer = SerializerSigner("a long random secret", purpose="sessions")
    >>> signer.dumps({"user": 42})
    '0aSqbPHsidXNlciI6NDJ9<43 characters of MAC>'

The marker is ``"0"`` to ``"7"``: bit 1 set means the body is zstandard-compressed,
bit 2 set means an expiry follows the issue time, bit 4 set means the payload was
written by Python's json module (see ``dumps``). The body, before base64url, is::

    issued_at (4 bytes, big-endian Unix seconds)
    [expires_at (4 bytes), when the marker says so]
    payload (JSON text, or a magic-less zstandard frame of it)

``dumps`` = serialize -> maybe compress -> frame -> encode -> sign.
``loads`` = check length -> verify -> decode -> check times -> maybe decompress -> deserialize.
"""

from __future__ import annotations

import json
import math
import struct
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Final, NamedTuple

import orjson
import pybase64

from . import compression
from .encoding import ALTCHARS, PADDING
from .exceptions import BadSignature, SignatureExpired
from .signer import MAX_TOKEN_LENGTH, Signer, is_count

Seconds = int | float | timedelta

#: Default size from which payloads are compressed. Below about 512 bytes compressing
#: costs more time (~5 us per round trip) than everything else a token needs; adapters
#: whose tokens travel on every request (cookies) may choose a lower one.
COMPRESSION_THRESHOLD: Final = 512
#: Compression is kept only if it saves at least this fraction of the payload.
COMPRESSION_MIN_GAIN: Final = 0.1
#: Default bound on a decompressed payload.
MAX_DECOMPRESSED_SIZE: Final = 256 * 1024
#: Tokens issued up to this many seconds in the future (another server's clock) still load.
CLOCK_SKEW: Final = 60
_MARKERS: Final = (b"0", b"1", b"2", b"3", b"4", b"5", b"6", b"7")
_COMPRESSED: Final = 1
_EXPIRES: Final = 2
#: The payload is Python json text (values orjson refuses): read it with json.loads, not orjson.
_PYTHON_JSON: Final = 4
_TIMESTAMP_LIMIT: Final = 2**32
_ISSUED: Final = struct.Struct(">I")
_ISSUED_EXPIRES: Final = struct.Struct(">II")


class LoadedToken(NamedTuple):
    """A verified token's value with the facts an integration may need about it."""

    value: Any
    issued_at: int
    expires_at: int | None
    #: True when a fallback secret verified it: re-sign it with the current secret.
    used_fallback: bool


class SerializerSigner(Signer):
    """Signs JSON-serializable values with an issue time, optional expiry and compression."""

    domain = "serializer"

    def __init__(
        self,
        secret: str | bytes,
        *,
        purpose: str,
        max_age: Seconds | None = None,
        fallbacks: Iterable[str | bytes] = (),
        hasher: str = "blake2b",
        compression: str | None = "zstd",
        compression_threshold: int = COMPRESSION_THRESHOLD,
        max_token_length: int = MAX_TOKEN_LENGTH,
        max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(secret, purpose=purpose, fallbacks=fallbacks, hasher=hasher, max_token_length=max_token_length)
        if compression not in ("zstd", None):
            raise ValueError(f"compression must be 'zstd' or None; got {compression!r}")
        if not is_count(compression_threshold) or compression_threshold < 0:
            raise ValueError(f"compression_threshold must be an int of bytes >= 0; got {compression_threshold!r}")
        if not is_count(max_decompressed_size) or max_decompressed_size < 1:
            raise ValueError(f"max_decompressed_size must be a positive int; got {max_decompressed_size!r}")
        if not callable(clock):
            raise TypeError("clock must be a callable returning Unix seconds, like time.time")
        self.max_age = None if max_age is None else to_seconds(max_age, "max_age")
        self.compression = compression
        self.compression_threshold = compression_threshold
        self.max_decompressed_size = max_decompressed_size
        self._compress = compression is not None
        self._clock = clock

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r}, "
            f"max_age={self.max_age!r}, compression={self.compression!r})"
        )

    def dumps(self, obj: Any, *, expires_in: Seconds | None = None) -> str:
        """Serialize, sign and date ``obj``; raises TypeError for values JSON cannot carry.

        orjson writes the value; what it refuses but Python's json module accepts (integers
        beyond 64 bits, strings with lone surrogates, non-str dict keys, nesting deeper than
        254), as Django's and Starlette's session serializers do, is written by json instead
        and marked so, because orjson would read a big integer back as a float.
        """
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
        if self._compress and len(payload) >= self.compression_threshold:
            packed = compression.compress(payload)
            if len(packed) <= len(payload) * (1 - COMPRESSION_MIN_GAIN):
                payload, flags = packed, flags | _COMPRESSED
        now = int(self._clock())
        if expires_in is None:
            header = _ISSUED.pack(now)
        else:
            expires_at = now + to_seconds(expires_in, "expires_in")
            if expires_at >= _TIMESTAMP_LIMIT:
                raise ValueError("expires_in reaches past 2106, the format's last representable second")
            header = _ISSUED_EXPIRES.pack(now, expires_at)
            flags |= _EXPIRES
        body = pybase64.b64encode(header + payload, ALTCHARS).rstrip(b"=")
        return self._seal(_MARKERS[flags] + body)

    def loads(self, token: str | bytes, *, max_age: Seconds | None = None) -> Any:
        """Return the value of a valid token; BadSignature (or SignatureExpired) otherwise."""
        return self._load(token, max_age)[0]

    def load_token(self, token: str | bytes, *, max_age: Seconds | None = None) -> LoadedToken:
        """Like ``loads``, but also tell when the token was issued, when it expires, and by which key."""
        return LoadedToken(*self._load(token, max_age))

    def _load(self, token: str | bytes, max_age: Seconds | None) -> tuple[Any, int, int | None, bool]:
        text, used_fallback = self._open(token)
        flags = text[0] - 0x30
        if not 0 <= flags <= 7:
            raise BadSignature("unknown token format")
        encoded = text[1:]
        try:
            body = pybase64.b64decode(encoded + PADDING[len(encoded) % 4], ALTCHARS, True)  # validate
        except ValueError:
            raise BadSignature("malformed token body") from None
        try:
            if flags & _EXPIRES:
                issued_at, expires_at = _ISSUED_EXPIRES.unpack_from(body)
                payload = body[8:]
            else:
                issued_at = _ISSUED.unpack_from(body)[0]
                expires_at = None
                payload = body[4:]
        except struct.error:
            raise BadSignature("token body too short") from None
        now = self._clock()
        if issued_at > now + CLOCK_SKEW:
            raise BadSignature("token issued in the future")
        limit = self.max_age if max_age is None else to_seconds(max_age, "max_age")
        if limit is not None and now - issued_at > limit:
            raise SignatureExpired(f"token is older than {limit} seconds", expired_at=issued_at + limit)
        if expires_at is not None and now >= expires_at:
            raise SignatureExpired("token has passed its expiry", expired_at=expires_at)
        try:
            if flags & _COMPRESSED:
                payload = compression.decompress(payload, self.max_decompressed_size)
            elif len(payload) > self.max_decompressed_size:
                raise ValueError("payload too large")
            value = json.loads(payload.decode("ascii")) if flags & _PYTHON_JSON else orjson.loads(payload)
        # orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError and int's digit limit are
        # ValueErrors; json raises RecursionError for nesting deeper than this thread's stack allows.
        except (ValueError, RecursionError) as error:
            raise BadSignature(f"unreadable payload: {error}") from None
        return value, issued_at, expires_at, used_fallback


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
