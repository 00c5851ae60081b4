"""What both adapters need to serve a file safely: paths, ranges, validators, filenames.

A valid signature says the application meant to hand out *this URL*; it does not
make the path in it safe (the application may sign user-chosen names), so every
name is checked here again, whatever signed it.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
import unicodedata
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import Final, NamedTuple
from urllib.parse import quote, unquote

#: Bytes read per chunk when a response streams a file itself.
CHUNK_SIZE: Final = 64 * 1024
#: A Range header longer than this is not parsed (a single range needs fewer than 50).
MAX_RANGE_HEADER: Final = 1024
_MAX_DIGITS: Final = 19


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
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise UnsafePath("file name contains a control character")
    if "\\" in name:
        raise UnsafePath("file name contains a backslash")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafePath("file name is absolute")
    if any(segment in ("", ".", "..") for segment in name.split("/")):
        raise UnsafePath("file name has an empty, '.' or '..' segment")


def resolve_under(root: str | os.PathLike[str], name: str) -> Path:
    """The real path of the regular file ``name`` under ``root``; UnsafePath or FileNotFoundError otherwise.

    Symbolic links are followed and the result must still lie under the real root,
    so a link pointing outside is refused even when the name itself is clean.
    """
    real_root = Path(os.path.realpath(root))
    candidate = real_root.joinpath(*clean_name(name).split("/"))
    real = Path(os.path.realpath(candidate))
    if not real.is_relative_to(real_root) or real == real_root:
        raise UnsafePath("file name resolves outside the root")
    try:
        mode = real.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(name) from None
    if not stat.S_ISREG(mode):
        raise FileNotFoundError(name)
    return real


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
    return formatdate(epoch_seconds, usegmt=True)


def not_modified(if_none_match: str | None, if_modified_since: str | None, etag: str | None, mtime: float) -> bool:
    """Whether a GET or HEAD may be answered 304 (RFC 9110 section 13.2.2, steps 3 and 4)."""
    if if_none_match is not None:
        if etag is None:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or etag.removeprefix("W/") in tags
    if if_modified_since is None:
        return False
    try:
        since = parsedate_to_datetime(if_modified_since).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    return int(mtime) <= since


def content_type_for(name: str) -> str:
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
    base = "".join(char for char in base if unicodedata.category(char)[0] != "C").strip().strip(".")
    if not base:
        return kind
    fallback = "".join(
        char if char.isascii() and (char.isalnum() or char in " !#$&+-.^_`{}~()[]@,;=") else "_" for char in base
    )
    header = f'{kind}; filename="{fallback}"'
    if fallback != base:
        header += f"; filename*=UTF-8''{quote(base, safe='')}"
    return header
