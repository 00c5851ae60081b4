"""Files that live in a storage rather than under a directory: what can be read of them, and how.

A framework's file view opens a stored file through its storage's API (Django's ``Storage``) and hands
the handle here; what follows is decided once: whether a range can be served by seeking, whether
seeking would download the whole object (django-storages' backends), the ranged ``GetObject`` of an
S3 object (exactly the bytes sent), and when a Range request goes to the storage's own URL instead.
Recognised by what the objects have, so that no storage library is imported here.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import IO, Any, Final
from urllib.parse import quote

from . import files
from . import folders as link_prefix
from .requests import (
    LOGGED_PATH_LENGTH,
    REDIRECT_HEADERS,
    FileAnswer,
    Refusal,
    Wanted,
    conditional_answer,
    file_answer,
    file_headers,
    validators,
)
from .signer import VerifiedLink

logger = logging.getLogger("blake2sign_web.signed_urls")
#: ``range_fallback`` values: where a remote storage has no ranged read, redirect a Range request to its URL,
#: or seek its file object (which django-storages' backends do by downloading the whole object).
RANGE_FALLBACKS: Final = ("redirect", "seek")


class RangedObject:
    """An S3 object (boto3's ``s3.Object``, loaded by django-storages' ``S3File``) read one range at a time:
    ``open(start, length)`` is one ``GetObject`` with ``Range`` and ``IfMatch`` the ETag its HEAD gave."""

    __slots__ = ("etag", "modified", "obj", "params", "size")

    def __init__(self, obj: Any, params: dict[str, Any]) -> None:
        self.obj = obj
        self.params = params
        self.size: int = obj.content_length
        self.modified: datetime | None = obj.last_modified
        self.etag: str | None = obj.e_tag

    def open(self, start: int, length: int, *, whole: bool = False) -> IO[bytes]:
        if length <= 0:
            return io.BytesIO(b"")
        params = dict(self.params)
        if not whole:
            params["Range"] = f"bytes={start}-{start + length - 1}"
        if self.etag:
            params["IfMatch"] = self.etag
        body: IO[bytes] = self.obj.get(**params)["Body"]
        return body


def s3_object(storage: Any, handle: IO[bytes]) -> RangedObject | None:
    """The ranged reader of a django-storages S3 file (its ``obj``, with the storage's ``get_object_parameters``:
    SSE-C keys, VersionId), or None for any other storage's file."""
    obj = getattr(handle, "obj", None)
    if obj is None or not callable(getattr(obj, "get", None)):
        return None
    if not all(isinstance(getattr(obj, attribute, None), str) for attribute in ("bucket_name", "key")):
        return None
    try:
        size = obj.content_length
    except Exception:  # not loaded, or not an S3 object after all: read the file as before
        return None
    if not isinstance(size, int) or isinstance(size, bool):
        return None
    return RangedObject(obj, _download_params(storage, getattr(handle, "name", "")))


def _download_params(storage: Any, name: str) -> dict[str, Any]:
    get_parameters = getattr(storage, "get_object_parameters", None)
    if not callable(get_parameters):
        return {}
    try:
        from s3transfer.constants import ALLOWED_DOWNLOAD_ARGS  # type: ignore[import-untyped]  # with boto3
    except ImportError:
        return {}
    return {key: value for key, value in get_parameters(name).items() if key in ALLOWED_DOWNLOAD_ARGS}


def downloads_whole_objects(storage: object) -> bool:
    """Whether the storage is one of django-storages' backends, whose files download the whole object to seek."""
    return any(klass.__module__.startswith("storages.backends.") for klass in type(storage).__mro__)


