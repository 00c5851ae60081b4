"""HLS playlists whose URIs carry a folder link's query, for players and CDNs that send no cookie.

``sign_playlist`` writes a folder link's query (its ``SignedPrefix``) after each URI of a playlist; ``with_query``
writes a query already verified (the file views rewrite a playlist they serve by a folder link with that
request's own: ``passed_query``, ``rewritten``), no secret needed. Only URIs inside the prefix, on the
playlist's own origin and without a query of their own get it; the rest, line endings and a BOM are kept as
they are, and the sizes are bounded: docs/protecting-video.md.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Final
from urllib.parse import quote, unquote, urljoin, urlsplit

from . import folders as link_prefix
from .folders import SignedPrefix
from .requests import FileAnswer, Refusal, download_disposition, file_headers, logged
from .signer import URLSigner, VerifiedLink
from .text import PATH_SAFE, encode, parse_query

if TYPE_CHECKING:
    from .stored_files import StoredFile

logger = logging.getLogger("blake2sign_web.signed_urls")

#: The largest playlist ``sign_playlist`` rewrites, in characters.
MAX_PLAYLIST_SIZE: Final = 4 * 1024 * 1024
#: The largest playlist a file view rewrites per request, in bytes: about 30,000 segments (a VOD playlist of a few
#: hours is a few hundred KiB). The rewrite costs CPU on every request and each URI gains the query (the body grows
#: 4 to 8 times), so a larger one is refused with ``TOO_LARGE``.
MAX_SERVED_SIZE: Final = 1024 * 1024
#: The answer to a playlist a file view will not rewrite: the server's content, not the request, is at fault.
TOO_LARGE: Final = Refusal(500, "This playlist is too large to be sent by a folder link.")
#: The longest line rewritten, in characters (an EXT-X-DATERANGE with SCTE-35 data can be long).
MAX_LINE_LENGTH: Final = 64 * 1024
#: The tags whose ``URI="..."`` attribute a player fetches (RFC 8216 and its draft successor).
URI_TAGS: Final = frozenset(
    {
        "EXT-X-KEY",
        "EXT-X-SESSION-KEY",
        "EXT-X-MAP",
        "EXT-X-MEDIA",
        "EXT-X-I-FRAME-STREAM-INF",
        "EXT-X-PART",
        "EXT-X-PRELOAD-HINT",
        "EXT-X-RENDITION-REPORT",
        "EXT-X-SESSION-DATA",
    }
)
#: The content types of an HLS (or M3U) playlist.
PLAYLIST_TYPES: Final = frozenset(
    {"application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl"}
)
#: What a rewritten playlist is sent as, whatever its name's type: it carries a signature, so no cache keeps it.
REWRITTEN_HEADERS: Final = {"Content-Type": "application/vnd.apple.mpegurl", "Cache-Control": "private, no-store"}

_LINE_BREAKS: Final = re.compile(r"(\r\n|\r|\n)")
#: How the lines of ``URI_TAGS`` start: "#" and the name, then ":" (other tags and comments are left as they are).
_URI_TAG_STARTS: Final = tuple(f"#{name}:" for name in sorted(URI_TAGS))
#: A URI reference that starts with a scheme (RFC 3986): an absolute URL, or data:, javascript:...
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
#: A URI reference every parser reads alike: printable ASCII, no space, quote or backslash (a browser reads
#: "\\host" as "//host", and drops tabs: "/\t/host").
_PLAIN: Final = re.compile(r"[!#-\[\]-~]+")
#: A query as ``link_query`` and ``sign_prefix`` write it: unreserved characters, escapes, "=" and "&".
_QUERY: Final = re.compile(r"[A-Za-z0-9._~%=&-]+")
#: A relative reference that resolves by being appended to the playlist's folder (segments of unreserved
#: characters; a "." or ".." segment is resolved by ``urljoin``): the usual segment URI, "seg-001.ts", "720p/a.ts".
_SIMPLE_RELATIVE: Final = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")
_DOT_SEGMENTS: Final = frozenset((".", ".."))
#: One attribute of a tag's list: NAME=value, the value a quoted string (no '"', CR or LF) or unquoted.
_ATTRIBUTE: Final = re.compile(r'([A-Z0-9-]+)=("[^"\r\n]*"|[^",]*)')


class PlaylistTooLarge(ValueError):
    """A playlist over ``MAX_PLAYLIST_SIZE``, or with a line over ``MAX_LINE_LENGTH``: not rewritten."""


def sign_playlist(text: str, signed: SignedPrefix, playlist: str, *, origin: str = "") -> str:
    """``text`` with ``signed.query`` after every URI inside ``signed.prefix``; ``playlist``: the playlist's own
    path (or one relative to the prefix, as ``SignedPrefix.link`` takes), which relative URIs resolve against.

    ``origin`` (``https://example.com``): the origin the playlist is served from, so that absolute URLs on it
    are signed too (a signer that binds the host gives its own, ``signed.origin``). ValueError when
    ``playlist`` is not inside the prefix; ``PlaylistTooLarge``.
    """
    path = playlist if playlist.startswith("/") else signed.prefix + playlist
    if "?" in path or "#" in path or link_prefix.below(path, signed.prefix) is None:
        raise ValueError(f"the playlist {playlist[:40]!r} is not inside the signed prefix {signed.prefix!r}")
    return with_query(text, signed.query, path, signed.prefix, signed.origin or origin)


def with_query(text: str, query: str, playlist_path: str, prefix: str, origin: str = "") -> str:
    """``text`` with ``"?" + query`` after every URI that resolves, from ``playlist_path`` (the playlist's path,
    percent-encoded), inside ``prefix`` (canonical, ending with "/"); absolute URLs only on ``origin``
    (``scheme://host[:port]``; "": none). ``query`` must be what ``link_query`` returns (only unreserved
    characters and escapes: nothing that could end a quoted attribute or a line; ValueError otherwise).
    ``PlaylistTooLarge``."""
    if not _QUERY.fullmatch(query):
        raise ValueError("the query to add must be percent-encoded (what link_query or sign_prefix writes)")
    if len(text) > MAX_PLAYLIST_SIZE:
        raise PlaylistTooLarge(f"playlist over {MAX_PLAYLIST_SIZE} characters")
    own = _origin(origin)
    base = f"{own[0] if own else 'http'}://playlist.invalid{playlist_path}"
    folder = playlist_path[: playlist_path.rfind("/") + 1]

    def add(uri: str) -> str:
        if _SIMPLE_RELATIVE.fullmatch(uri) and _DOT_SEGMENTS.isdisjoint(uri.split("/")):
            return uri if link_prefix.below(folder + uri, prefix) is None else f"{uri}?{query}"
        return _signed_uri(uri, query, base, prefix, own)

    # One pass, a few string operations per line: the usual lines (tags no player fetches, a segment's relative
    # URI) are decided without building anything; the others go through ``_line``.
    pieces, step = (text.split("\n"), 1) if "\r" not in text else (_LINE_BREAKS.split(text), 2)
    if max(map(len, pieces)) > MAX_LINE_LENGTH:
        raise PlaylistTooLarge(f"playlist line over {MAX_LINE_LENGTH} characters")
    inside, suffix, simple = _simple_inside(folder, prefix), "?" + query, _SIMPLE_RELATIVE.fullmatch
    for index in range(0, len(pieces), step):
        line = pieces[index]
        if not line:
            continue
        first = line[0]
        if first == "#":
            if line.startswith(_URI_TAG_STARTS):
                pieces[index] = _line(line, add)
        elif inside is not None and first != "." and "/." not in line and simple(line):  # no dot segment
            if inside:
                pieces[index] = line + suffix
        else:
            pieces[index] = _line(line, add)
    return ("\n" if step == 1 else "").join(pieces)


def front_server_rewrite(text: str, query: str, playlist_path: str, prefix: str) -> str:
    """``text`` as a front server signs it for a folder link: ``query`` after each URI of the simple kind
    (``seg-001.ts``, ``720p/index.m3u8``: unreserved characters, no dot segment) that resolves inside ``prefix``
    from ``playlist_path``, on URI lines and in the ``URI`` attributes of ``URI_TAGS``; every other URI, line and
    line ending as it was. The subset of ``with_query`` that players meet (ffmpeg and packagers write these), and
    few enough rules for every front server to follow alike (docs/link-format.md, "Playlists")."""
    folder = playlist_path[: playlist_path.rfind("/") + 1]

    def add(uri: str) -> str:
        if not _SIMPLE_RELATIVE.fullmatch(uri) or not _DOT_SEGMENTS.isdisjoint(uri.split("/")):
            return uri
        return uri if link_prefix.below(folder + uri, prefix) is None else f"{uri}?{query}"

    pieces = _LINE_BREAKS.split(text)
    for index in range(0, len(pieces), 2):
        if pieces[index]:
            pieces[index] = _line(pieces[index], add)
    return "".join(pieces)


def _simple_inside(folder: str, prefix: str) -> bool | None:
    """Whether a relative URI of ``_SIMPLE_RELATIVE`` with no dot segment resolves inside ``prefix`` from
    ``folder``: the same answer for every such URI (unreserved characters append whole segments, decoded as they
    are), read once; None when the folder is not under the prefix as written (then each URI is asked)."""
    if not folder.startswith(prefix):
        return None
    return link_prefix.below(folder + "x", prefix) == unquote(folder[len(prefix) :]) + "x" or None


def _line(line: str, add: Callable[[str], str]) -> str:
    """One line with its URIs signed: a URI line, or a tag of ``URI_TAGS`` with a ``URI`` attribute."""
    content = line.lstrip("\ufeff").strip()
    if not content:
        return line
    if not content.startswith("#"):
        start = line.index(content)
        return line[:start] + add(content) + line[start + len(content) :]
    name, colon, _ = content[1:].partition(":")
    if not colon or name not in URI_TAGS:
        return line
    start = line.index(content) + len(name) + 2
    return line[:start] + _attributes(line[start:], add)


def _attributes(text: str, add: Callable[[str], str]) -> str:
    """An attribute list with its ``URI`` (quoted) signed; a list that cannot be read is left as it is."""
    out: list[str] = []
    position = 0
    while position < len(text):
        found = _ATTRIBUTE.match(text, position)
        if found is None:
            return text
        name, value = found.groups()
        if name == "URI" and len(value) >= 2 and value[0] == '"' == value[-1]:
            value = '"' + add(value[1:-1]) + '"'
        out.append(f"{name}={value}")
        position = found.end()
        if position < len(text):
            if text[position] != ",":
                rest = text[position:]
                if rest.strip():
                    return text
                out.append(rest)
                break
            out.append(",")
            position += 1
    return "".join(out)


def _origin(origin: str) -> tuple[str, str] | None:
    if not origin:
        return None
    parts = urlsplit(origin)
    return parts.scheme.lower(), parts.netloc.lower()


def _signed_uri(uri: str, query: str, base: str, prefix: str, origin: tuple[str, str] | None) -> str:
    """``uri`` with the query when it resolves inside ``prefix``, else as it is."""
    reference, hash_, fragment = uri.partition("#")
    if "?" in reference or not _PLAIN.fullmatch(reference):
        return uri  # its own query (a query added to it would not verify), or a URI no player sends as it is
    try:
        parts = urlsplit(urljoin(base, reference))  # RFC 3986 resolution: dot segments removed
    except ValueError:
        return uri
    absolute = reference.startswith("//") or _SCHEME.match(reference)  # an absolute URL, or "//host/path"
    if absolute and (origin is None or (parts.scheme.lower(), parts.netloc.lower()) != origin):
        return uri  # data:, another scheme, another host: never sent the signature
    path = parts.path
    if link_prefix.below(path, prefix) is None:
        return uri
    return f"{reference}?{query}{hash_}{fragment}"


def link_query(query: str, signature_param: str, ignored: Callable[[str], bool]) -> str | None:
    """The query of a request by a folder link that its playlist's URIs are to carry: its parameters less the
    ignored ones (``ignored``, the signer's), each re-encoded (unreserved characters and escapes only); None
    when it has no signature (a request granted another way: nothing to pass on)."""
    pairs = [(key, value) for key, value in parse_query(query) if not ignored(key)]
    if not any(key == signature_param for key, _ in pairs):
        return None
    return "&".join(f"{encode(key)}={encode(value)}" for key, value in pairs)


def is_playlist(name: str) -> bool:
    """Whether the file ``name`` is an HLS (M3U) playlist, by its name: ``.m3u8`` or ``.m3u``, the names
    ``PLAYLIST_TYPES`` go by (the name alone: each segment of a folder asks)."""
    return name.lower().endswith((".m3u8", ".m3u"))


def passed_query(
    name: str, link: VerifiedLink | None, query_string: str, signer: URLSigner, enabled: bool
) -> str | None:
    """The query a file view passes on to the URIs of the playlist ``name`` it serves by a folder link, read from
    the request's ``query_string`` (``link_query``); None: send the file as it is (not a playlist, another link,
    the view's option off, a request granted without a signature in its URL). Nothing is answered yet: the
    link's store checks come first (``links.guard.FileRequest``), then ``served``."""
    if not enabled or link is None or link.prefix is None or link.below is None or link.nonce is not None:
        return None
    if not is_playlist(name):
        return None
    return link_query(query_string, signer.signature_param, signer.ignores)


def rewritten(data: bytes, query: str, link: VerifiedLink, origin: str) -> bytes:
    """The playlist file ``data`` as a view sends it by the folder ``link``: its URIs with ``query``
    (``passed_query``), resolved from the path the link verified at, absolute URLs on the request's ``origin``
    (``scheme://host``). Bytes that are not UTF-8 are kept. ``PlaylistTooLarge`` over ``MAX_SERVED_SIZE`` bytes
    or with a line over ``MAX_LINE_LENGTH``."""
    if link.prefix is None or link.below is None:  # not a folder link: passed_query never says so
        return data
    if len(data) > MAX_SERVED_SIZE:
        raise PlaylistTooLarge(f"over the {MAX_SERVED_SIZE} bytes a file view rewrites")
    path = link.prefix + quote(link.below, safe=PATH_SAFE, encoding="utf-8", errors="surrogateescape")
    text = with_query(data.decode("utf-8", "surrogateescape"), query, path, link.prefix, origin)
    return text.encode("utf-8", "surrogateescape")


def read(handle: IO[bytes]) -> bytes:
    """The playlist, read whole from ``handle`` (``served`` checked its size): at most one byte over the limit,
    which ``rewritten`` then refuses, should the file have grown."""
    return handle.read(MAX_SERVED_SIZE + 1)


def served(
    stored: StoredFile, query: str, link: VerifiedLink, origin: str, name: str, as_attachment: bool, method: str
) -> tuple[FileAnswer, bytes] | Refusal:
    """What a file view sends for the playlist ``stored`` that ``passed_query`` gave ``query``, once the link's
    checks passed: the answer (``answer``) and the body (``rewritten`` on the request's ``origin``), whole; HEAD
    gets the answer without rewriting (no ``Content-Length``: only the rewrite tells it; RFC 9110, 9.3.2). A
    playlist over ``MAX_SERVED_SIZE`` or with a line over ``MAX_LINE_LENGTH`` is refused (``TOO_LARGE``, an
    error logged). The file is closed. A GET reads the file: an asynchronous view runs it in a thread."""
    try:
        if stored.size > MAX_SERVED_SIZE:
            return _too_large(name, f"{stored.size} bytes, over the {MAX_SERVED_SIZE} a file view rewrites")
        if method == "HEAD":
            return answer(name, as_attachment, link, None), b""
        handle, _, _ = stored.body(None)  # a storage's own reader, or the file
        with handle:
            data = read(handle)
    finally:
        stored.close()
    try:
        body = rewritten(data, query, link, origin)
    except PlaylistTooLarge as error:
        return _too_large(name, str(error))
    return answer(name, as_attachment, link, len(body)), body


def _too_large(name: str, why: str) -> Refusal:
    logger.error(
        "refused the playlist %r: %s (split it, or sign it with sign_playlist() and serve the signed copy)",
        logged(name),
        why,
    )
    return TOO_LARGE


def answer(name: str, as_attachment: bool, link: VerifiedLink, length: int | None) -> FileAnswer:
    """The answer of a rewritten playlist of ``length`` bytes (None: not rewritten, HEAD): 200 with the whole body
    (no range, no validators: the body is not the file's), ``REWRITTEN_HEADERS`` (its type; no cache keeps a
    signature)."""
    headers = file_headers(name, download_disposition(name, as_attachment, link), None, None, posted=False)
    headers.update(REWRITTEN_HEADERS)
    if length is not None:
        headers["Content-Length"] = str(length)
    return FileAnswer(200, headers, None)
