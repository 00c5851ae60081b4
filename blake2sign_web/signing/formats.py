"""What a token's first byte says about the rest of it: the layouts of signed and encrypted value tokens.

Kept apart from the signers that read them (``serializer.py``) so that every module that needs a layout, a
flag or a field's size imports it from here, below the signers. The markers, flags and bodies: docs/format.md.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

from ..exceptions import BadSignature

#: Bytes of the session id a format-2 or encrypted token may carry.
SESSION_ID_SIZE: Final = 8
#: Tokens carry 32-bit Unix times: no time reaches this second (2106-02-07 06:28:16 UTC).
TIMESTAMP_LIMIT: Final = 2**32
ISSUED: Final = struct.Struct(">I")
ISSUED_EXPIRES: Final = struct.Struct(">II")
U32: Final = struct.Struct(">I")

#: Characters of the key id a format-2 or encrypted token carries after its marker: the start of the key id of the
#: key that made it (``keys.key_id``), which picks the key a reader tries. One character, one cookie byte.
KEY_ID_CHARS: Final = 1

#: How a payload is compressed.
NO_COMPRESSION, ZSTD, ZSTD_DICTIONARY = 0, 1, 2

# Marker bits of signed tokens. EXPIRES and PYTHON_JSON mean the same in both formats.
COMPRESSED_1: Final = 1  # format 1: a zstandard frame without a dictionary
TAG_32: Final = 1  # format 2: the tag is 32 bytes, not 16
EXPIRES: Final = 2
#: The payload is Python json text (values orjson refuses): read it with json.loads, not orjson.
PYTHON_JSON: Final = 4
SESSION_ID: Final = 8  # format 2 and encrypted
DICTIONARY: Final = 16  # format 2 and encrypted: a zstandard frame against the dictionary the body names
ZSTD_FRAME: Final = 32  # format 2 and encrypted: a zstandard frame without a dictionary
#: An encrypted token's flag for a typed payload (where a signed marker says the tag's size).
TYPED: Final = 1

#: The first character of an encrypted token (format 2's markers are ``A``-``v``, format 1's ``0``-``7``).
ENCRYPTED_MARKER: Final = b"x"
#: Format 1's markers, by flags; format 2's are the base64url alphabet, indexed by flags.
MARKERS_1: Final = (b"0", b"1", b"2", b"3", b"4", b"5", b"6", b"7")
_ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
MARKERS_2: Final = tuple(_ALPHABET[i : i + 1] for i in range(48))  # 48 to 63 ("w" to "_") are unused


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


class _Body(NamedTuple):
    """What format 2's flags say about the body (an encrypted token's plaintext has the same after its flags)."""

    expires: bool
    python_json: bool
    session_id: bool
    compression: int
    header_size: int


def _body(flags: int) -> _Body:
    """Format 2's bits 2 to 32, read once for signed and encrypted tokens."""
    kind = ZSTD_DICTIONARY if flags & DICTIONARY else ZSTD if flags & ZSTD_FRAME else NO_COMPRESSION
    header = 4 + 4 * bool(flags & EXPIRES) + SESSION_ID_SIZE * bool(flags & SESSION_ID) + (kind == ZSTD_DICTIONARY)
    return _Body(bool(flags & EXPIRES), bool(flags & PYTHON_JSON), bool(flags & SESSION_ID), kind, header)


def _layouts() -> dict[bytes, Layout]:
    layouts = {}
    for flags, marker in enumerate(MARKERS_1):
        kind = ZSTD if flags & COMPRESSED_1 else NO_COMPRESSION
        header = 8 if flags & EXPIRES else 4
        layouts[marker] = Layout(1, 32, bool(flags & EXPIRES), bool(flags & PYTHON_JSON), False, kind, header)
    for flags, marker in enumerate(MARKERS_2):
        layouts[marker] = Layout(2, 32 if flags & TAG_32 else 16, *_body(flags))
    return layouts


#: Every marker a reader knows, by its one byte; any other is not a token of ours.
LAYOUTS: Final = _layouts()
#: LAYOUTS by the byte's value (None: no marker), for the read path: an index, not a slice and a lookup.
LAYOUT_OF_BYTE: Final = tuple(LAYOUTS.get(bytes([value])) for value in range(256))


class PlaintextLayout(NamedTuple):
    """What an encrypted token's flags byte says about the rest of its plaintext."""

    typed: bool
    expires: bool
    python_json: bool
    session_id: bool
    compression: int  # NO_COMPRESSION, ZSTD or ZSTD_DICTIONARY
    #: Bytes of the plaintext before the payload, the flags byte included.
    header_size: int


#: Every flags byte a reader knows; any other is refused (after decryption: only a key holder made it).
PLAINTEXT_LAYOUTS: Final = {
    flags: PlaintextLayout(bool(flags & TYPED), *_body(flags)[:4], 1 + _body(flags).header_size)
    for flags in range(64)
    if not (flags & DICTIONARY and flags & ZSTD_FRAME)
}


def read_plaintext(plaintext: bytes) -> tuple[PlaintextLayout, int, int | None, bytes | None]:
    """An encrypted token's decrypted plaintext: its layout, issue time, expiry and session id (None if absent)."""
    layout = PLAINTEXT_LAYOUTS.get(plaintext[0]) if plaintext else None
    if layout is None:
        raise BadSignature("unknown encrypted token flags")
    if len(plaintext) < layout.header_size:
        raise BadSignature("token body too short")
    issued_at = U32.unpack_from(plaintext, 1)[0]
    expires_at = U32.unpack_from(plaintext, 5)[0] if layout.expires else None
    start = 9 if layout.expires else 5
    session_id = plaintext[start : start + SESSION_ID_SIZE] if layout.session_id else None
    return layout, issued_at, expires_at, session_id
