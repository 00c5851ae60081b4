"""What every adapter needs to serve a file safely: paths, ranges, validators, filenames, and the bytes.

A valid signature says the application meant to hand out *this URL*, not that the path in it is safe (it may
sign user-chosen names), so every name is checked here again. The bytes are read in bounded chunks, by a
synchronous iterator (WSGI) or an asynchronous one, each read in a worker thread (ASGI): memory stays flat.
"""

from __future__ import annotations

import errno
import hashlib
import mimetypes
import os
import re
import stat
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from datetime import timezone
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import IO, Any, BinaryIO, Final, Literal, NamedTuple
from urllib.parse import quote, unquote

#: Bytes read per chunk when a response streams a file itself.
CHUNK_SIZE: Final = 64 * 1024
#: A Range header longer than this is not parsed (a single range needs fewer than 50).
MAX_RANGE_HEADER: Final = 1024
_MAX_DIGITS: Final = 19
#: Errors that say the server is short of something, not that the name is wrong: never turned into 404.
_SERVER_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EIO})
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO planted under the root must not hang the worker; fstat then refuses it.
_FILE_FLAGS: Final = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_WALKS_BENEATH: Final = _NOFOLLOW != 0 and os.open in os.supports_dir_fd
#: The root, opened by its name as configured: its own links followed, as ``realpath`` follows them.
_ROOT_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: A download name kept as it is in the ASCII ``filename`` of Content-Disposition.
_FILENAME_SAFE: Final = re.compile(r"[A-Za-z0-9 !#$&+\-.^_`{}~()\[\]@,;=]*")
#: The request headers a file's answer reads (its range and its conditions), by their lowercase names: an adapter
#: may hand over these alone.
FILE_REQUEST_HEADERS: Final = (
    "range",
    "if-range",
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
)
#: Unicode's control characters (category Cc: U+0000-U+001F, U+007F-U+009F), found in one pass.
CONTROL_CHARACTER: Final = re.compile("[\x00-\x1f\x7f-\x9f]")
_DOT_SEGMENTS: Final = frozenset(("", ".", ".."))


# guess_type() reads the system's MIME tables (/etc/mime.types...) on its first call: read them at
# import, at start-up, rather than on the event loop of the first download.
if not mimetypes.inited:
    mimetypes.init()


class UnsafePath(ValueError):
    """A requested file name that could reach outside the served root."""


class RangeNotSatisfiable(Exception):
    """The Range asks only for bytes the file does not have: answer 416."""

    def __init__(self, size: int) -> None:
        super().__init__(f"range not satisfiable for a file of {size} bytes")
        self.size = size

    @property
    def content_range(self) -> str:
        return f"bytes */{self.size}"


class ByteRange(NamedTuple):
    """Bytes ``start`` to ``stop - 1`` of a file of ``size`` bytes."""

    start: int
    stop: int
    size: int

    @property
    def length(self) -> int:
        return self.stop - self.start

    @property
    def content_range(self) -> str:
        return f"bytes {self.start}-{self.stop - 1}/{self.size}"


def clean_name(name: str) -> str:
    """Return ``name`` as a relative, '/'-separated path, or raise UnsafePath.

    Refused: empty names, NUL and other control characters, backslashes, absolute
    paths and drive letters, '.' and '..' segments, and names that turn into any of
    those when percent-decoded again (double-encoded traversal such as ``%252e%252e``).
    """
    if not isinstance(name, str) or not name:
        raise UnsafePath("empty file name")
    if "%" not in name:  # nothing to decode: the usual name, checked once
        _check_segments(name)
        return name
    candidate = name
    for _ in range(3):
        _check_segments(candidate)
        decoded = unquote(candidate)
        if decoded == candidate:
            break
        candidate = decoded
    else:
        raise UnsafePath("file name is percent-encoded too many times")
    return name


def _check_segments(name: str) -> None:
    if CONTROL_CHARACTER.search(name):
        raise UnsafePath("file name contains a control character")
    if "\\" in name:
        raise UnsafePath("file name contains a backslash")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafePath("file name is absolute")
    if not _DOT_SEGMENTS.isdisjoint(name.split("/")):
        raise UnsafePath("file name has an empty, '.' or '..' segment")