class StoredFile:
    """An open file and what the response needs to know about it."""

    __slots__ = ("downloads_whole", "handle", "mtime_ns", "path", "ranged", "seekable", "size")

    def __init__(
        self,
        handle: IO[bytes],
        size: int,
        mtime_ns: int | None,
        path: str | None,
        *,
        seekable: bool | None = True,
        ranged: RangedObject | None = None,
    ) -> None:
        self.handle = handle
        self.size = size
        self.mtime_ns = mtime_ns
        #: The real path on disk (local storages only), for X-Sendfile.
        self.path = path
        #: Whether a Range can be served by seeking; None until asked (``can_seek``).
        self.seekable = seekable
        #: Reads exactly the bytes to send from the storage (S3), instead of ``handle``.
        self.ranged = ranged
        #: Whether seeking ``handle`` downloads the whole object first (django-storages' backends).
        self.downloads_whole = False

    def can_seek(self) -> bool:
        if self.seekable is None:
            self.seekable = _seekable(self.handle)
        return self.seekable

    def close(self) -> None:
        self.handle.close()

    def sendable_range(self, method: str, wanted: Wanted) -> Wanted:
        """``wanted`` as it can be sent: a file that cannot seek is sent whole (reading up to the range would
        cost as much). Asked only for a GET with a Range: another storage may have to read the file to tell."""
        if wanted is not None and method == "GET" and not self.can_seek():
            return None
        return wanted

    def body(self, byte_range: files.ByteRange | None) -> tuple[IO[bytes], int, int]:
        """What to stream for ``byte_range`` (None: the whole file): the handle, where to start, how many bytes (an S3
        object's by one ranged ``GetObject``, never whole in memory or on disk)."""
        start, length = (0, self.size) if byte_range is None else (byte_range.start, byte_range.length)
        if self.ranged is None:
            return self.handle, start, length
        handle = self.ranged.open(start, length, whole=byte_range is None)
        self.close()
        return handle, 0, length


def local(root: str | os.PathLike[str], name: str, within: str = "") -> StoredFile:
    """``name`` opened under ``root`` on this disk (``files.open_under``; ``within``: the folder of a folder link,
    ``links.folders.folder``), with its size, time and real path."""
    opened_file = files.open_under(root, name, within)
    info = opened_file.stat
    return StoredFile(opened_file.handle, info.st_size, info.st_mtime_ns, opened_file.path)


def local_root(storage: Any, name: str, *, file_system: bool) -> str | None:
    """The directory a storage keeps ``name`` in on this disk (its ``location``), or None: only a file-system
    storage (``file_system``) whose ``path()`` does not raise NotImplementedError keeps its files there."""
    if not file_system:
        return None
    try:
        storage.path(name)
    except NotImplementedError:
        return None
    location: str = os.fspath(storage.location)
    return location


def open_local(root: str | os.PathLike[str], name: str, link: VerifiedLink | None = None) -> StoredFile | Refusal:
    """``local``, or what a request for a name that cannot be served gets: 400 (unsafe, or outside the folder of a
    folder ``link``), 404 (no such file)."""
    try:
        return local(root, name, link_prefix.folder(name, link))
    except files.UnsafePath:
        return Refusal(400, "Refused file name.")
    except FileNotFoundError:
        return Refusal(404, "No such file.")


def opened(
    handle: IO[bytes],
    storage: object,
    ranged: RangedObject | None,
    size: Callable[[], int],
    modified: Callable[[], datetime | None],
) -> StoredFile:
    """A file opened through its storage's API, with what the response needs to know of it: an S3 object's size and
    time from the HEAD that opening it made; another storage asked (``size``, ``modified``; else the file object's
    size), and whether it can seek asked only when bytes are sent (a HEAD or a 304 must not read the file)."""
    if ranged is not None:
        return StoredFile(handle, ranged.size, _nanoseconds(ranged.modified), None, seekable=True, ranged=ranged)
    try:
        known_size = size()
    except NotImplementedError:
        known_size = handle.size  # type: ignore[attr-defined]  # a file object that knows its size (Django's File)
    try:
        known_time = modified()
    except NotImplementedError:
        known_time = None
    stored = StoredFile(handle, known_size, _nanoseconds(known_time), None, seekable=None)
    stored.downloads_whole = downloads_whole_objects(storage)
    return stored


def from_storage(
    storage: Any, name: str, handle: IO[bytes], ranged: Callable[[Any, IO[bytes]], RangedObject | None]
) -> StoredFile:
    """``opened`` of a file that a storage with Django's API (``size``, ``get_modified_time``) opened as
    ``handle`` (closed if this fails); ``ranged``: its ranged reader (``s3_object``), or None."""
    try:
        reader = ranged(storage, handle)
        return opened(handle, storage, reader, lambda: storage.size(name), lambda: storage.get_modified_time(name))
    except BaseException:
        handle.close()
        raise


