"""A ready view that serves a file from a Django Storage by a signed link, ``SignedFileView``: it opens the file
and streams it, or hands it to the front server; every answer (HEAD, Range, conditional requests, offloading)
is decided in ``links.requests`` and ``stored_files``. Guide: docs/signed-urls.md, "SignedFileView".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import IO, Any, ClassVar, Final

from asgiref.sync import sync_to_async
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import FileSystemStorage, Storage, default_storage, storages
from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.views import View

from ..links import files, stored_files
from ..links import files as file_readers
from ..links import folders as link_prefix
from ..links import guard as link_guard
from ..links import requests as link_requests
from ..links.stored_files import RangedObject as RangedObject  # re-exported: a ``ranged_reader`` override returns one
from ..links.stored_files import StoredFile
from .signed_urls import (
    BindFunction,
    ConfirmFunction,
    admit,
    consume_single_use,
    get_signer,
    privately,
    refusal_response,
    request_query,
)

#: The headers a file request's answer reads, with the keys WSGI and ASGI requests have them under in META.
_FILE_HEADERS: Final = tuple((name, "HTTP_" + name.upper().replace("-", "_")) for name in files.FILE_REQUEST_HEADERS)


class SignedFileView(View):
    """GET or HEAD ``<name>`` from ``storage`` after checking the URL's signature (the options, passed to
    ``as_view``, are the class attributes below; docs/signed-urls.md, "SignedFileView")."""

    http_method_names: ClassVar[list[str]] = ["get", "head", "post"]  # type: ignore[misc]
    storage: str | Storage = "default"
    as_attachment: bool = True
    accel_redirect: str | None = None
    sendfile: bool = False
    bind: BindFunction | None = None
    chunk_size: int = files.CHUNK_SIZE
    url_kwarg: str = "name"
    confirm: ConfirmFunction | None = None
    range_fallback: str = "redirect"
    #: An HLS playlist served by a folder link is sent with that link's query after each URI inside the folder.
    sign_playlists: bool = True

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Callable[..., HttpResponseBase]:
        """The view, exempt from CsrfViewMiddleware's check as ``csrf_exempt`` makes it (a flag, not a wrapper rebuilt
        per request): only a consume_on="post" link's POST is answered (any other is 405), CSRF-checked before it uses
        the link up (``signed_urls.csrf_refusal``)."""
        view = super().as_view(**initkwargs)
        view.csrf_exempt = True  # type: ignore[attr-defined]
        return view

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # Before anything touches the storage. as_view(bind=...) sets an instance attribute, a subclass a staticmethod.
        bind = self.__dict__.get("bind", type(self).bind)
        confirm = self.__dict__.get("confirm", type(self).confirm)
        link = admit(request, bind=bind, confirm=confirm, serves_file=True)
        if isinstance(link, HttpResponseBase):
            return link
        #: A single-use link is used up in ``respond``, which knows the file (``links.guard.file_use``).
        self.link = link
        return privately(request, super().dispatch(request, *args, **kwargs))

    def get_storage(self) -> Storage:
        if isinstance(self.storage, Storage):
            return self.storage
        return default_storage if self.storage == "default" else storages[self.storage]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        """The confirmation page's POST (``admit`` lets no other POST through): uses the link up, sends the file."""
        return self.get(request, *args, **kwargs)

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        name = kwargs[self.url_kwarg]
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
            files.clean_name(name)  # for every storage, before it sees the name
            within = link_prefix.folder(name, getattr(self, "link", None))  # a folder link's folder, or ""
            root = self.local_root(storage, name)
            if root is not None:
                return stored_files.local(root, name, within)
            return self.open_from_storage(storage, name)
        except files.UnsafePath as error:
            raise SuspiciousFileOperation(f"refused file name: {error}") from None
        except OSError as error:
            # Missing, a directory, a loop, a name too long: whatever a storage raises for a bad name.
            if not files.caused_by_name(error):
                raise
            raise Http404("No such file.") from None

    def local_root(self, storage: Storage, name: str) -> str | None:
        """The directory to serve ``name`` from on this disk (a FileSystemStorage whose ``path()`` works), or None to
        read it through ``storage.open()`` (``stored_files.local_root``)."""
        return stored_files.local_root(storage, name, file_system=isinstance(storage, FileSystemStorage))

    def open_from_storage(self, storage: Storage, name: str) -> StoredFile:
        """Open through the storage's own API, with the size and modified time it offers."""
        handle: IO[bytes] = storage.open(name, "rb")
        return stored_files.from_storage(storage, name, handle, self.ranged_reader)

    def respond(self, request: HttpRequest, storage: Storage, name: str, stored: StoredFile) -> HttpResponseBase:
        method, link, meta = request.method or "GET", getattr(self, "link", None), request.META
        headers = {header: meta[key] for header, key in _FILE_HEADERS if key in meta}
        signer = get_signer() if self.sign_playlists else None
        asked = link_guard.FileRequest(
            method,
            headers,
            name,
            stored,
            link,
            offloaded=self.offloaded,
            playlist_signer=signer,
            query_string=request_query(request),  # as the link verified it
        )
        redirect = asked.range_redirect(lambda: storage.url(name), request.path, storage, self.range_fallback)
        if redirect is not None:
            stored.close()
            return HttpResponse(status=302, headers=redirect)
        use = asked.use()
        refused = None if use is None else consume_single_use(request, *use)
        if refused is not None:
            stored.close()
            return refused
        if asked.playlist is not None:
            return self.playlist(request, asked)
        try:
            answer = asked.answer(self.as_attachment, (self.accel_redirect, self.sendfile))
        except ValueError as error:  # sendfile=True on a storage without local paths
            raise SuspiciousFileOperation(str(error)) from None
        if answer.status not in (200, 206) or method == "HEAD" or self.offloaded:
            stored.close()  # no body, or the front server sends it
            return HttpResponse(status=answer.status, headers=answer.headers)
        return self.stream(request, stored, answer)

    def stream(self, request: HttpRequest, stored: StoredFile, answer: link_requests.FileAnswer) -> HttpResponseBase:
        """The response that streams the bytes ``answer`` says (200: the whole file, 206: its range)."""
        handle, start, length = stored.body(answer.byte_range)
        if isinstance(request, ASGIRequest):
            # Django's ASGI handler reads a synchronous iterator to its end before it sends a byte.
            reader = file_readers.AsyncRangeReader(handle, start, length, self.chunk_size, _in_thread)
            streamed: StreamingHttpResponse = StreamingHttpResponse(reader, status=answer.status)
        elif answer.byte_range is None and stored.path is not None:
            # FileResponse lets a WSGI server use os.sendfile (wsgi.file_wrapper). Not for other
            # storages: for a file that cannot seek it would stat the name in the working directory.
            streamed = _WholeFile(handle)
            streamed.block_size = self.chunk_size
        else:
            streamed = StreamingHttpResponse(
                file_readers.RangeReader(handle, start, length, self.chunk_size), status=answer.status
            )
        for header, value in answer.headers.items():  # FileResponse writes its own Content-Disposition
            streamed.headers[header] = value
        return streamed

    def playlist(self, request: HttpRequest, asked: link_guard.FileRequest) -> HttpResponseBase:
        """The playlist with the link's query after its URIs, whole, sent by this view even when it offloads other
        files; HEAD without rewriting it, as a streaming response (Django's CommonMiddleware would write length 0)."""
        outcome = asked.rewritten(f"{request.scheme}://{request.get_host()}", self.as_attachment)
        if isinstance(outcome, link_requests.Refusal):
            return refusal_response(outcome)
        answer, body = outcome
        if request.method == "HEAD":
            return StreamingHttpResponse((), headers=answer.headers)
        return HttpResponse(body, headers=answer.headers)

    def ranged_reader(self, storage: Storage, handle: IO[bytes]) -> RangedObject | None:
        """What reads exactly the bytes to send from ``storage`` (django-storages' S3), or None to read ``handle``."""
        return stored_files.s3_object(storage, handle)

    @property
    def offloaded(self) -> bool:
        """Whether the front server sends the bytes (and handles Range itself)."""
        return self.accel_redirect is not None or self.sendfile


class _WholeFile(FileResponse):
    """A FileResponse with the answer's headers alone (``stream`` sets them): no name, type or size guessed."""

    def set_headers(self, filelike: Any) -> None:
        pass


def _in_thread(read: Callable[[], bytes]) -> Awaitable[bytes]:
    """``read`` in a worker thread, so the event loop never waits on disk."""
    return sync_to_async(read, thread_sensitive=False)()
