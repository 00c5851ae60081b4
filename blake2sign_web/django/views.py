"""A ready view that serves a file from a Django Storage by a signed link.

    path("files/<path:name>", SignedFileView.as_view(storage="private"), name="download")

Streams (never reads a whole file; under ASGI through an asynchronous iterator, as Django's
ASGI handler would gather a synchronous one in memory first), answers HEAD, single Range
requests (206, 416), If-None-Match / If-Modified-Since (304) and If-Match /
If-Unmodified-Since (412, via Django's own ``get_conditional_response``), and can hand the
transfer to nginx (``accel_redirect="/protected/"``) or Apache/lighttpd (``sendfile=True``).
"""

from __future__ import annotations

import io
import os
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import IO, Any, ClassVar
from urllib.parse import quote

from asgiref.sync import sync_to_async
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import FileSystemStorage, Storage, default_storage, storages
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.cache import get_conditional_response
from django.views import View

from .. import files
from .signed_urls import BindFunction, verify_request


class SignedFileView(View):
    """GET or HEAD ``<name>`` from ``storage`` after checking the URL's signature.

    Options (pass to ``as_view``): ``storage`` (an alias in STORAGES, or a Storage),
    ``as_attachment``, ``accel_redirect`` (URL prefix of an nginx ``internal`` location),
    ``sendfile`` (send ``X-Sendfile`` with the file's path), ``bind`` (request -> value
    the link is bound to), ``chunk_size`` and ``url_kwarg`` (the URL pattern's name part).
    """

    http_method_names: ClassVar[list[str]] = ["get", "head"]  # type: ignore[misc]
    storage: str | Storage = "default"
    as_attachment: bool = True
    accel_redirect: str | None = None
    sendfile: bool = False
    bind: BindFunction | None = None
    chunk_size: int = files.CHUNK_SIZE
    url_kwarg: str = "name"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # The signature is checked before anything touches the storage.
        # as_view(bind=...) sets an instance attribute; a subclass may set a staticmethod.
        bind = self.__dict__.get("bind", type(self).bind)
        refused = verify_request(request, bind=bind)
        if refused is not None:
            return refused
        return super().dispatch(request, *args, **kwargs)

    def get_storage(self) -> Storage:
        if isinstance(self.storage, Storage):
            return self.storage
        return default_storage if self.storage == "default" else storages[self.storage]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        name = kwargs[self.url_kwarg]
        try:
            files.clean_name(name)
        except files.UnsafePath as error:
            raise SuspiciousFileOperation(f"refused file name: {error}") from None
        storage = self.get_storage()
        stored = self.open(storage, name)
        try:
            return self.respond(request, storage, name, stored)
        except BaseException:
            stored.close()
            raise

    def open(self, storage: Storage, name: str) -> StoredFile:
        """Open the file once: from disk under the storage's root when it is local, else by ``storage.open()``."""
        try:
            root = self.local_root(storage, name)
            if root is not None:
                opened = files.open_under(root, name)
                info = opened.stat
                return StoredFile(opened.handle, info.st_size, info.st_mtime_ns, opened.path)
            return self.open_from_storage(storage, name)
        except files.UnsafePath as error:
            raise SuspiciousFileOperation(f"refused file name: {error}") from None
        except OSError as error:
            # Missing, a directory, a loop, a name too long: whatever a storage raises for a bad name.
            if not files.caused_by_name(error):
                raise
            raise Http404("No such file.") from None

    def local_root(self, storage: Storage, name: str) -> str | None:
        """The directory to serve ``name`` from on this disk, or None to read it through ``storage.open()``.

        Only a FileSystemStorage (or subclass) whose ``path()`` works keeps its files here.
        Neither ``path()`` nor ``location`` alone tells: InMemoryStorage answers both with
        MEDIA_ROOT, where its files are not; S3Storage's ``location`` is a key prefix, often
        "", which would be the process's working directory; and ``Storage.path`` exists on
        every storage (it raises NotImplementedError), so ``hasattr`` says nothing.
        """
        if not isinstance(storage, FileSystemStorage):
            return None
        try:
            storage.path(name)
        except NotImplementedError:
            return None
        return os.fspath(storage.location)

    def open_from_storage(self, storage: Storage, name: str) -> StoredFile:
        """Open through the storage's own API, with the size and modified time it offers."""
        handle: IO[bytes] = storage.open(name, "rb")
        try:
            try:
                size = storage.size(name)
            except NotImplementedError:
                size = handle.size  # type: ignore[attr-defined]  # a django File
            try:
                modified: datetime | None = storage.get_modified_time(name)
            except NotImplementedError:
                modified = None
        except BaseException:
            handle.close()
            raise
        mtime_ns = None if modified is None else int(modified.timestamp() * 1e9)
        return StoredFile(handle, size, mtime_ns, None, seekable=_seekable(handle))

    def respond(self, request: HttpRequest, storage: Storage, name: str, stored: StoredFile) -> HttpResponseBase:
        etag = last_modified = None
        if stored.mtime_ns is not None:
            etag = files.etag_for(stored.size, stored.mtime_ns)
            last_modified = files.http_date(stored.mtime_ns / 1e9)
        mtime = None if stored.mtime_ns is None else stored.mtime_ns // 1_000_000_000
        conditional = get_conditional_response(request, etag=etag, last_modified=mtime)
        if conditional is not None:
            stored.close()
            return conditional
        headers = {
            "Content-Type": files.content_type_for(name),
            "Content-Disposition": files.content_disposition(name, as_attachment=self.as_attachment),
            "Accept-Ranges": "bytes" if stored.seekable else "none",
            "X-Content-Type-Options": "nosniff",
        }
        if etag is not None and last_modified is not None:
            headers.update({"ETag": etag, "Last-Modified": last_modified})
        if self.accel_redirect is not None or self.sendfile:
            stored.close()
            return self.offload(name, stored, headers)
        try:
            # A file that cannot seek is sent whole: reading up to the range would cost as much.
            byte_range = files.requested_range(
                request.headers.get("Range") if stored.seekable else None,
                request.headers.get("If-Range"),
                stored.size,
                etag,
                last_modified,
            )
        except files.RangeNotSatisfiable as error:
            stored.close()
            return HttpResponse(status=416, headers={"Content-Range": error.content_range})
        length = stored.size if byte_range is None else byte_range.length
        if request.method == "HEAD":
            stored.close()
            response = HttpResponse(status=200 if byte_range is None else 206, headers=headers)
            response.headers["Content-Length"] = str(length)
            if byte_range is not None:
                response.headers["Content-Range"] = byte_range.content_range
            return response
        start, length = (0, stored.size) if byte_range is None else (byte_range.start, byte_range.length)
        if isinstance(request, ASGIRequest):
            # Django's ASGI handler reads a synchronous iterator to its end before it sends a byte.
            streamed: StreamingHttpResponse = StreamingHttpResponse(
                AsyncRangeReader(stored.handle, start, length, self.chunk_size), headers=headers
            )
        elif byte_range is None and stored.path is not None:
            # FileResponse lets a WSGI server use os.sendfile (wsgi.file_wrapper). Not for other
            # storages: for a file that cannot seek it would stat the name in the working directory.
            streamed = FileResponse(stored.handle)
            streamed.block_size = self.chunk_size
            for header, value in headers.items():  # FileResponse writes its own Content-Disposition
                streamed.headers[header] = value
        else:
            streamed = StreamingHttpResponse(
                RangeReader(stored.handle, start, length, self.chunk_size), headers=headers
            )
        streamed.headers["Content-Length"] = str(length)
        if byte_range is not None:
            streamed.status_code = 206
            streamed.headers["Content-Range"] = byte_range.content_range
        return streamed

    def offload(self, name: str, stored: StoredFile, headers: dict[str, str]) -> HttpResponse:
        """Let the front server send the bytes (and handle Range itself)."""
        response = HttpResponse(headers=headers)
        del response.headers["Accept-Ranges"]
        if self.accel_redirect is not None:
            response.headers["X-Accel-Redirect"] = self.accel_redirect.rstrip("/") + "/" + quote(name)
            # Keep our Content-Type: nginx would otherwise guess its own from the location.
            response.headers["X-Accel-Buffering"] = "no"
        else:
            if stored.path is None:
                raise SuspiciousFileOperation("sendfile=True needs a storage with local paths (FileSystemStorage)")
            # Percent-encoded like X-Accel-Redirect (mod_xsendfile and lighttpd decode it): a
            # non-ASCII path would otherwise go out MIME-encoded, or folded after U+2028.
            response.headers["X-Sendfile"] = quote(stored.path)
        return response


