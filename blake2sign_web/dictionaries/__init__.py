"""Zstandard dictionaries shipped with the package, looked up by a small integer id.

Short records of a known shape, such as a session's JSON, compress well only against a
dictionary of what such records usually contain. A token names the dictionary its payload was
compressed with, so a shipped dictionary never changes and is never removed: a better one is
shipped beside it under a new id (docs/dictionaries.md says how they are made).

An unknown id raises ``ValueError``: for a token that names one, the same error as any other
corrupt payload (which the serializer turns into ``BadSignature``); for configuration, a clear
message listing the shipped ids.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType

import zstandard

#: The first session dictionary: Django and Starlette/FastAPI session JSON (8 KiB).
SESSION = 1

#: Every dictionary ever shipped, id -> file in this package. Entries are only ever added.
FILES: Mapping[int, str] = MappingProxyType({SESSION: "session-1.zdict"})


def _file(dictionary_id: int) -> str:
    if type(dictionary_id) is int and dictionary_id in FILES:  # not bool, which hashes like 1
        return FILES[dictionary_id]
    raise ValueError(f"unknown dictionary id {dictionary_id!r}; shipped ids: {', '.join(map(str, FILES))}")


#: Every shipped dictionary's bytes, read when this module is imported (at start-up): a signer built
#: lazily on an event loop, as Starlette builds its middleware at the first request, reads no file there.
_DATA: Mapping[int, bytes] = MappingProxyType(
    {dictionary_id: resources.files(__name__).joinpath(name).read_bytes() for dictionary_id, name in FILES.items()}
)


def data(dictionary_id: int) -> bytes:
    """The dictionary's bytes, as shipped."""
    _file(dictionary_id)  # ValueError for an id never shipped
    return _DATA[dictionary_id]


def load(dictionary_id: int) -> zstandard.ZstdCompressionDict:
    """The dictionary, built once per process; for decompressing (it caches its own tables)."""
    _file(dictionary_id)
    return _load(dictionary_id)


def for_compression(dictionary_id: int, level: int) -> zstandard.ZstdCompressionDict:
    """The dictionary with its compression tables precomputed for ``level``, built once per (id, level).

    Precomputing moves the dictionary's table building out of every compress call, which is
    what keeps compressing a small session under a microsecond.
    """
    _file(dictionary_id)
    return _precomputed(dictionary_id, level)


@functools.cache
def _load(dictionary_id: int) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(data(dictionary_id), dict_type=zstandard.DICT_TYPE_FULLDICT)


@functools.cache
def _precomputed(dictionary_id: int, level: int) -> zstandard.ZstdCompressionDict:
    dictionary = zstandard.ZstdCompressionDict(data(dictionary_id), dict_type=zstandard.DICT_TYPE_FULLDICT)
    dictionary.precompute_compress(level=level)
    return dictionary
