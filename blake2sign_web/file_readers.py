"""A file's bytes to send, read in bounded chunks: a synchronous iterator for WSGI responses, an asynchronous one
(each read in a worker thread) for ASGI, and the ASGI body messages they make. Memory stays flat whatever the file's
size."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import IO, Any


class RangeReader:
    """Iterate over ``length`` bytes from ``start`` in chunks of at most ``chunk_size``.

    A class, not a generator, so that ``close()`` closes the file even when the
    response is dropped before its first chunk (Django calls it when done). Both adapters
    stream through it (in a worker thread under ASGI).
    """

    def __init__(self, handle: IO[bytes], start: int, length: int, chunk_size: int) -> None:
        self.handle = handle
        self.remaining = length
        self.chunk_size = chunk_size
        if start:  # a file just opened is at 0: a stream that cannot seek is read from there
            handle.seek(start, os.SEEK_SET)

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self.remaining <= 0:
            raise StopIteration
        chunk = self.handle.read(min(self.chunk_size, self.remaining))
        if not chunk:
            raise StopIteration
        self.remaining -= len(chunk)
        return chunk

    def next_chunk(self) -> bytes:
        """The next chunk, or b"" at the end: for a worker thread, where StopIteration cannot come back."""
        return next(self, b"")

    def close(self) -> None:
        self.handle.close()


class AsyncRangeReader:
    """``RangeReader`` for an event loop: each chunk, and the seek to the range, is read by ``to_thread`` (the
    framework's worker threads), so the loop never waits on disk.

    No ``__iter__``: Django would take it for a synchronous iterator and gather it in memory. The file
    is closed at the end of the range and by ``close()`` (Django calls it when done).
    """

    def __init__(
        self,
        handle: IO[bytes],
        start: int,
        length: int,
        chunk_size: int,
        to_thread: Callable[[Callable[[], bytes]], Awaitable[bytes]],
    ) -> None:
        self.handle = handle
        self.range = (start, length, chunk_size)
        self.to_thread = to_thread
        self.reader: RangeReader | None = None

    def next_chunk(self) -> bytes:
        """The next chunk, or b"" at the end; the first one seeks to the range."""
        if self.reader is None:
            self.reader = RangeReader(self.handle, *self.range)
        return self.reader.next_chunk()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        chunk = await self.to_thread(self.next_chunk)
        if not chunk:
            self.close()
            raise StopAsyncIteration
        return chunk

    def close(self) -> None:
        self.handle.close()


async def send_body(send: Callable[[dict[str, Any]], Awaitable[None]], reader: AsyncRangeReader | None) -> None:
    """An ASGI response's body, read from ``reader`` (None: none, for HEAD). A file that shrank ends it short:
    the server sees it and closes the connection."""
    if reader is not None:
        async for chunk in reader:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