class StoredFile:
    """An open file and what the response needs to know about it."""

    __slots__ = ("handle", "mtime_ns", "path", "seekable", "size")

    def __init__(
        self, handle: IO[bytes], size: int, mtime_ns: int | None, path: str | None, *, seekable: bool = True
    ) -> None:
        self.handle = handle
        self.size = size
        self.mtime_ns = mtime_ns
        #: The real path on disk (local storages only), for X-Sendfile.
        self.path = path
        #: Whether a Range can be served by seeking.
        self.seekable = seekable

    def close(self) -> None:
        self.handle.close()


def _seekable(handle: IO[bytes]) -> bool:
    try:
        return bool(handle.seekable())
    except (AttributeError, OSError, ValueError):
        return False


class RangeReader:
    """Iterate over ``length`` bytes from ``start`` in chunks of at most ``chunk_size``.

    A class, not a generator, so that ``close()`` closes the file even when the
    response is dropped before its first chunk (Django calls it when done).
    """

    def __init__(self, handle: IO[bytes], start: int, length: int, chunk_size: int) -> None:
        self.handle = handle
        self.remaining = length
        self.chunk_size = chunk_size
        if start:  # a file just opened is at 0: a stream that cannot seek is read from there
            handle.seek(start, io.SEEK_SET)

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

    def close(self) -> None:
        self.handle.close()


class AsyncRangeReader:
    """``RangeReader`` for ASGI: each chunk is read in a worker thread, so the event loop never waits on disk.

    No ``__iter__``: Django would take it for a synchronous iterator and gather it in memory.
    The file is closed at the end of the range and by ``close()`` (Django calls it when done).
    """

    def __init__(self, handle: IO[bytes], start: int, length: int, chunk_size: int) -> None:
        self.handle = handle
        self.remaining = length
        self.chunk_size = chunk_size
        self.read = sync_to_async(handle.read, thread_sensitive=False)
        if start:  # as RangeReader: this runs in the view, already off the event loop
            handle.seek(start, io.SEEK_SET)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        if self.remaining <= 0:
            self.close()
            raise StopAsyncIteration
        chunk = await self.read(min(self.chunk_size, self.remaining))
        if not chunk:
            self.close()
            raise StopAsyncIteration
        self.remaining -= len(chunk)
        return chunk

    def close(self) -> None:
        self.handle.close()
