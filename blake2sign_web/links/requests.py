"""What a request by a signed link gets, decided once for every framework (no I/O here).

An adapter describes its request in plain values, calls these functions in order and turns what they return
into its framework's response; the I/O (the store, the file) stays in the adapter, between the decisions:
``check`` (``verify``, then ``admission``: the ``VerifiedLink``, a ``Confirmation`` or a ``Refusal``); for a file
``file_range``; for a single-use or grouped link ``consumption``, ``before_store``, the store's call
(``store_answer``, ``group_answer``) and ``consumed``; for a file ``answer_file``. A ``Refusal`` is a status, a
plain-text message and its headers (the statuses: docs/signed-urls.md, "Status codes").
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Final, Literal, NamedTuple, TypeVar
from urllib.parse import urlsplit

from ..exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from ..stores.revocation import LinkAnswer, StoreUnavailable
from . import files
from . import grants as link_cookies
from .options import EXPIRED_STATUSES as EXPIRED_STATUSES
from .options import check_expired_status as check_expired_status
from .options import check_link_options as check_link_options
from .signer import Bound, URLSigner, VerifiedLink

logger = logging.getLogger("blake2sign_web.signed_urls")
T = TypeVar("T")

#: At most this many characters of a refused path are logged (escaped with repr).
LOGGED_PATH_LENGTH: Final = 200
INVALID: Final = "This link is not valid."
EXPIRED: Final = "This link has expired."
USED: Final = "This link has already been used."
WITHDRAWN: Final = "This link has been withdrawn."
UNAVAILABLE: Final = "This link cannot be checked right now; try again shortly."
CROSS_SITE: Final = "This link must be confirmed from its own page."
#: A link before its start: when it becomes valid, in UTC (``not_yet_valid``).
NOT_YET_VALID: Final = "This link is not valid yet; it becomes valid at {:%Y-%m-%d %H:%M:%S} UTC."


def continuation_cost(method: str, requested: files.ByteRange | None, size: int) -> int | None:
    """What a request for an already used single-use file link would fetch, or None if it cannot continue it:
    HEAD (no bytes), or GET of one satisfiable range shorter than the file (``files.requested_range``), deducted
    from the link's byte budget (docs/signed-urls.md, "Single-use links")."""
    if method == "HEAD":
        return 0
    if method != "GET" or requested is None or requested.length >= size:
        return None
    return requested.length


class Refusal(NamedTuple):
    """What stands in for the view: ``status``, a plain-text ``message``, and ``headers`` (Allow for a 405)."""

    status: int
    message: str
    headers: Mapping[str, str] = MappingProxyType({})


#: The range a file request asks for and may get, why it may not (416), or None for the whole file.
Wanted = files.ByteRange | files.RangeNotSatisfiable | None
Admission = Literal["proceed", "confirm"]
PROCEED: Final = "proceed"
CONFIRM: Final = "confirm"


def logged(path: str) -> str:
    """The part of a path that is logged (with repr: it may hold CR, LF, ESC or U+2028 that would forge lines)."""
    return path[:LOGGED_PATH_LENGTH]


def with_prefix(path: str, prefix: str) -> str:
    """``path`` under ``prefix``: the path prefix a proxy took off (the link was signed with it), put back unless
    the server passed it on."""
    if not prefix:  # the usual case, first: every request by a link asks
        return path
    prefix = prefix.rstrip("/")
    if not prefix or (path + "/").startswith(prefix + "/"):
        return path
    return prefix + "/" + path.removeprefix("/")


def request_target(path: str, query: str, origin: tuple[str, str] | None = None) -> str:
    """What a request's link is verified as: its path and query, after ``scheme://host`` when the signer binds
    the host (``origin``: the scheme and the host the client asked for)."""
    url = f"{path}?{query}" if query else path
    return url if origin is None else f"{origin[0]}://{origin[1]}{url}"