def resolve_under(root: str | os.PathLike[str], name: str, within: str = "") -> Path:
    """The real path of the regular file ``name`` under ``root``; UnsafePath or FileNotFoundError otherwise.

    Symbolic links are followed and the result must still lie under the real root,
    so a link pointing outside is refused even when the name itself is clean. This
    only *checks* a name: serve with ``open_under``, which opens what was checked.
    ``within``: a folder of the root (a folder link's, ``links.folders.folder``) that the
    real path must lie under too, the folder's own links resolved as the root's are.
    """
    real_root = Path(os.path.realpath(root))
    real = _resolve(real_root, name, within)
    try:
        mode = real.stat().st_mode
    except OSError as error:
        raise _not_found(error, name) from None
    if not stat.S_ISREG(mode):
        raise FileNotFoundError(errno.ENOENT, "not a regular file", name)
    return real


class OpenedFile(NamedTuple):
    """A file opened by ``open_under``: read it through ``handle``, never reopen ``path``."""

    handle: BinaryIO
    stat: os.stat_result
    #: The real path, for headers such as X-Sendfile that hand the file to a front server.
    path: str


def served_root(root: str | os.PathLike[str], name: str) -> str:
    """The real path of ``root``, a directory files are served from; ValueError (``name``: the option) otherwise."""
    if not os.path.isdir(root):
        raise ValueError(f"{name} {os.fspath(root)!r} is not a directory")
    return os.path.realpath(root)


def open_under(root: str | os.PathLike[str], name: str, within: str = "") -> OpenedFile:
    """Open the regular file ``name`` under ``root`` once, for reading; UnsafePath or FileNotFoundError otherwise.

    The name is checked as by ``resolve_under`` (links that stay under the root are
    followed). The real path found is then opened one segment at a time from a
    descriptor of the root, following no symbolic link (``O_NOFOLLOW``), so a
    directory swapped for a link between the check and the open makes the open
    fail instead of leaving the root; size and times come from ``fstat`` of the
    descriptor opened. Every lookup error a name can cause (missing, a loop, too
    long, not a directory, no permission) is FileNotFoundError; running out of
    descriptors, memory or disk is not the name's fault and propagates. ``within``: as for ``resolve_under``.
    """
    if _WALKS_BENEATH and (not within or name.startswith(within + "/")):
        # The usual case first: no symbolic link below the root. Opening the clean name segment by segment,
        # following none, then finds what resolving it would: root/name itself, inside the folder it starts with.
        # The root's own links are followed, as resolving it does.
        parts = tuple(clean_name(name).split("/"))
        try:
            fd = _open_beneath(root, parts, _ROOT_FLAGS)
        except OSError:
            pass  # a link on the way, or no such file: resolve the name, which says which
        else:
            return _opened(fd, name, _real_path(fd, root, parts))
    real_root = os.path.realpath(root)
    real = resolve_under(real_root, name, within) if within else resolve_under(real_root, name)
    try:
        fd = _open_beneath(real_root, real.relative_to(real_root).parts) if _WALKS_BENEATH else _open_same(real)
    except OSError as error:
        raise _not_found(error, name) from None
    return _opened(fd, name, os.fspath(real))


