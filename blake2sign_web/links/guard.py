"""What an endpoint checks its signed links with, in any framework: its options, checked once, and each
request's decisions in the order ``links.requests`` gives them.

An adapter builds one ``LinkGuard`` at start-up and, per request, hands it plain values: ``check`` (the link,
its confirmation page, or its refusal), then for a single-use or grouped link ``use`` (a blocking store) or
``ause`` (an asyncio one). A file's request is a ``FileRequest``: the range asked for, a range redirect, the
store's check, then the answer or the rewritten playlist, never before that check. The adapter only reads the
request, does the store and file I/O and writes the response.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, NamedTuple

from ..stores.base import check_store, check_store_kind
from ..stores.revocation import LinkAnswer, StoreUnavailable
from .confirmation import cross_site_post
from .grants import grant_for
from .options import check_expired_status, signer_arguments
from .playlists import passed_query, served
from .requests import (
    INVALID,
    Confirmation,
    Consumption,
    FileAnswer,
    Refusal,
    StoreCall,
    Wanted,
    astore_answer,
    before_store,
    check,
    consumed,
    consumption,
    download_disposition,
    file_range,
    link_kind,
    logged,
    logger,
    needs_store,
    store_answer,
)
from .signer import Bound, URLSigner, VerifiedLink, get_url_signer
from .stored_files import StoredFile, answer, check_range_fallback, range_redirect, redirects_range

NO_TERMS: Final = Consumption()


def file_use(
    link: VerifiedLink | None, method: str, size: int, wanted: Wanted
) -> tuple[VerifiedLink, Consumption] | None:
    """The single-use link a file request uses up (or grouped link it checks), knowing the file (``size``,
    ``wanted``: its range asked for), with what a continuation by the same client may fetch
    (``links.requests.consumption``); None: nothing to ask the store."""
    if link is None or not needs_store(link):
        return None
    return link, consumption(link, method, file_size=size, wanted=wanted)


class LinkGuard(NamedTuple):
    """An endpoint's options of signed links: the signer, the status of an expired or used link, what to
    log when no store consumes single-use links (``no_store``: the option to set), whether a store that
    cannot answer lets the request through (``fails_open``; ``option``: how the framework spells it), the
    ``store`` that uses single-use links up (Starlette's ``RedisStore``, Django's cache alias; None: none)
    and ``client``: who is asking (a function of the request), so that a download may continue."""

    signer: URLSigner
    expired_status: int
    no_store: str
    fails_open: bool
    option: str
    store: Any
    client: Callable[[Any], str]

    @classmethod
    def for_store(
        cls, signer: URLSigner, expired_status: object, store: object, client: Callable[[Any], str], framework: str
    ) -> LinkGuard:
        """The guard of Starlette's or Flask's views (``framework``: ``"starlette"``, ``"flask"``): its arguments
        checked at start-up (ValueError, TypeError naming the argument); ``store``: the ``single_use`` argument, None
        or what has ``consume_link`` (and ``fails_open``), of the kind the framework calls (asyncio for Starlette)."""
        status = check_expired_status(expired_status)
        check_store(store, "single_use", "consume_link")
        if store is not None:
            fix = f"blake2sign_web.{framework}.revocation.RedisStore(url)"
            asynchronous, views = framework == "starlette", f"a {framework.title()} signed-link view"
            check_store_kind(store, asynchronous, "single_use", views, fix, "consume_link")
        fails_open = store is not None and bool(getattr(store, "fails_open", False))
        missing = "no single_use store configured for this endpoint"
        return cls(signer, status, missing, fails_open, "on_unavailable", store, client)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], secret: str | bytes, fallbacks: object) -> LinkGuard:
        """Django's guard, from ``SIGNED_URLS`` as ``links.options.from_settings`` checked it, and its signer of
        SECRET_KEY and SECRET_KEY_FALLBACKS (``links.options.signer_arguments``; ValueError or TypeError)."""
        signer = get_url_signer(secret, **signer_arguments(settings, fallbacks))
        fails_open = settings["SINGLE_USE_UNAVAILABLE"] == "open"
        status, missing, option = (
            settings["EXPIRED_STATUS"],
            "SINGLE_USE_CACHE is not configured",
            "SINGLE_USE_UNAVAILABLE",
        )
        return cls(
            signer, status, missing, fails_open, option, settings["SINGLE_USE_CACHE"], settings["SINGLE_USE_CLIENT"]
        )

    def check(
        self,
        url: str | None,
        bound: Bound | None,
        path: str,
        method: str,
        serves_file: bool = False,
        grant: str | None = None,
    ) -> VerifiedLink | Confirmation | Refusal:
        """``links.requests.check`` with this guard's signer and expired status; by the grant cookie ``grant``
        (``grant``) instead of the URL's signature when there is one."""
        return check(self.signer, url, bound, path, method, self.expired_status, serves_file, grant)

    def grant(self, url: str | None, method: str, cookies: Callable[[], Mapping[str, str]]) -> str | None:
        """The grant cookie to check the request by (``links.grants.grant_for``): None when its URL decides.
        ``cookies``: the request's, read only if needed. A response to a request by cookie is ``private``."""
        return grant_for(self.signer, url, method, cookies)

    def call(
        self, link: VerifiedLink, path: str, store: object, headers: Mapping[str, str] | None, terms: Consumption
    ) -> StoreCall | Refusal | None:
        """``links.requests.before_store`` with this guard's options (``store``: None when there is none). With the
        request's ``headers`` (a framework with no CSRF check of its own), a confirmation's POST that the browser
        says came from another site's page is refused (``confirmation.cross_site_post``)."""
        missing = self.no_store if store is None else None
        cross_site = headers is not None and link.consume_on == "post" and cross_site_post(headers)
        return before_store(link, path=path, missing_store=missing, cross_site=cross_site, terms=terms)

    def use(
        self,
        link: VerifiedLink,
        path: str,
        consume: Callable[..., bool] | None,
        request: object,
        *,
        headers: Mapping[str, str] | None = None,
        terms: Consumption = NO_TERMS,
        check: Callable[..., LinkAnswer] | None = None,
    ) -> Refusal | None:
        """Use up a single-use link with a blocking store's ``consume`` (``client(request)``: who asks, read only if
        the store is asked), or check a grouped one with its ``check`` (``check_link``): None when this request may
        have it, else the refusal (403, 503, the expired status)."""
        call = self.call(link, path, consume, headers, terms)
        if type(call) is not StoreCall or consume is None:
            return call  # type: ignore[return-value]
        ask: Callable[..., bool | LinkAnswer] | None = consume if call.group is None else check
        if ask is None:
            return self._no_check(path)
        return self._consumed(store_answer(ask, call, self.client(request)), path, call)

    def _consumed(self, answer: bool | LinkAnswer | StoreUnavailable, path: str, call: StoreCall) -> Refusal | None:
        return consumed(
            answer,
            path=path,
            fails_open=self.fails_open,
            expired_status=self.expired_status,
            option=self.option,
            kind=link_kind(call.nonce),
        )

    async def ause(
        self,
        link: VerifiedLink,
        path: str,
        request: object,
        *,
        headers: Mapping[str, str] | None = None,
        terms: Consumption = NO_TERMS,
    ) -> Refusal | None:
        """``use`` with an asynchronous store, this guard's own (its ``consume_link``, ``check_link``)."""
        consume: Callable[..., Awaitable[bool]] | None = None if self.store is None else self.store.consume_link
        call = self.call(link, path, consume, headers, terms)
        if type(call) is not StoreCall or consume is None:
            return call  # type: ignore[return-value]
        ask = consume if call.group is None else getattr(self.store, "check_link", None)
        if ask is None:
            return self._no_check(path)
        return self._consumed(await astore_answer(ask, call, self.client(request)), path, call)

    def _no_check(self, path: str) -> Refusal:
        """A grouped link on a store that cannot check groups (a store of one's own with ``consume_link`` only)."""
        logger.error("refused grouped URL for %r: the single-use store has no check_link", logged(path))
        return Refusal(403, INVALID)