def verify(
    signer: URLSigner,
    url: str | None,
    bind: Bound | None,
    path: str,
    expired_status: int = 410,
    grant: str | None = None,
) -> VerifiedLink | Refusal:
    """The verified link, or the refusal of a bad (403), expired (``expired_status``) or not yet valid (403:
    ``not_yet_valid``) one, logged (the reason, never the URL, whose query holds the signature).

    ``url``: the path and query the client sent (absolute when the signer binds the host), None when the path
    is not text or the query is not what the view can read (``links.targets.werkzeug_query``); ``path``: the
    decoded path, for the log; ``grant``: a grant cookie's value to verify instead (``links.grants.grant_for``).
    Its parameters, like ``admission``'s, may be passed by position: each request by a link calls both."""
    if url is None:
        logger.warning("rejected signed URL for %r: path or query is not UTF-8", logged(path))
        return Refusal(403, INVALID)
    try:
        if grant is None:
            return signer.verify_link(url, bind=bind)
        return link_cookies.verify(signer, url, grant, bind)
    except SignatureExpired:
        logger.info("expired %s for %r", _BEARER[grant is None], logged(path))
        return Refusal(expired_status, EXPIRED)
    except SignatureNotYetValid as error:
        logger.info("%s for %r is not valid before %d", _BEARER[grant is None], logged(path), error.valid_from)
        return not_yet_valid(error.valid_from)
    except BadSignature as error:
        logger.warning("rejected %s for %r: %s", _BEARER[grant is None], logged(path), error)
        return Refusal(403, INVALID)


#: What a request's link came in, for the log: by URL (True) or by grant cookie (False).
_BEARER: Final = {True: "signed URL", False: "grant cookie"}


def not_yet_valid(valid_from: int) -> Refusal:
    """The refusal of a link before its start (``valid_from``, Unix seconds): 403, saying when it becomes valid."""
    return Refusal(403, NOT_YET_VALID.format(datetime.fromtimestamp(valid_from, tz=timezone.utc)))


def admission(link: VerifiedLink, method: str, serves_file: bool = False) -> Admission | Refusal:
    """What ``method`` may do with a verified link: go on, get the confirmation page (GET or HEAD of a
    ``consume_on="post"`` link), or 405 (a file is only read, or POSTed from its confirmation page)."""
    posted = link.consume_on == "post"
    if posted and method in ("GET", "HEAD"):
        return CONFIRM
    if posted and method != "POST":
        return Refusal(405, "Method Not Allowed", {"Allow": "GET, HEAD, POST"})
    if serves_file and not posted and method not in ("GET", "HEAD"):
        return Refusal(405, "Method Not Allowed", {"Allow": "GET, HEAD"})
    return PROCEED


class Confirmation(NamedTuple):
    """GET or HEAD of a verified ``consume_on="post"`` link: the adapter answers with the confirmation page."""

    link: VerifiedLink


def check(
    signer: URLSigner,
    url: str | None,
    bind: Bound | None,
    path: str,
    method: str,
    expired_status: int = 410,
    serves_file: bool = False,
    grant: str | None = None,
) -> VerifiedLink | Confirmation | Refusal:
    """``verify`` then ``admission``, in one call: the link the request may go on with (nothing consumed yet),
    its confirmation page, or the refusal that stands in for the view. (By position: each request by a link
    calls it.)"""
    link = verify(signer, url, bind, path, expired_status, grant)
    if type(link) is not VerifiedLink:
        return link
    admitted = admission(link, method, serves_file)
    if admitted == PROCEED:
        return link
    return Confirmation(link) if admitted == CONFIRM else admitted


class Consumption(NamedTuple):
    """What to ask the store for a single-use link: the file's size and the continuation's cost, or None."""

    file_size: int | None = None
    continuation: int | None = None


def consumption(link: VerifiedLink, method: str, *, file_size: int | None = None, wanted: Wanted = None) -> Consumption:
    """The terms of the store call. Only a file's link (``file_size``; ``wanted``: the range asked for) continues
    after its first use, for the same client (HEAD, one byte range shorter than the file:
    ``continuation_cost``); a link confirmed by POST, or to any other view, is used up by its first
    request."""
    if file_size is None or link.consume_on == "post":
        return Consumption()
    byte_range = wanted if isinstance(wanted, files.ByteRange) else None
    return Consumption(file_size, continuation_cost(method, byte_range, file_size))


def client_identity(address: str, user_agent: str) -> str:
    """Who is asking, by default: the client's address and User-Agent (the same text may continue a download)."""
    return f"{address} {user_agent}"


class StoreCall(NamedTuple):
    """The store call that uses a single-use link up, or checks a grouped link's ``group`` (``issued_us``: its
    issue time; then ``nonce`` is None unless it is single-use too). The adapter makes it, with the client."""

    nonce: str | None
    expires_at: int
    file_size: int | None
    continuation: int | None
    group: str | None = None
    issued_us: int | None = None


def needs_store(link: VerifiedLink) -> bool:
    """Whether a verified link is checked in the store: a single-use link (used up) or a grouped one."""
    return link.nonce is not None or link.group is not None


