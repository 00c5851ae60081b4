"""Unpadded base64url, the only text encoding tokens use (no quoting needed in cookies or URLs)."""

from __future__ import annotations

import binascii

TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
PADDING = (b"", b"", b"==", b"=")


def b64encode(data: bytes) -> bytes:
    """Encode without padding; the result is ASCII bytes."""
    return binascii.b2a_base64(data, newline=False).translate(TO_URLSAFE).rstrip(b"=")


def b64decode(text: bytes) -> bytes:
    """Decode unpadded base64url; raises binascii.Error (a ValueError) on malformed input."""
    if len(text) % 4 == 1:
        raise binascii.Error("impossible base64 length")
    return binascii.a2b_base64(text.translate(FROM_URLSAFE) + PADDING[len(text) % 4])