def _opened(fd: int, name: str, real: str) -> OpenedFile:
    """``fd`` as an OpenedFile, if it is a regular file (FileNotFoundError otherwise; closed on any error)."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileNotFoundError(errno.ENOENT, "not a regular file", name)
        if _WALKS_BENEATH:
            os.set_blocking(fd, True)  # opened with O_NONBLOCK
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return OpenedFile(handle, info, real)


def _resolve(real_root: Path, name: str, within: str) -> Path:
    candidate = real_root.joinpath(*clean_name(name).split("/"))
    real = Path(os.path.realpath(candidate))
    if not real.is_relative_to(real_root) or real == real_root:
        raise UnsafePath("file name resolves outside the root")
    if within:  # a folder link's folder: the file must be in it, wherever its links lead
        folder = Path(os.path.realpath(real_root.joinpath(*clean_name(within).split("/"))))
        if not folder.is_relative_to(real_root) or not real.is_relative_to(folder) or real == folder:
            raise UnsafePath("file name resolves outside the signed folder")
    return real


def _open_beneath(real_root: str | os.PathLike[str], parts: tuple[str, ...], root_flags: int = _DIRECTORY_FLAGS) -> int:
    """``openat`` segment by segment from the root, never following a link (ELOOP or ENOTDIR instead)."""
    directory = os.open(real_root, root_flags)
    try:
        for part in parts[:-1]:
            below = os.open(part, _DIRECTORY_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = below
        return os.open(parts[-1], _FILE_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)


def _real_path(fd: int, root: str | os.PathLike[str], parts: tuple[str, ...]) -> str:
    """The real path of the file ``fd``, opened as ``parts`` under ``root`` following no link below it: what the
    kernel says it opened (Linux), else the root resolved and the parts after it."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.join(os.path.realpath(root), *parts)


def _open_same(real: Path) -> int:
    """Where there is no ``openat`` (Windows): open the resolved path, then check it is still that file."""
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        if os.path.realpath(real) != os.fspath(real) or not os.path.samestat(os.fstat(fd), os.stat(real)):
            raise FileNotFoundError(errno.ENOENT, "file changed while opening", os.fspath(real))
    except BaseException:
        os.close(fd)
        raise
    return fd


def caused_by_name(error: OSError) -> bool:
    """Whether an OSError from looking up a file says the name leads nowhere servable (404).

    False for running out of descriptors or memory and for I/O errors: the server's fault, not the name's.
    """
    return error.errno not in _SERVER_ERRNOS