def before_store(
    link: VerifiedLink, *, path: str, missing_store: str | None, cross_site: bool = False, terms: Consumption
) -> StoreCall | Refusal | None:
    """What to ask the store for a single-use or grouped link, or why not to (None: it is neither): 403 when nothing
    can consume it (``missing_store``: the option to set) or for a ``cross_site`` confirmation's POST."""
    if link.expires_at is None or not needs_store(link):
        return None
    if cross_site:
        logger.warning("refused a cross-site POST of the single-use URL for %r", logged(path))
        return Refusal(403, CROSS_SITE)
    if missing_store is not None:
        logger.error("refused %s for %r: %s", link_kind(link.nonce), logged(path), missing_store)
        return Refusal(403, INVALID)
    if link.group is None:
        return StoreCall(link.nonce, link.expires_at, terms.file_size, terms.continuation)
    return StoreCall(link.nonce, link.expires_at, terms.file_size, terms.continuation, link.group, link.issued_us)


def link_kind(nonce: str | None) -> str:
    """What the log calls a link the store is asked about: single-use (``nonce``), or grouped only."""
    return "grouped URL" if nonce is None else "single-use URL"


def store_arguments(call: StoreCall, client: str) -> tuple[tuple[object, ...], dict[str, object]]:
    """The arguments of the store's ``consume_link`` (a single-use link's ``call``) or ``check_link`` (a grouped
    link's)."""
    terms: dict[str, object] = {"file_size": call.file_size, "continuation": call.continuation}
    if call.group is not None:
        terms |= {"group": call.group, "issued_us": call.issued_us}
    return (call.nonce, call.expires_at, client), terms


def store_answer(ask: Callable[..., T], call: StoreCall, client: str) -> T | StoreUnavailable:
    """The store's answer to ``call`` (``ask``: its ``consume_link`` or ``check_link``), or its failure, for
    ``consumed``."""
    arguments, terms = store_arguments(call, client)
    try:
        return ask(*arguments, **terms)
    except StoreUnavailable as error:
        return error


async def astore_answer(ask: Callable[..., Awaitable[T]], call: StoreCall, client: str) -> T | StoreUnavailable:
    """``store_answer`` of an asynchronous store."""
    arguments, terms = store_arguments(call, client)
    try:
        return await ask(*arguments, **terms)
    except StoreUnavailable as error:
        return error


def consumed(
    answer: bool | LinkAnswer | StoreUnavailable,
    *,
    path: str,
    fails_open: bool,
    expired_status: int = 410,
    option: str,
    kind: str = "single-use URL",
) -> Refusal | None:
    """The store's answer (True or "ok": this request may have the link; False or "used"; "withdrawn") or its
    failure as None or a refusal: 503 (or, ``fails_open``, through, logged; ``option``: that choice's name for
    the log; ``kind``: the link's)."""
    if isinstance(answer, StoreUnavailable):
        if fails_open:
            logger.error("accepted %s for %r unchecked (%s='open'): %s", kind, logged(path), option, answer)
            return None
        logger.error("refused %s for %r: %s", kind, logged(path), answer)
        return Refusal(503, UNAVAILABLE)
    if answer is True or answer == "ok":
        return None
    if answer == "withdrawn":
        logger.info("refused URL for %r: its group was revoked", logged(path))
        return Refusal(expired_status, WITHDRAWN)
    logger.info("used single-use URL for %r", logged(path))
    return Refusal(expired_status, USED)


def download_disposition(name: str, as_attachment: bool, link: VerifiedLink | None) -> str:
    """``Content-Disposition``: the link's signed filename and disposition where it has them, else the view's."""
    if link is not None and link.disposition is not None:
        as_attachment = link.disposition == "attachment"
    filename = name if link is None or link.filename is None else link.filename
    return files.content_disposition(filename, as_attachment=as_attachment)


def file_headers(
    name: str, disposition: str, etag: str | None, last_modified: str | None, *, posted: bool
) -> dict[str, str]:
    """The headers of a file sent by a link, before its length and range: the type follows the stored name, never
    the link's filename (a link cannot make a file HTML); a confirmation's POST is answered once, never cached."""
    headers = {
        "Content-Type": files.content_type_for(name),
        "Content-Disposition": disposition,
        "X-Content-Type-Options": "nosniff",
    }
    if posted:
        headers["Cache-Control"] = "no-store"
    if etag is not None and last_modified is not None:
        headers.update({"ETag": etag, "Last-Modified": last_modified})
    return headers


