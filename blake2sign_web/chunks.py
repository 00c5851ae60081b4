"""A token over several cookies, where the docs import it from: the code is ``sessions.chunks``."""

from .sessions.chunks import (
    COOKIE_LIMIT,
    MAX_CHUNKS,
    IncompleteChunks,
    TooManyChunks,
    join_chunks,
    split_token,
    stale_chunks,
)

__all__ = [
    "COOKIE_LIMIT",
    "MAX_CHUNKS",
    "IncompleteChunks",
    "TooManyChunks",
    "join_chunks",
    "split_token",
    "stale_chunks",
]
