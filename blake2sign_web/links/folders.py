"""Folder (prefix) links: one signature for every path under a signed path prefix, and what "under" means.

``URLSigner.sign_prefix`` returns a ``SignedPrefix`` whose query verifies after any path inside the prefix,
under a canonical form of its own (``url1p``: ``form``), so a folder link never verifies as a link to one file,
nor the reverse. ``below`` is the one rule of "inside" (whole segments of the path as served, exactly, and no
dot, empty or encoded-slash segment, control or non-UTF-8 at any decoding depth: docs/signed-urls.md, "What
inside means"); ``folder`` is the folder on disk a served file must stay in.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final, NamedTuple, Protocol
from urllib.parse import unquote

from ..exceptions import BadSignature
from ..signing.signer import MAC_LENGTH
from ..signing.times import Seconds
from . import groups as link_groups
from . import text as link_times
from .files import CONTROL_CHARACTER, UnsafePath
from .text import Bound, canonical_path, encode, split


class FolderLink(Protocol):
    """What ``folder`` reads of a verified link (``links.signer.VerifiedLink``, which imports this module)."""

    @property
    def below(self) -> str | None: ...


#: The first line of the canonical form a prefix link's MAC covers (a single-file link's is ``url1``).
PREFIX_FORM: Final = b"url1p"
#: How many times a path may decode into something else before it is refused (as ``files.clean_name``).
_DECODINGS: Final = 3
#: A path that canonical_path leaves as it is: RFC 3986 pchar and "/", no escape.
_PLAIN_PATH: Final = re.compile("[A-Za-z0-9/!$&'()*+,;=:@._~-]*")
_DOT_SEGMENTS: Final = frozenset(("", ".", ".."))


class SignedPrefix(NamedTuple):
    """A signed prefix: ``query`` verifies after any path inside ``prefix`` (on ``origin``, ``scheme://host``,
    when the signer binds the host; else ""). ``link(path)`` writes one such link."""

    origin: str
    prefix: str
    query: str

    def link(self, path: str = "") -> str:
        """The signed link to ``path``: a path starting with "/" inside the prefix, or one relative to it
        (``"seg-1.ts"``, ``"720p/index.m3u8"``); ValueError for a path the link would not verify for."""
        if not isinstance(path, str):
            raise TypeError(f"path must be a str, not {type(path).__name__}")
        full = path if path.startswith("/") else self.prefix + path
        if "?" in full or "#" in full:
            raise ValueError(f"cannot link {path[:40]!r} under a prefix: write the path alone (no query or fragment)")
        canonical = canonical_path(full)
        if below(canonical, self.prefix) is None:
            raise ValueError(f"{path[:40]!r} is not inside the signed prefix {self.prefix!r}")
        return f"{self.origin}{canonical}?{self.query}"


def path_problem(path: str) -> str | None:
    """Why the request path ``path`` (as the client sent it, percent-encoded) can be inside no prefix, or None."""
    if not path.isascii():
        return "raw non-ASCII character"
    text = path
    for _ in range(_DECODINGS):
        if "%" not in text:  # nothing (more) to decode: the usual request path
            return _segments_problem(text)
        if "%2F" in text or "%2f" in text or "%5C" in text or "%5c" in text:
            return "encoded slash or backslash"
        try:
            decoded = unquote(text, encoding="utf-8", errors="strict")
        except UnicodeDecodeError:
            return "not UTF-8 once decoded"
        problem = _segments_problem(decoded)
        if problem is not None:
            return problem
        if decoded == text:
            return None
        text = decoded
    return "percent-encoded too many times"


def _segments_problem(decoded: str) -> str | None:
    if decoded[:1] != "/":
        return "not an absolute path"
    if "\\" in decoded:
        return "backslash"
    if CONTROL_CHARACTER.search(decoded):
        return "control character"
    segments = decoded.split("/")
    if not _DOT_SEGMENTS.isdisjoint(segments[1:-1]) or segments[-1] in (".", ".."):
        return "empty, '.' or '..' segment"
    return None


def below(path: str, prefix: str) -> str | None:
    """The decoded part of the request path ``path`` below the signed ``prefix`` (canonical, ending with "/"), or
    None when ``path`` is not inside it on whole segments (``path_problem``, or another canonical prefix).

    The one rule of "inside a prefix", for a link's signature now and any later bearer of a prefix.
    """
    if _PLAIN_PATH.fullmatch(path):  # the usual request: nothing to decode, its own canonical form
        if not path.startswith(prefix):
            return None
        rest = path[len(prefix) :]
        segments = rest.split("/")  # the prefix's own segments are clean: only those below it are checked
        if not _DOT_SEGMENTS.isdisjoint(segments[:-1]) or segments[-1] in (".", ".."):
            return None
        return rest
    if path_problem(path) is not None:
        return None
    canonical = canonical_path(path)
    if not canonical.startswith(prefix):
        return None
    return unquote(canonical[len(prefix) :], encoding="utf-8", errors="strict")


def verified_below(path: str, prefix: str, one_file: bool) -> str:
    """``below`` for a folder link whose MAC was checked; BadSignature outside the prefix, or for a link with a
    nonce or a download name (``one_file``), which ``sign`` never writes."""
    if one_file:
        raise BadSignature("folder URL with a nonce or a download name")
    rest = below(path, prefix)
    if rest is None:
        raise BadSignature("path is not inside the signed prefix")
    return rest


def signable(path: str) -> str:
    """The canonical form of a prefix to sign; ValueError unless it is a path ending with "/" that ``below``
    can match (no dot, empty or encoded-slash segment, no control character or backslash)."""
    canonical = canonical_path(path)
    if not path.endswith("/") or not canonical.endswith("/"):
        raise ValueError(
            f"cannot sign prefix {path[:40]!r}: a prefix ends with '/' (so /videos/12 never covers /videos/123)"
        )
    problem = path_problem(canonical)
    if problem is not None:
        raise ValueError(f"cannot sign prefix {path[:40]!r}: {problem}")
    return canonical


def folder(name: str, link: FolderLink | None) -> str:
    """The folder of the served ``name`` (a file helper's path, "/"-separated) that the file must stay in: "" for
    the whole root (a single-file link, or a prefix that holds the route), else ``name`` less what the request
    path had below the prefix. UnsafePath when they do not line up (a route that rewrites its paths)."""
    if link is None or link.below is None:
        return ""
    rest = link.below
    if rest == name or (rest.endswith("/" + name)):
        return ""  # the prefix holds the route's own prefix: the root bounds it
    if not rest or not name.endswith("/" + rest):
        raise UnsafePath("file name does not line up with the signed prefix")
    return name[: -len(rest) - 1]


def sign(
    signer: Any,  # a URLSigner (urls.py imports this module)
    prefix: str,
    expires_in: Seconds | None,
    expires_at: int | datetime | None,
    starts: int | datetime | None,
    bind: Bound | None,
    single_use: bool,
    filename: str | None,
    group: str | None = None,
) -> SignedPrefix:
    """``URLSigner.sign_prefix``: ``prefix`` signed with ``signer``'s keys, in the folder links' own form."""
    if single_use:
        raise ValueError(
            "a folder link cannot be single-use: its first request would use it up for every file under it "
            "(sign each file with sign(..., single_use=True) instead)"
        )
    if filename is not None:
        raise ValueError("a folder link names no download: filename= is for a link to one file (sign it with sign())")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
    scheme, netloc, path, query, fragment = split(prefix)
    if query or fragment or (scheme and not netloc):
        raise ValueError(f"cannot sign prefix {prefix[:40]!r}: a folder is a path (or scheme://host/path) alone")
    host = signer._host(scheme, netloc)
    if signer.bind_host and not host:
        raise ValueError("this URLSigner binds the host (bind_host=True): sign an absolute URL")
    expires = link_times.expiry(expires_in, expires_at, signer._clock)
    starts_at = link_times.start(starts, expires)
    canonical = signable(path)
    pairs = [(signer.prefix_param, canonical)]
    if expires is not None:
        pairs.append((signer.expires_param, str(expires)))
    if starts_at is not None:
        pairs.append((signer.starts_param, str(starts_at)))
    if group is not None:
        pairs += link_groups.signed_pairs(group, expires, signer._clock, signer.group_param, signer.issued_param)
    pairs.append((signer.key_id_param, signer.key_id))
    token = signer._seal(form(signer._canonical(host, canonical, pairs, bind)))
    query = "".join(f"{encode(k)}={encode(v)}&" for k, v in pairs) + f"{signer.signature_param}={token[-MAC_LENGTH:]}"
    return SignedPrefix(f"{scheme}://{netloc}" if scheme else "", canonical, query)


def form(file_form: bytes) -> bytes:
    """A folder link's canonical form: a single-file link's (``url1``, then the host, the prefix as its path, the
    query and the bound value), its first line ``url1p``, so that no MAC of either form verifies the other."""
    return PREFIX_FORM + file_form.removeprefix(b"url1")


def read(prefixes: tuple[str, ...]) -> str:
    """The one prefix of a folder link's query, for the canonical form its MAC covers; BadSignature unless it has
    the shape of what ``sign`` writes (a path ending with "/", on one line). The rest of ``signable``'s rules need
    not be checked again: the MAC covers the prefix as written, and ``sign`` writes only what they allow."""
    if len(prefixes) != 1:
        raise BadSignature("URL has more than one prefix")
    prefix = prefixes[0]
    if prefix[:1] != "/" or prefix[-1:] != "/" or "\n" in prefix:
        raise BadSignature("malformed prefix")
    return prefix