def wanted_range(
    headers: Mapping[str, str], size: int, etag: str | None, last_modified: str | None, *, posted: bool
) -> Wanted:
    """The byte range a request asks for and may get (``Range`` gated by ``If-Range``), None for the whole file (a
    confirmation's POST too), or why not (416)."""
    if posted:
        return None
    try:
        return files.requested_range(headers.get("range"), headers.get("if-range"), size, etag, last_modified)
    except files.RangeNotSatisfiable as error:
        return error


class FileAnswer(NamedTuple):
    """200 (the whole file), 206 (``byte_range``) or 416, with every header to send."""

    status: int
    headers: dict[str, str]
    byte_range: files.ByteRange | None


def file_answer(
    name: str,
    disposition: str,
    size: int,
    validators: tuple[str | None, str | None],
    wanted: Wanted,
    *,
    posted: bool,
    seekable: bool | None = True,
) -> FileAnswer:
    """What a file request gets once its link and preconditions passed: ``seekable`` False sends the whole file with
    ``Accept-Ranges: none``, None (not known: HEAD) the whole file without ``Accept-Ranges``."""
    if not seekable:
        wanted = None
    if isinstance(wanted, files.RangeNotSatisfiable):
        return FileAnswer(416, {"Content-Range": wanted.content_range}, None)
    headers = file_headers(name, disposition, *validators, posted=posted)
    if seekable is not None:
        headers["Accept-Ranges"] = "bytes" if seekable else "none"
    headers["Content-Length"] = str(size if wanted is None else wanted.length)
    if wanted is None:
        return FileAnswer(200, headers, None)
    headers["Content-Range"] = wanted.content_range
    return FileAnswer(206, headers, wanted)


def answer_file(
    method: str,
    headers: Mapping[str, str],
    name: str,
    disposition: str,
    size: int,
    mtime_ns: int | None,
    wanted: Wanted,
    *,
    posted: bool,
    seekable: bool | None = True,
) -> FileAnswer:
    """Everything a file request gets once its link passed: ``conditional_answer`` (304, 412), else ``file_answer``
    (200, 206, 416). Only a 200 or a 206 has a body."""
    answer = conditional_answer(method, headers, size, mtime_ns, posted=posted)
    if answer is not None:
        return answer
    return file_answer(name, disposition, size, validators(size, mtime_ns), wanted, posted=posted, seekable=seekable)


#: A redirect to a storage's own URL: that URL is a bearer link of its own, kept by no cache, leaked by no Referer.
REDIRECT_HEADERS: Final = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


@functools.lru_cache(maxsize=256)
def validators(size: int, mtime_ns: int | None) -> tuple[str | None, str | None]:
    """The file's ETag and Last-Modified (None, None when the storage cannot say when it changed). A file request
    asks three times (its range, its condition, its headers): the answer is kept for the files asked for last."""
    if mtime_ns is None:
        return None, None
    return files.etag_for(size, mtime_ns), files.http_date(mtime_ns / 1e9)


def file_range(headers: Mapping[str, str], size: int, mtime_ns: int | None, *, posted: bool) -> Wanted:
    """``wanted_range`` of a file known by its size and modified time (the validators ``If-Range`` compares)."""
    return wanted_range(headers, size, *validators(size, mtime_ns), posted=posted)


def conditional_answer(
    method: str, headers: Mapping[str, str], size: int, mtime_ns: int | None, *, posted: bool
) -> FileAnswer | None:
    """The 304 (with the validators to keep using) or 412 a file request gets, or None: go on (always for a
    confirmation's POST, answered with the file)."""
    if posted:
        return None
    etag, last_modified = validators(size, mtime_ns)
    mtime = None if mtime_ns is None else mtime_ns // 1_000_000_000
    status = files.conditional_status(method, headers, etag, mtime)
    if status is None:
        return None
    if status != 304 or etag is None or last_modified is None:
        return FileAnswer(status, {}, None)
    return FileAnswer(status, {"ETag": etag, "Last-Modified": last_modified}, None)


def public_base_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be the public URL mailed links start with (None: it can): http or https, a host, no
    user info, query or fragment."""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
    except ValueError:
        host = None
    if host is None or parts.scheme not in ("http", "https") or parts.query or parts.fragment or "@" in parts.netloc:
        return (
            f"base_url must be the site's public URL, http(s)://host[:port][/prefix], such as "
            f"'https://example.com'; got {base_url[:80]!r}"
        )
    return None