def _nanoseconds(modified: datetime | None) -> int | None:
    return None if modified is None else int(modified.timestamp() * 1e9)


def _seekable(handle: IO[bytes]) -> bool:
    try:
        return bool(handle.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def check_range_fallback(value: object) -> str:
    """``value`` as a ``range_fallback``; ValueError otherwise."""
    if value not in RANGE_FALLBACKS:
        raise ValueError(f"range_fallback must be one of {RANGE_FALLBACKS}; got {value!r}")
    return str(value)


def redirects_range(stored: StoredFile, method: str, wanted: Wanted, *, single_use: bool, offloaded: bool) -> bool:
    """Whether to send a Range request to the storage's own URL rather than download the whole object: never for a
    single-use link (its storage URL could be used again until it expires), nor when the front server sends it."""
    return (
        isinstance(wanted, files.ByteRange)
        and method == "GET"
        and stored.downloads_whole
        and not single_use
        and not offloaded
    )


def range_redirect(url_of: Callable[[], object], path: str, name: str, storage: object) -> dict[str, str] | None:
    """The headers of the 302 to the storage's URL (``url_of()``) for a file's range, or None: no http(s) URL for
    the file (seek it as before). Logged: that URL is a bearer link of its own, which knows nothing of this link's
    expiry or binding (kept by no cache, leaked by no Referer: ``REDIRECT_HEADERS``)."""
    kind = type(storage)
    try:
        url = url_of()
    except (NotImplementedError, ValueError) as error:
        logger.warning("cannot redirect a range of %r to %s: %s", name[:LOGGED_PATH_LENGTH], kind, error)
        return None
    if not isinstance(url, str) or not url.lower().startswith(("https://", "http://")):
        return None
    logger.info(
        "redirected a range of %r to the storage's URL: %s.%s offers no ranged read",
        path[:LOGGED_PATH_LENGTH],
        kind.__module__,
        kind.__qualname__,
    )
    return {"Location": url, **REDIRECT_HEADERS}


def answer(
    method: str,
    headers: Mapping[str, str],
    name: str,
    disposition: str,
    stored: StoredFile,
    wanted: Wanted,
    *,
    posted: bool,
    offload: tuple[str | None, bool] = (None, False),
) -> FileAnswer:
    """What a request for a stored file gets once its link passed: 304 or 412, or 200 or 206 (416) with every
    header; with ``offload`` (nginx's ``accel_redirect`` prefix, ``sendfile``) a 200 whose headers hand the file to
    the front server (``offload_headers``). HEAD never makes a storage read its file to learn whether it seeks."""
    found = conditional_answer(method, headers, stored.size, stored.mtime_ns, posted=posted)
    if found is not None:
        return found
    etag, last_modified = validators(stored.size, stored.mtime_ns)
    accel_redirect, sendfile = offload
    if accel_redirect is not None or sendfile:
        sent = file_headers(name, disposition, etag, last_modified, posted=posted)
        return FileAnswer(200, offload_headers(sent, name, accel_redirect, stored.path), None)
    seekable = stored.seekable if method == "HEAD" else stored.can_seek()
    return file_answer(name, disposition, stored.size, (etag, last_modified), wanted, posted=posted, seekable=seekable)


def offload_headers(
    headers: Mapping[str, str], name: str, accel_redirect: str | None, path: str | None
) -> dict[str, str]:
    """``headers`` with what hands the file to the front server: nginx's ``X-Accel-Redirect`` (a URL prefix of an
    ``internal`` location), else ``X-Sendfile`` with the file's ``path`` (ValueError: none, not a local file)."""
    if accel_redirect is not None:
        # Keep our Content-Type: nginx would otherwise guess its own from the location.
        return {
            **headers,
            "X-Accel-Redirect": accel_redirect.rstrip("/") + "/" + quote(name),
            "X-Accel-Buffering": "no",
        }
    if path is None:
        raise ValueError("sendfile=True needs a storage with local paths (FileSystemStorage)")
    # Percent-encoded like X-Accel-Redirect (mod_xsendfile and lighttpd decode it): a non-ASCII path would
    # otherwise go out MIME-encoded, or folded after U+2028.
    return {**headers, "X-Sendfile": quote(path)}
