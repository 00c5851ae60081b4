"""Fuzz targets: functions of bytes that raise only when blake2sign_web breaks its contract.

The contract under test: anything a client can send is either accepted or refused with
``BadSignature`` (a bad cookie gives an empty session, a bad Range header the whole
file), never another exception. Each target reads its input in a fixed layout (a few
option bytes, then the text under test) so that ``make_corpus.py`` can write real tokens,
cookies, links and headers as seeds in the same layout. The ``*_body``/``*_payload``
targets sign what the fuzzer writes with the real keys, so it explores what lies behind
the MAC instead of failing the MAC check on nearly every input.

``build(name)`` returns a target; ``tests/fuzz/run.py`` runs it under atheris, and the
seed and regression tests call it directly. A target raises ``AssertionError`` for a
broken property and lets any unexpected exception through: both are crashes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import time
from base64 import b64encode
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from blake2sign_web import BadSignature, SerializerSigner, Signer, URLSigner
from blake2sign_web.links.files import ByteRange, RangeNotSatisfiable, requested_range
from blake2sign_web.links.signer import _parse_query as parse_query
from blake2sign_web.links.signer import _split as split_url
from blake2sign_web.sessions.chunks import (
    CHUNK_LIMIT,
    COOKIE_LIMIT,
    MIN_CHUNKS,
    TooManyChunks,
    chunk_name,
    join_chunks,
    split_token,
    stale_chunks,
)
from blake2sign_web.signing import compression
from blake2sign_web.signing.encoding import b64decode
from blake2sign_web.signing.serializer import LAYOUTS, SESSION_ID_SIZE

Target = Callable[[bytes], None]

SECRET: Final = "fuzzing secret, only for the fuzz targets and their seed corpus"
OLD_SECRET: Final = "an older fuzzing secret, still accepted as a fallback"
#: The clock of every signer here: seed tokens made at this second stay valid for good.
NOW: Final = 1_800_000_000
#: The shipped session dictionary's id.
DICTIONARY: Final = 1


def fixed_clock() -> float:
    return NOW


#: The serializer configurations the loads targets choose from (by the input's first byte).
SERIALIZERS: Final = tuple(
    SerializerSigner(SECRET, purpose="fuzz", clock=fixed_clock, **options)  # type: ignore[arg-type]
    for options in (
        {"dictionary": DICTIONARY},  # what the session adapters use
        {},  # the core's default: format 2, zstd without a dictionary from 512 bytes
        {"compression": None, "tag_size": 32},
        {"format": 1, "compression_threshold": 0},
        {"format": 1, "compression": None},
        {"dictionary": DICTIONARY, "max_age": 3600, "fallbacks": (OLD_SECRET,)},
        {"hasher": "blake3", "compression_threshold": 0, "max_age": 60},
        {"hasher": "blake2s", "tag_size": 32, "dictionary": DICTIONARY, "max_decompressed_size": 64},
    )
)
SIGNERS: Final = (
    Signer(SECRET, purpose="fuzz"),
    Signer(SECRET, purpose="fuzz", hasher="blake3", fallbacks=(OLD_SECRET,)),
    Signer(SECRET, purpose="fuzz", hasher="blake2s", max_token_length=128),
)
URL_SIGNERS: Final = (
    URLSigner(SECRET, purpose="fuzz", clock=fixed_clock),
    URLSigner(SECRET, purpose="fuzz", clock=fixed_clock, bind_host=True, ignore=("utm_*", "fbclid")),
    URLSigner(SECRET, purpose="fuzz", clock=fixed_clock, fallbacks=(OLD_SECRET,), max_url_length=256),
    URLSigner(SECRET, purpose="fuzz", clock=fixed_clock, signature_param="s", expires_param="e", nonce_param="n"),
)
#: What a link may be bound to, chosen by an option byte.
BINDINGS: Final[tuple[str | bytes | int | None, ...]] = (None, 42, "user@example.com", b"\x00\xffsession")
#: Markers of every known layout, then two unknown ones, chosen by an option byte.
MARKERS: Final = (*sorted(LAYOUTS), b"w", b"_")


def option(data: bytes, index: int) -> int:
    """The option byte at ``index``, 0 when the input is shorter."""
    return data[index] if len(data) > index else 0


def as_text(raw: bytes, mode: int) -> str | bytes:
    """The text under test as the adapters hand it over: bytes, latin-1 str (ASGI headers) or UTF-8 str."""
    if mode % 3 == 0:
        return raw
    if mode % 3 == 1:
        return raw.decode("latin-1")
    return raw.decode("utf-8", "surrogateescape")  # lone surrogates too, which no request can carry


#: Deepest nesting orjson writes; dumps hands deeper values to Python's json, whose recursion may give up first.
ORJSON_MAX_DEPTH: Final = 254


def nesting(value: Any) -> int:
    """How deep lists and dicts nest in ``value`` (counted without recursion: the values may nest deeply)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest


@contextlib.contextmanager
def saving(value: Any) -> Iterator[None]:
    """Saving a session that loaded may fail only as too large (ValueError), or as too deep to write.

    The second is a known limit, left alone: loads reads nesting down to the stack's limit, dumps
    writes less deep, and only a token made with the key can nest between the two (dumps never writes one).
    """
    try:
        yield
    except ValueError:  # over max_decompressed_size, max_token_length or the cookie limit
        pass
    except TypeError:
        if nesting(value) <= ORJSON_MAX_DEPTH:
            raise


def refused(call: Callable[[], Any]) -> Any:
    """``call()``, or None when it raises BadSignature (or a subclass); anything else propagates."""
    try:
        return call()
    except BadSignature:
        return None


# 1. SerializerSigner.loads / load_token on arbitrary text.


def serializer_loads(data: bytes) -> None:
    """Layout: signer, mode (text kind, max_age override, load_token), token."""
    signer = SERIALIZERS[option(data, 0) % len(SERIALIZERS)]
    mode = option(data, 1)
    token = as_text(data[2:], mode)
    max_age = (None, 1, 3600, 2**32 - 1)[(mode >> 2) % 4]
    if mode & 0x10:
        loaded = refused(lambda: signer.load_token(token, max_age=max_age))
        if loaded is not None:
            assert loaded.issued_at <= NOW + 60, "a token issued in the future loaded"
            assert loaded.expires_at is None or loaded.expires_at > NOW, "an expired token loaded"
    else:
        refused(lambda: signer.loads(token, max_age=max_age))


def serializer_loads_input(signer_index: int, token: str, mode: int = 1) -> bytes:
    return bytes([signer_index, mode]) + token.encode("ascii")


# 2. Signer.unsign on arbitrary text.


def signer_unsign(data: bytes) -> None:
    """Layout: signer, text kind, token."""
    signer = SIGNERS[option(data, 0) % len(SIGNERS)]
    value = refused(lambda: signer.unsign(as_text(data[2:], option(data, 1))))
    assert value is None or isinstance(value, bytes)


def signer_unsign_input(signer_index: int, token: str) -> bytes:
    return bytes([signer_index, 1]) + token.encode("ascii")


# 3. Tokens under a valid MAC with any marker and any body.


def seal_body(signer: SerializerSigner, marker: bytes, body: bytes) -> str:
    """A token only a key holder could make: ``marker`` and ``body`` under the keys of the marker's format (and,
    but for format 1, the current key's id after the marker)."""
    layout = LAYOUTS.get(marker)
    if layout is not None and layout.format == 1:
        keys, prefix = signer._format1, marker
    else:
        keys, prefix = signer._format2, marker + signer._format2_id
    room = (signer.max_token_length - keys.tag_chars - len(prefix)) * 3 // 4  # bytes of body that fit the token
    return signer._seal(prefix + b64encode(body[:room], b"-_").rstrip(b"="), keys)