class FileRequest:
    """One request for a stored file by a link, once the link passed, decided in order with what nothing has
    read yet: the range asked for (``wanted``), a Range sent to the storage's URL (``range_redirect``), the
    single-use or grouped link checked in the store (``use``), then what the request gets (``answer``, or for a
    playlist rewritten by a folder link, ``rewritten``). Neither answer is given before ``use``: a revoked group,
    a missing store or a store that is down refuses every file alike, a playlist included."""

    __slots__ = ("decided", "headers", "link", "method", "name", "offloaded", "playlist", "posted", "stored", "wanted")

    def __init__(
        self,
        method: str,
        headers: Mapping[str, str],
        name: str,
        stored: StoredFile,
        link: VerifiedLink | None,
        *,
        offloaded: bool = False,
        playlist_signer: URLSigner | None = None,
        query_string: str = "",
    ) -> None:
        self.method, self.headers, self.name, self.stored, self.link = method, headers, name, stored, link
        #: Whether the front server sends the bytes (and handles Range itself).
        self.offloaded = offloaded
        #: The query a playlist served by a folder link passes on to its URIs (``playlists.passed_query``, with the
        #: view's signer, None when it does not sign playlists), or None: the file as it is.
        self.playlist = None
        if playlist_signer is not None:
            self.playlist = passed_query(name, link, query_string, playlist_signer, True)
        #: The confirmation's POST of a ``consume_on="post"`` link: the whole file, once, never cached.
        self.posted = method == "POST" and link is not None and link.consume_on == "post"
        #: What is asked for, as if the file could seek (decided from metadata: nothing is read yet); a rewritten
        #: playlist is sent whole.
        self.wanted: Wanted = None
        if self.playlist is None:
            self.wanted = file_range(headers, stored.size, stored.mtime_ns, posted=self.posted)
        #: Whether ``use`` said what the store is to check: only then is the request answered.
        self.decided = False

    def range_redirect(
        self, url_of: Callable[[], object], path: str, storage: object, fallback: str
    ) -> dict[str, str] | None:
        """The headers of a 302 to the storage's URL for a Range it would download the whole object to serve
        (``stored_files.redirects_range``, ``range_redirect``), or None: serve it here (``fallback="seek"``; a
        playlist rewritten here, whose storage copy carries no signature)."""
        # A grouped link is checked after this: never hand out the storage's URL (a bearer link of its own) first.
        checked = self.link is not None and needs_store(self.link)
        if self.playlist is not None:
            return None
        if not redirects_range(self.stored, self.method, self.wanted, single_use=checked, offloaded=self.offloaded):
            return None
        if check_range_fallback(fallback) == "seek":
            return None
        return range_redirect(url_of, path, self.name, storage)

    def use(self) -> tuple[VerifiedLink, Consumption] | None:
        """The range as it can be sent (``StoredFile.sendable_range``), then the single-use link to use up or the
        grouped link to check, with its terms (``file_use``), or None: nothing to ask the store. The adapter asks
        it (``LinkGuard.use``, ``ause``) before it answers."""
        self.wanted = self.stored.sendable_range(self.method, self.wanted)
        self.decided = True
        return file_use(self.link, self.method, self.stored.size, self.wanted)

    def answer(self, as_attachment: bool, offload: tuple[str | None, bool] = (None, False)) -> FileAnswer:
        """``stored_files.answer``, named by the link's signed filename and disposition where it has them."""
        self._check_decided()
        disposition = download_disposition(self.name, as_attachment, self.link)
        return answer(
            self.method,
            self.headers,
            self.name,
            disposition,
            self.stored,
            self.wanted,
            posted=self.posted,
            offload=offload,
        )

    def rewritten(self, origin: str, as_attachment: bool) -> tuple[FileAnswer, bytes] | Refusal:
        """The playlist's answer and body (``playlists.served``: whole, rewritten for GET, not for HEAD; refused
        over ``playlists.MAX_SERVED_SIZE``); the file is closed. It may read the file: an asynchronous view runs
        it in a thread."""
        self._check_decided()
        if self.playlist is None or self.link is None:
            raise RuntimeError("FileRequest.rewritten() is for a playlist served by a folder link (see .playlist)")
        return served(self.stored, self.playlist, self.link, origin, self.name, as_attachment, self.method)

    def _check_decided(self) -> None:
        if not self.decided:
            raise RuntimeError("FileRequest.use() comes first: a link's store checks decide before any answer")