def _not_found(error: OSError, name: str) -> OSError:
    if not caused_by_name(error):
        return error
    return FileNotFoundError(errno.ENOENT, os.strerror(error.errno or errno.ENOENT), name)


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The one byte range to send, None to send the whole file, or RangeNotSatisfiable (416).

    RFC 9110 section 14.2, simplified where the RFC allows a server to: a header that
    is absent, malformed, in another unit, or asks for more than one range is ignored
    and the whole file is sent with 200 (multipart/byteranges answers are rarely used
    by clients and easy to abuse with many overlapping ranges). A single range may be
    ``first-last``, ``first-`` or a ``-suffix``; ``last`` past the end is clamped.
    """
    if not header or len(header) > MAX_RANGE_HEADER:
        return None
    unit, equals, spec = header.partition("=")
    if not equals or unit.strip().lower() != "bytes":
        return None
    specs = [part.strip() for part in spec.split(",") if part.strip()]
    if len(specs) != 1:
        return None
    first, dash, last = specs[0].partition("-")
    first, last = first.strip(), last.strip()
    if not dash or not all(_is_number(text) for text in (first, last) if text) or not (first or last):
        return None
    if not first:
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable(size)
        return ByteRange(max(size - suffix, 0), size, size)
    start = int(first)
    if last and int(last) < start:
        return None
    if start >= size:
        raise RangeNotSatisfiable(size)
    stop = size if not last else min(int(last) + 1, size)
    return ByteRange(start, stop, size)


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS


def range_applies(if_range: str | None, etag: str | None, last_modified: str | None) -> bool:
    """Whether a Range may be honoured under ``If-Range`` (RFC 9110 section 13.1.5).

    Only an exact strong match counts: a weak validator, or a date other than the
    Last-Modified sent, means the client holds another version, so it gets the whole file.
    """
    if if_range is None:
        return True
    if_range = if_range.strip()
    if if_range.startswith('"'):
        return etag is not None and not etag.startswith("W/") and if_range == etag
    return last_modified is not None and if_range == last_modified


def requested_range(
    range_header: str | None, if_range: str | None, size: int, etag: str | None, last_modified: str | None
) -> ByteRange | None:
    """The range a request asks for and may get: ``Range`` gated by ``If-Range``; None for the whole file.

    Raises RangeNotSatisfiable (416) like ``parse_range``. Both adapters decide through here.
    """
    if not range_applies(if_range, etag, last_modified):
        return None
    return parse_range(range_header, size)


def etag_for(size: int, mtime_ns: int) -> str:
    """A strong ETag from size and modification time: the same on every server sharing the file."""
    digest = hashlib.blake2b(f"{size}:{mtime_ns}".encode(), digest_size=12).hexdigest()
    return f'"{digest}"'


def http_date(epoch_seconds: float) -> str:
    """An IMF-fixdate (RFC 9110) for Last-Modified and Expires."""
    return formatdate(epoch_seconds, usegmt=True)


def conditional_status(
    method: str, headers: Mapping[str, str], etag: str | None, mtime: int | None
) -> Literal[304, 412] | None:
    """RFC 9110 section 13.2.2: 412 (If-Match, If-Unmodified-Since fail), 304 (GET or HEAD not modified), or None.

    ``headers``: the request's, read case-insensitively by their lowercase names; ``mtime``: Unix
    seconds. Never asked for a confirmation's POST, which is answered with the file.
    """
    if_match = headers.get("if-match")
    if if_match is not None:
        if etag is None or etag.startswith("W/") or not _matches(if_match, etag, weak=False):
            return 412
    else:
        unmodified_since = _date(headers.get("if-unmodified-since"))
        if unmodified_since is not None and (mtime is None or mtime > unmodified_since):
            return 412
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None:
        if etag is not None and _matches(if_none_match, etag, weak=True):
            return 304 if method in ("GET", "HEAD") else 412
        return None
    modified_since = _date(headers.get("if-modified-since"))
    if method in ("GET", "HEAD") and mtime is not None and modified_since is not None and mtime <= modified_since:
        return 304
    return None


def _matches(header: str, etag: str, *, weak: bool) -> bool:
    tags = {tag.strip() for tag in header.split(",")}
    if "*" in tags:
        return True
    if weak:
        return etag.removeprefix("W/") in {tag.removeprefix("W/") for tag in tags}
    return etag in tags


def _date(header: str | None) -> float | None:
    """An HTTP date as Unix seconds (None: no header, or not a date, which is then ignored)."""
    if header is None:
        return None
    try:
        date = parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return (date if date.tzinfo is not None else date.replace(tzinfo=timezone.utc)).timestamp()


def content_type_for(name: str) -> str:
    """The Content-Type for a file name; octet-stream for unknown or encoded files (never decoded by the browser).
    Asked of ``mimetypes`` each time: an application may add types after start-up (``.ts`` is not video on every
    system)."""
    content_type, encoding = mimetypes.guess_type(name, strict=True)
    if encoding is not None or content_type is None:
        # report.csv.gz is gzip bytes, not CSV a browser should decode.
        return "application/octet-stream"
    return content_type


def content_disposition(filename: str, *, as_attachment: bool = True) -> str:
    """``attachment`` (or ``inline``) with an ASCII ``filename`` and, when needed, ``filename*`` (RFC 6266/8187).

    Only the last path segment is used; control characters, quotes, backslashes and
    other characters that could confuse a header parser or a file system are replaced
    in the ASCII fallback, and everything is percent-encoded in ``filename*``.
    """
    kind = "attachment" if as_attachment else "inline"
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    plain = _FILENAME_SAFE.fullmatch(base) is not None  # the usual name: neither pass, character by character
    if not plain:
        base = "".join(char for char in base if unicodedata.category(char)[0] != "C")
    base = base.strip().strip(".")
    if not base:
        return kind
    fallback = base
    if not plain:
        fallback = "".join(
            char if char.isascii() and (char.isalnum() or char in " !#$&+-.^_`{}~()[]@,;=") else "_" for char in base
        )
    header = f'{kind}; filename="{fallback}"'
    if fallback != base:
        header += f"; filename*=UTF-8''{quote(base, safe='')}"
    return header


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
