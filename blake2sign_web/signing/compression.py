"""Bounded zstandard compression with per-thread contexts, with or without a shipped dictionary.

zstandard's contexts must not be shared between threads and cost more to build than compressing a cookie, so
each thread keeps one of each per dictionary. Frames carry no magic number, checksum or dictionary id (the MAC
guards integrity, the token names the dictionary) but always their content size, checked against the caller's
limit before anything is allocated. One level, 3, zstd's default: higher levels cost 3 to 70 times more for a
byte or two (docs/format.md, "When the writer compresses").
"""

from __future__ import annotations

import threading

import zstandard

from .. import dictionaries
from .signer import is_count

LEVEL = 3
_FORMAT = zstandard.FORMAT_ZSTD1_MAGICLESS
_PARAMS = zstandard.ZstdCompressionParameters.from_level(
    LEVEL, format=_FORMAT, write_content_size=True, write_checksum=False, write_dict_id=False
)


def check_options(
    compression: str | None, dictionary: int | None, threshold: int, max_size: int, against_dictionary: bool
) -> None:
    """A signer's compression options, checked at its construction (ValueError naming the option); with
    ``against_dictionary`` the dictionary is read now, not by a first ``dumps`` that may run on an event loop."""
    if compression not in ("zstd", None):
        raise ValueError(f"compression must be 'zstd' or None; got {compression!r}")
    if dictionary is not None:
        try:
            dictionaries.load(dictionary)
        except ValueError as error:
            raise ValueError(f"dictionary must be a shipped dictionary id or None: {error}") from None
        if compression is not None and against_dictionary:
            dictionaries.for_compression(dictionary, LEVEL)
    if not is_count(threshold) or threshold < 0:
        raise ValueError(f"compression_threshold must be an int of bytes >= 0; got {threshold!r}")
    if not is_count(max_size) or max_size < 1:
        raise ValueError(f"max_decompressed_size must be a positive int; got {max_size!r}")


class _Contexts(threading.local):
    def __init__(self) -> None:
        self.compressors: dict[int | None, zstandard.ZstdCompressor] = {}
        self.decompressors: dict[int | None, zstandard.ZstdDecompressor] = {}


_contexts = _Contexts()


def compress(data: bytes, dictionary_id: int | None = None) -> bytes:
    """One frame of ``data``, against the shipped dictionary ``dictionary_id`` when given."""
    try:
        compressor = _contexts.compressors[dictionary_id]
    except KeyError:
        compressor = _contexts.compressors[dictionary_id] = _compressor(dictionary_id)
    return compressor.compress(data)


def decompress(data: bytes, max_size: int, dictionary_id: int | None = None) -> bytes:
    """Decompress one frame whose declared size is at most max_size; ValueError otherwise, and for an unknown
    ``dictionary_id``."""
    try:
        decompressor = _contexts.decompressors[dictionary_id]
    except KeyError:
        decompressor = _contexts.decompressors[dictionary_id] = _decompressor(dictionary_id)
    try:
        # The header of a frame of our compressor (one segment, no dictionary id; RFC 8878, 3.1.1.1) read here,
        # as libzstd would, at a fraction of get_frame_parameters' cost; any other header is left to it.
        head = data[0] & 0xEB if len(data) > 2 else 0  # the sizes' flags, single segment, reserved, dictionary id
        if head == 0x20:  # a 1-byte content size
            declared = data[1]
        elif head == 0x60:  # a 2-byte one, from 256
            declared = data[1] + (data[2] << 8) + 256
        else:
            declared = zstandard.get_frame_parameters(data, _FORMAT).content_size  # positional: no keyword parsing
        if declared > max_size:  # also catches CONTENTSIZE_UNKNOWN, which is a huge unsigned value
            raise ValueError(f"compressed payload declares {declared} bytes, over the limit of {max_size}")
        # The declared size is known and within the limit: decompress allocates exactly that
        # (max_output_size would cost another ~0.3 us, a fifth of reading a session).
        result = decompressor.decompress(data)
    except zstandard.ZstdError as error:
        raise ValueError(f"corrupt compressed payload: {error}") from None
    if len(result) != declared:
        raise ValueError("compressed payload size does not match its header")
    return result


def _compressor(dictionary_id: int | None) -> zstandard.ZstdCompressor:
    if dictionary_id is None:
        return zstandard.ZstdCompressor(compression_params=_PARAMS)
    # Tables precomputed once per process: what keeps a session's compression near 1 us.
    return zstandard.ZstdCompressor(
        dict_data=dictionaries.for_compression(dictionary_id, LEVEL), compression_params=_PARAMS
    )


def _decompressor(dictionary_id: int | None) -> zstandard.ZstdDecompressor:
    if dictionary_id is None:
        return zstandard.ZstdDecompressor(format=_FORMAT)
    return zstandard.ZstdDecompressor(dict_data=dictionaries.load(dictionary_id), format=_FORMAT)