def serializer_body(data: bytes) -> None:
    """Layout: signer, marker, time fix-up, body (issued_at, [expires_at], [session id], [dict id], payload).

    Bit 1 of the fix-up byte sets issued_at to NOW and bit 2 expires_at to an hour later,
    so the fuzzer gets past the time checks without guessing the clock.
    """
    signer = SERIALIZERS[option(data, 0) % len(SERIALIZERS)]
    marker = MARKERS[option(data, 1) % len(MARKERS)]
    fix_up = option(data, 2)
    body = bytearray(data[3:])
    if fix_up & 1 and len(body) >= 4:
        body[0:4] = struct.pack(">I", NOW)
    if fix_up & 2 and len(body) >= 8:
        body[4:8] = struct.pack(">I", NOW + 3600)
    token = seal_body(signer, marker, bytes(body))
    refused(lambda: signer.loads(token))
    refused(lambda: signer.load_token(token))


def serializer_body_input(signer_index: int, token: str) -> bytes:
    """The seed for ``serializer_body`` that makes ``token`` (a real one) again."""
    raw = token.encode("ascii")
    layout = LAYOUTS[raw[:1]]
    encoded = raw[layout.format : -((layout.tag_size * 8 + 5) // 6)]  # after the marker and format 2's key id
    return bytes([signer_index, MARKERS.index(raw[:1]), 0]) + b64decode(encoded)


# 4. A valid MAC over any payload, framed and compressed as dumps would: the JSON readers, decompression.

#: Option bits of ``serializer_payload``'s second byte.
PAYLOAD_ZSTD, PAYLOAD_DICTIONARY, PAYLOAD_PYTHON_JSON, PAYLOAD_EXPIRES, PAYLOAD_SESSION_ID, PAYLOAD_FORMAT_1 = (
    1,
    2,
    4,
    8,
    16,
    32,
)


def seal_payload(signer: SerializerSigner, options: int, payload: bytes, now: int) -> str:
    """A token of ``payload`` (JSON text or anything else) as ``dumps`` frames it, issued at ``now``.

    ``options`` are the PAYLOAD_* bits; compression happens here, so the fuzzer writes the
    text and the frame around it is always well formed.
    """
    header = struct.pack(">I", now)
    flags = 0
    if options & PAYLOAD_EXPIRES:
        header += struct.pack(">I", now + 3600)
        flags |= 2
    if options & PAYLOAD_PYTHON_JSON:
        flags |= 4
    if options & PAYLOAD_FORMAT_1:
        if options & PAYLOAD_ZSTD:
            payload, flags = compression.compress(payload), flags | 1
        marker, keys = str(flags).encode(), signer._format1
    else:
        if options & PAYLOAD_SESSION_ID:
            header += b"fuzz-sid"[:SESSION_ID_SIZE]
            flags |= 8
        if options & PAYLOAD_DICTIONARY:
            header += bytes([DICTIONARY])
            payload, flags = compression.compress(payload, DICTIONARY), flags | 16
        elif options & PAYLOAD_ZSTD:
            payload, flags = compression.compress(payload), flags | 32
        flags |= 1 if signer.tag_size == 32 else 0
        marker, keys = MARKERS_2[flags] + signer._format2_id, signer._format2
    room = (signer.max_token_length - keys.tag_chars - len(marker)) * 3 // 4
    return signer._seal(marker + b64encode((header + payload)[:room], b"-_").rstrip(b"="), keys)


MARKERS_2: Final = tuple(bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def serializer_payload(data: bytes) -> None:
    """Layout: signer, PAYLOAD_* options, payload. What loads returns must be what the JSON said."""
    signer = SERIALIZERS[option(data, 0) % len(SERIALIZERS)]
    options = option(data, 1)
    payload = data[2:]
    token = seal_payload(signer, options, payload, NOW)
    value = refused(lambda: signer.loads(token))
    if value is not None and not options & PAYLOAD_PYTHON_JSON:
        assert value == orjson.loads(payload), "loads returned another value than the payload's JSON"
    if isinstance(value, dict):
        with saving(value):  # a session that loads can be saved again, never a 500 on save
            signer.dumps(value)


def serializer_payload_input(signer_index: int, options: int, value: Any) -> bytes:
    """A seed of ``value`` as ``dumps`` would write it: orjson, or Python's json (and its flag) beyond 64 bits."""
    try:
        return bytes([signer_index, options]) + orjson.dumps(value)
    except orjson.JSONEncodeError:
        return bytes([signer_index, options | PAYLOAD_PYTHON_JSON]) + json.dumps(value).encode("ascii")


# 5. URLSigner.verify_link on any URL, and sign -> verify on any URL.


def url_verify(data: bytes) -> None:
    """Layout: URL signer, binding, text kind, URL (path and query, or absolute)."""
    signer = URL_SIGNERS[option(data, 0) % len(URL_SIGNERS)]
    bind = BINDINGS[option(data, 1) % len(BINDINGS)]
    url = as_text(data[3:], option(data, 2))
    link = refused(lambda: signer.verify_link(url, bind=bind))
    if link is not None:
        assert link.expires_at is None or link.expires_at > NOW, "an expired link verified"
        assert link.nonce is None or link.expires_at is not None, "a single-use link without expiry verified"


def url_verify_input(signer_index: int, binding: int, url: str) -> bytes:
    return bytes([signer_index, binding, 1]) + url.encode("utf-8", "surrogateescape")


def url_sign_verify(data: bytes) -> None:
    """Layout: URL signer, binding, expiry/single-use bits, URL.

    A link ``sign`` returns verifies, under its binding only, and a path stays a path (``sign``
    refuses, ValueError, an input that carries the signer's own expiry, nonce or signature).
    """
    signer = URL_SIGNERS[option(data, 0) % len(URL_SIGNERS)]
    binding = option(data, 1) % len(BINDINGS)
    kind = option(data, 2)
    url = data[3:].decode("utf-8", "surrogateescape")
    expires_in = 3600 if kind & 1 else None
    try:
        link = signer.sign(url, bind=BINDINGS[binding], expires_in=expires_in, single_use=bool(kind & 2))
    except ValueError:  # what sign cannot sign safely it refuses, with a ValueError (documented)
        return
    scheme, _, _, query, _ = split_url(url)
    if not scheme:
        parts = urlsplit(link)
        assert not parts.scheme, f"sign() turned a path into a link with scheme {parts.scheme!r}"
        assert not parts.netloc, f"sign() turned a path into a link to {parts.netloc!r}"
        assert not link.startswith(("//", "/\\", "\\")), "sign() returned a link a browser reads as a host"
    given = {name for name, _ in parse_query(query)}
    assert not given & {signer.signature_param, signer.expires_param, signer.nonce_param}, "signed its own parameter"
    verified = signer.verify_link(link, bind=BINDINGS[binding])
    assert verified.expires_at == (NOW + 3600 if expires_in else None)
    assert (verified.nonce is not None) == bool(kind & 2 and expires_in)
    other = BINDINGS[(binding + 1) % len(BINDINGS)]
    assert refused(lambda: signer.verify_link(link, bind=other)) is None, "a link verified under another binding"


def url_sign_verify_input(signer_index: int, binding: int, kind: int, url: str) -> bytes:
    return bytes([signer_index, binding, kind]) + url.encode("utf-8")


# 6. The Starlette middleware: Cookie headers -> the session, as request.cookies would find it.


def _starlette_middlewares() -> tuple[Any, ...]:
    from starlette.applications import Starlette

    from blake2sign_web.starlette import SessionMiddleware

    app = Starlette()
    return (
        SessionMiddleware(app, secret_key=SECRET, on_oversize="log"),
        SessionMiddleware(
            app,
            secret_key=SECRET,
            fallback_secrets=[OLD_SECRET],
            migrate_starlette_cookies=True,
            format=1,
            on_oversize="log",
        ),
        SessionMiddleware(app, secret_key=SECRET, session_cookie="sid", max_age=0, on_oversize="log"),
    )


def build_starlette_cookie() -> Target:
    from starlette.requests import cookie_parser

    middlewares = _starlette_middlewares()

    def starlette_cookie(data: bytes) -> None:
        """Layout: middleware, Cookie headers separated by LF. Same cookie as request.cookies; any gives a session."""
        middleware = middlewares[option(data, 0) % len(middlewares)]
        headers = data[1:].split(b"\n")[:4]
        cookies: dict[str, str] = {}
        for header in headers:
            cookies.update(cookie_parser(header.decode("latin-1")))
        cookie = middleware._read_cookie([(b"cookie", header) for header in headers])
        assert cookie == cookies.get(middleware.session_cookie), "another cookie than request.cookies holds"
        if cookie is not None:
            session, _ = middleware._load(cookie)
            assert isinstance(session, dict)
            if dict.__len__(session):
                session["fuzzed"] = True
                with saving(session):  # too large is logged (on_oversize="log")
                    middleware._session_writer.written(session, None)

    return starlette_cookie


def starlette_cookie_input(middleware_index: int, *headers: str) -> bytes:
    return bytes([middleware_index]) + b"\n".join(h.encode("latin-1") for h in headers)


def legacy_cookie(payload: bytes, secret: str = SECRET) -> str:
    """A cookie as Starlette's own SessionMiddleware writes it, of any payload bytes."""
    import itsdangerous

    return itsdangerous.TimestampSigner(secret).sign(b64encode(payload)).decode("ascii")


def build_starlette_legacy_body() -> Target:
    """Starlette-format cookies under a valid itsdangerous signature: the migration reader's JSON."""
    migrating = _starlette_middlewares()[1]

    def starlette_legacy_body(data: bytes) -> None:
        """Layout: payload (what Starlette would have base64-encoded: JSON, or anything)."""
        session, _ = migrating._load(legacy_cookie(data))
        assert isinstance(session, dict)

    return starlette_legacy_body


# 7. The Django engine's load of any cookie value, and of any payload under a valid MAC.


def build_django_session() -> Target:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.django_settings")
    import django

    django.setup()
    from blake2sign_web.django.conf import session_config
    from blake2sign_web.django.sessions import SessionStore

    signer = session_config().signer

    def django_session(data: bytes) -> None:
        """Layout: mode, then a cookie value (mode bit 1 clear) or a payload signed now (set; bits 2+ PAYLOAD_*)."""
        mode = option(data, 0)
        signed_now = mode & 1
        cookie = (
            seal_payload(signer, mode >> 1, data[1:], int(time.time())) if signed_now else data[1:].decode("latin-1")
        )
        store = SessionStore(session_key=cookie)
        value = store.load()
        assert isinstance(value, dict)
        if value:
            store["fuzzed"] = True
            with saving(value):  # SessionTooLarge is a ValueError
                store.save()

    return django_session


def django_session_input(cookie: str) -> bytes:
    return b"\x00" + cookie.encode("latin-1")


# 8. The Range header.

ETAG: Final = '"0123456789abcdef01234567"'
LAST_MODIFIED: Final = "Wed, 21 Oct 2026 07:28:00 GMT"
IF_RANGES: Final = (None, ETAG, LAST_MODIFIED, "W/" + ETAG, '"other"', "")


def byte_range(data: bytes) -> None:
    """Layout: file size (8 bytes, big-endian, below 2**63), If-Range choice, Range header (latin-1)."""
    size = int.from_bytes(data[:8].ljust(8, b"\0"), "big") >> 1
    if_range = IF_RANGES[option(data, 8) % len(IF_RANGES)]
    header = data[9:].decode("latin-1")
    chosen: ByteRange | RangeNotSatisfiable | None
    try:
        chosen = requested_range(header, if_range, size, ETAG, LAST_MODIFIED)
    except RangeNotSatisfiable as error:
        chosen = error
    if isinstance(chosen, RangeNotSatisfiable):
        assert chosen.size == size
        assert chosen.content_range == f"bytes */{size}"
    elif chosen is not None:
        assert isinstance(chosen, ByteRange)
        assert 0 <= chosen.start < chosen.stop <= size == chosen.size, f"range {chosen} outside a file of {size}"
        assert chosen.length == chosen.stop - chosen.start
        assert chosen.content_range == f"bytes {chosen.start}-{chosen.stop - 1}/{size}"


def byte_range_input(size: int, if_range: int, header: str) -> bytes:
    return (size << 1).to_bytes(8, "big") + bytes([if_range]) + header.encode("latin-1")


# 9. Encrypted tokens (encrypt=True): loads on any text, and any plaintext sealed under the real keys.

#: The options of the encrypted targets' signers, chosen by the input's first byte. Built when a target is
#: (they need the cryptography package).
ENCRYPTED_OPTIONS: Final[tuple[dict[str, Any], ...]] = (
    {"encrypt": True},
    {"encrypt": True, "typed": True, "fallbacks": (OLD_SECRET,)},
    {"encrypt": True, "compress_encrypted": True, "dictionary": DICTIONARY, "max_age": 3600},
    {"decrypt": True, "hasher": "blake3", "max_decompressed_size": 64},
)


def encrypted_signers() -> tuple[SerializerSigner, ...]:
    return tuple(
        SerializerSigner(SECRET, purpose="fuzz", clock=fixed_clock, **options) for options in ENCRYPTED_OPTIONS
    )


def build_encrypted_loads() -> Target:
    signers = encrypted_signers()

    def encrypted_loads(data: bytes) -> None:
        """Layout: signer, mode (text kind, max_age override, load_token), token. As ``serializer_loads``."""
        signer = signers[option(data, 0) % len(signers)]
        mode = option(data, 1)
        token = as_text(data[2:], mode)
        max_age = (None, 1, 3600, 2**32 - 1)[(mode >> 2) % 4]
        loaded = refused(lambda: signer.load_token(token, max_age=max_age))
        if loaded is not None:
            assert loaded.issued_at <= NOW + 60, "a token issued in the future loaded"
            assert loaded.expires_at is None or loaded.expires_at > NOW, "an expired token loaded"
            if isinstance(loaded.value, dict):
                with saving(loaded.value):
                    signer.dumps(loaded.value)

    return encrypted_loads


def encrypted_loads_input(signer_index: int, token: str, mode: int = 1) -> bytes:
    return bytes([signer_index, mode]) + token.encode("ascii")


#: The nonce of every token ``encrypted_plaintext`` seals: the fuzzer explores the plaintext, not the nonce.
FUZZ_NONCE: Final = bytes(range(24))


def build_encrypted_plaintext() -> Target:
    from blake2sign_web.signing.encryption import seal

    signers = encrypted_signers()

    def encrypted_plaintext(data: bytes) -> None:
        """Layout: signer, time fix-up, plaintext (flags, issued_at, [expires_at], [session id], [dict id], payload).

        Bit 1 of the fix-up byte sets issued_at to NOW and bit 2 expires_at to an hour later (when the
        plaintext is long enough), so the fuzzer gets past the time checks without guessing the clock.
        """
        signer = signers[option(data, 0) % len(signers)]
        fix_up = option(data, 1)
        plaintext = bytearray(data[2:])
        if fix_up & 1 and len(plaintext) >= 5:
            plaintext[1:5] = struct.pack(">I", NOW)
        if fix_up & 2 and len(plaintext) >= 9:
            plaintext[5:9] = struct.pack(">I", NOW + 3600)
        sealed = seal(signer._encryption, bytes(plaintext), FUZZ_NONCE)  # type: ignore[attr-defined]
        room = (signer.max_token_length - 2) * 3 // 4  # after the marker and the key id
        if len(sealed) > room:
            return
        key_id = signer._encryption.key_id.decode()  # type: ignore[attr-defined]
        token = "x" + key_id + b64encode(sealed, b"-_").decode("ascii").rstrip("=")
        value = refused(lambda: signer.loads(token))
        if isinstance(value, dict):
            with saving(value):  # a session that loads can be saved again, never a 500 on save
                signer.dumps(value)

    return encrypted_plaintext


def encrypted_plaintext_input(signer_index: int, plaintext: bytes, fix_up: int = 0) -> bytes:
    return bytes([signer_index, fix_up]) + plaintext


# 10. Sessions over 4 KB (chunked=True): join_chunks on any cookies, and split_token -> join_chunks on any token.

#: The session cookie names the chunk target chooses from: the adapters' defaults, a prefixed one, one with a dot.
CHUNK_NAMES: Final = ("session", "sessionid", "__Host-session", "s.1")
#: The cookie size limits the round trip chooses from: the browser's, and smaller ones, so that short inputs
#: already need several cookies.
CHUNK_LIMITS: Final = (COOKIE_LIMIT, 512, 128, 48)
CHUNK_ROUND_TRIP: Final = 1
#: bytes.translate table that clears the top bit: the round trip's tokens are ASCII, as every token is.
TO_ASCII: Final = bytes(byte & 0x7F for byte in range(256))


class CountedCookies(Mapping[str, str]):
    """The request's cookies by name, counting the lookups made, as ``request.COOKIES`` would be read."""

    def __init__(self, cookies: dict[str, str]) -> None:
        self._cookies = cookies
        self.lookups = 0

    def __getitem__(self, name: str) -> str:
        self.lookups += 1
        return self._cookies[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cookies)

    def __len__(self) -> int:
        return len(self._cookies)


def documented_chunk(name: str) -> Callable[[str], bool]:
    """Whether a cookie name is ``name.N``, N from 1 to 999 without leading zeros (the chunks a writer makes)."""
    pattern = re.compile(re.escape(name) + r"\.[1-9][0-9]{0,2}")
    return lambda cookie: pattern.fullmatch(cookie) is not None


def joined_as_documented(name: str, cookies: Mapping[str, str], max_chunks: int) -> str | None:
    """What ``join_chunks`` must return, written from its documented format; BadSignature where it must refuse."""
    first = cookies.get(name)
    if first is None:
        if any(map(documented_chunk(name), cookies)):
            raise BadSignature("chunks without their first cookie")
        return None
    if not (len(first) >= 3 and first[0] == first[2] == "." and first[1] in "23456789"):
        return first  # no chunk header: the token itself
    count = int(first[1])
    if count > max_chunks:
        raise BadSignature("over max_chunks")
    pieces = [first[3:]]
    for index in range(1, count):
        piece = cookies.get(f"{name}.{index}")
        if piece is None:
            raise BadSignature("a chunk is missing")
        pieces.append(piece)
    return "".join(pieces)


def chunk_cookies(data: bytes) -> None:
    """Layout: max_chunks (2 to 9: the byte plus one, at least 2), mode (bit 1: round trip; bits 2-3: name;
    bits 4-5: limit), attributes, text.

    Join (bit 1 clear): the text is the request's cookies, ``name=value`` per line (latin-1, the last of a
    name wins). Whatever they are, ``join_chunks`` gives None (no cookie of that name), the token its
    documented format says, or BadSignature, and reads at most ``max_chunks`` cookies to decide.

    Round trip (bit 1 set): the text is a token (ASCII, as tokens are). ``split_token`` gives at most
    ``max_chunks`` cookies that each fit the limit with the attributes, and join back to the token exactly,
    whatever stale chunks the browser still sends; or TooManyChunks past the cap; or ValueError for a token
    that starts with "." or attributes that leave no room.
    """
    max_chunks = max(option(data, 0) % CHUNK_LIMIT + 1, MIN_CHUNKS)  # the seeds' byte is max_chunks - 1
    mode = option(data, 1)
    name = CHUNK_NAMES[(mode >> 1) % len(CHUNK_NAMES)]
    if mode & CHUNK_ROUND_TRIP:
        limit = CHUNK_LIMITS[(mode >> 3) % len(CHUNK_LIMITS)]
        attributes = option(data, 2) * limit // 256
        token = data[3:].translate(TO_ASCII).decode("ascii")
        chunks_round_trip(name, token, attributes, limit, max_chunks)
        return
    jar: dict[str, str] = {}
    for line in data[3:].decode("latin-1").split("\n"):
        cookie, _, value = line.partition("=")
        jar[cookie] = value
    cookies = CountedCookies(jar)
    rejected = False
    try:
        joined = join_chunks(name, cookies, max_chunks=max_chunks)
    except BadSignature:  # only BadSignature (subclasses too) may escape; anything else is a crash
        joined, rejected = None, True
    if rejected:
        assert name in jar or any(map(documented_chunk(name), jar)), "join_chunks refused a request without a cookie"
        assert refused(lambda: joined_as_documented(name, jar, max_chunks)) is None, "a documented token refused"
    else:
        assert joined == joined_as_documented(name, jar, max_chunks), "join_chunks read another token"
    assert cookies.lookups <= max_chunks, f"join_chunks looked up {cookies.lookups} cookies, max_chunks={max_chunks}"
    assert joined is None or len(joined) <= sum(map(len, jar.values())), "a token longer than the cookies"


def chunks_round_trip(name: str, token: str, attributes: int, limit: int, max_chunks: int) -> None:
    refusal: ValueError | None = None
    try:
        cookies = split_token(name, token, attributes_length=attributes, limit=limit, max_chunks=max_chunks)
    except ValueError as error:  # TooManyChunks is one
        refusal = error
    if isinstance(refusal, TooManyChunks):
        assert refusal.needed > max_chunks, f"TooManyChunks for {refusal.needed} cookies, max_chunks={max_chunks}"
        return
    if refusal is not None:
        assert token.startswith(".") or "leaves no room" in str(refusal), f"split_token refused a token: {refusal}"
        return
    assert 1 <= len(cookies) <= max_chunks, f"{len(cookies)} cookies, max_chunks={max_chunks}"
    assert [cookie for cookie, _ in cookies] == [chunk_name(name, index) for index in range(len(cookies))]
    for cookie, value in cookies:
        size = len(cookie.encode()) + 1 + len(value) + attributes
        assert size <= limit, f"cookie {cookie!r} of {size} bytes, over {limit}"
    jar = dict(cookies)
    assert join_chunks(name, jar, max_chunks=max_chunks) == token, "the cookies joined back to another token"
    # Chunks of an older, longer session the browser still holds are never read, and are named for deletion.
    stale = {chunk_name(name, index): "stale" for index in range(len(cookies), len(cookies) + 2)}
    assert join_chunks(name, {**jar, **stale}, max_chunks=max_chunks) == token, "a stale chunk was read"
    assert stale_chunks(name, len(cookies), [*jar, *stale]) == list(stale)


def chunk_cookies_input(max_chunks: int, name_index: int, cookies: list[tuple[str, str]]) -> bytes:
    """A join seed: the cookies a request carries."""
    text = "\n".join(f"{cookie}={value}" for cookie, value in cookies)
    return bytes([max_chunks - 1, name_index << 1, 0]) + text.encode("latin-1")


def chunk_round_trip_input(max_chunks: int, name_index: int, limit_index: int, attributes: int, token: str) -> bytes:
    """A round-trip seed: a token to split, under one of CHUNK_LIMITS with ``attributes`` (0 to 255) of 256ths of it."""
    mode = CHUNK_ROUND_TRIP | name_index << 1 | limit_index << 3
    return bytes([max_chunks - 1, mode, attributes]) + token.encode("ascii")


#: Each target's name, how to build it, and the longest input worth trying (libFuzzer's -max_len).
BUILDERS: Final[dict[str, tuple[Callable[[], Target], int]]] = {
    "serializer_loads": (lambda: serializer_loads, 4200),
    "signer_unsign": (lambda: signer_unsign, 600),
    "serializer_body": (lambda: serializer_body, 3100),
    "serializer_payload": (lambda: serializer_payload, 3000),
    "url_verify": (lambda: url_verify, 1200),
    "url_sign_verify": (lambda: url_sign_verify, 600),
    "starlette_cookie": (build_starlette_cookie, 4400),
    "starlette_legacy_body": (build_starlette_legacy_body, 3000),
    "django_session": (build_django_session, 3100),
    "byte_range": (lambda: byte_range, 200),
    "encrypted_loads": (build_encrypted_loads, 4200),
    "encrypted_plaintext": (build_encrypted_plaintext, 3000),
    "chunk_cookies": (lambda: chunk_cookies, 4400),
}


def build(name: str) -> Target:
    return BUILDERS[name][0]()


def max_len(name: str) -> int:
    return BUILDERS[name][1]
