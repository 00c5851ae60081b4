"""The declared size of a compressed payload, read from its frame header, bounds what decompression allocates.

``compression.decompress`` reads the content size of its own compressor's usual headers itself (one segment, a
1- or 2-byte size) and leaves every other header to zstandard: both ways must give zstandard's own answer.
"""

from __future__ import annotations

import os

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web.signing import compression

#: Every 1-byte size, the 2-byte boundaries (256 and 65,791), and beyond (a 4-byte size: zstandard's way).
SIZES = [*range(0, 300), 511, 4096, 65535, 65790, 65791, 65792, 65793, 200_000]


def declared(frame: bytes) -> int:
    return int(zstandard.get_frame_parameters(frame, zstandard.FORMAT_ZSTD1_MAGICLESS).content_size)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dictionary_id", [None, 1])
def test_a_frame_is_read_at_its_declared_size_and_refused_below_it(size: int, dictionary_id: int | None) -> None:
    payload = os.urandom(size // 2) + b"a" * (size - size // 2)
    frame = compression.compress(payload, dictionary_id)
    assert declared(frame) == size
    assert compression.decompress(frame, size, dictionary_id) == payload
    if size:
        with pytest.raises(ValueError, match=f"declares {size} bytes"):
            compression.decompress(frame, size - 1, dictionary_id)


@settings(max_examples=1000, deadline=None)
@given(header=st.binary(min_size=3, max_size=12), limit=st.integers(0, 70_000))
def test_any_header_gives_a_value_error_or_at_most_the_limit(header: bytes, limit: int) -> None:
    try:
        expected = declared(header)
    except zstandard.ZstdError:
        expected = None
    try:
        result = compression.decompress(header, limit)
    except ValueError as error:
        # Refused for its declared size exactly when zstandard reads a size over the limit.
        if "declares" in str(error):
            assert expected is not None
            assert expected > limit
        return
    assert expected is not None
    assert len(result) == expected <= limit
