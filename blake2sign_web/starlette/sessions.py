"""A drop-in for ``starlette.middleware.sessions.SessionMiddleware`` on the cached core signer.

Same arguments, same ``request.session``, same Set-Cookie attributes as Starlette's. Bad cookies give an empty
session and a warning, never an exception; arguments that cannot work fail at construction (docs/options.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable
from functools import partial
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final, Literal, SupportsIndex

import starlette
from starlette.datastructures import Secret
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import dictionaries
from ..sessions.chunks import MAX_CHUNKS
from ..sessions.cookies import BROWSER_COOKIE_LIMIT as BROWSER_COOKIE_LIMIT  # importable from here, as before
from ..sessions.cookies import OversizePolicy
from ..sessions.expiry import IDLE_REFRESH_FRACTION as IDLE_REFRESH_FRACTION  # re-exported: importable from here
from ..sessions.loading import LazySession as LazySession  # importable from here, as before
from ..sessions.loading import SessionLoader
from ..sessions.options import STARLETTE, problems, raise_first, secret_problems
from ..sessions.request import (
    VARY_COOKIE,
    SessionSetup,
    SessionWriter,
    chunked_token,
    read_with_revocation,
    with_vary_cookie,
)
from ..sessions.revocable import aask, checked, revocation_check, writing
from ..sessions.state import ReadTrackingSession as ReadTrackingSession  # importable from here, as before
from ..sessions.state import Session as Session
from ..sessions.token import RefusalWords
from ..stores import base as stores
from ..stores.plans import adrive
from ..stores.revocation import StoreUnavailable
from .session_migration import StarletteCookieReader, itsdangerous_shape

if TYPE_CHECKING:
    from ..signing.serializer import SerializerSigner
    from .revocation import RedisStore, SessionToken

logger = logging.getLogger("blake2sign_web.starlette")
revocation_logger = logging.getLogger("blake2sign_web.revocation")

#: Without a dictionary: cookies travel on every request, so compress from a lower size than the core's default.
COMPRESSION_THRESHOLD: Final = 128


class SessionCookieTooLarge(ValueError):
    """The session would make a cookie over the browser limit, which browsers silently drop."""


#: Starlette 1.0 made ``request.session`` call ``mark_accessed``; before it, reads have to.
STARLETTE_MARKS_ACCESS: Final = int(starlette.__version__.split(".")[0]) >= 1
SESSION_CLASS: Final[type[Session]] = Session if STARLETTE_MARKS_ACCESS else ReadTrackingSession


class SessionMiddleware:
    """Signed-cookie sessions for Starlette and FastAPI; replaces Starlette's by changing one import.

    Starlette's arguments and defaults; the keyword-only extras are described in docs/options.md.
    """

    def __init__(
        self,
        app: ASGIApp,
        secret_key: str | Secret,
        session_cookie: str = "session",
        max_age: int | None = 14 * 24 * 60 * 60,  # 14 days, in seconds
        path: str = "/",
        same_site: Literal["lax", "strict", "none"] = "lax",
        https_only: bool = False,
        domain: str | None = None,
        partitioned: bool = False,
        *,
        fallback_secrets: Iterable[str | Secret] = (),
        hasher: Literal["blake2b", "blake2s", "blake3", "hmac-sha256"] = "blake2b",
        compression: Literal["zstd"] | None = "zstd",
        dictionary: int | None = dictionaries.SESSION,
        compression_threshold: int = COMPRESSION_THRESHOLD,
        tag_size: Literal[16, 32] = 16,
        format: Literal[1, 2] = 2,
        on_oversize: Literal["raise", "log"] = "raise",
        migrate_starlette_cookies: bool = False,
        revocation: RedisStore | None = None,
        user_key: str = "user_id",
        server_timing: bool = False,
        idle_timeout: int | None = None,
        absolute_timeout: int | None = None,
        typed: bool = False,
        encrypt: bool = False,
        decrypt: bool = False,
        compress_encrypted: bool = False,
        chunked: bool = False,
        max_chunks: int = MAX_CHUNKS,
    ) -> None:
        if isinstance(fallback_secrets, (str, bytes, Secret)):
            raise TypeError("SessionMiddleware fallback_secrets must be a list of secrets, not a single secret")
        secret, *fallbacks = [str(s) if isinstance(s, Secret) else s for s in (secret_key, *fallback_secrets)]
        stores.check_store(revocation, "SessionMiddleware revocation", "is_revoked")
        if revocation is not None:  # a blocking store's answers are no awaitables: a 500 on each revocable session
            fix = "blake2sign_web.starlette.revocation.RedisStore(url, key_prefix=...)"
            stores.check_store_kind(revocation, True, "SessionMiddleware revocation", "SessionMiddleware", fix)
        # The arguments by the core's option names: every rule, and those between them, are the core's.
        values = {
            "typed": typed, "encrypt": encrypt, "decrypt": decrypt, "compress_encrypted": compress_encrypted,
            "hasher": hasher, "compression": compression, "dictionary": dictionary,
            "compression_threshold": compression_threshold, "tag_size": tag_size, "format": format,
            "cookie_name": session_cookie, "path": path, "domain": domain, "same_site": same_site,
            "secure": https_only, "partitioned": partitioned, "max_age": max_age, "on_oversize": on_oversize,
            "chunked": chunked, "max_chunks": max_chunks, "idle_timeout": idle_timeout,
            "absolute_timeout": absolute_timeout, "server_timing": server_timing, "revocation": revocation,
            "revocation_key_prefix": getattr(revocation, "key_prefix", ""), "migrate": migrate_starlette_cookies,
        }  # fmt: skip
        raise_first(secret_problems(secret, fallbacks, STARLETTE) + problems(values, STARLETTE), "SessionMiddleware ")
        # The cookie name is part of the purpose: a cookie only verifies under the name it was issued for.
        setup = SessionSetup(secret, fallbacks, values, purpose=f"starlette.sessions:{session_cookie}")
        self.app = app
        #: request.session's class: SESSION_CLASS, knowing this middleware's lifetimes (get_expiry_age).
        self._session_class = setup.session_class(SESSION_CLASS, __module__=__name__, __reduce_ex__=_reduce_as_base)
        self.session_cookie, self.max_age, self.path, self.on_oversize = session_cookie, max_age, path, on_oversize
        self.cookie = setup.cookie(
            OversizePolicy(
                session_cookie,
                on_oversize == "raise",
                SessionCookieTooLarge,
                f", over the browser limit of {BROWSER_COOKIE_LIMIT} bytes",
                "store less in request.session (keep an id and load the rest server-side).",
                "The response keeps the client's previous session cookie.",
                logger,
            )
        )
        # Bound once: the per-request paths call them without looking through self.cookie.
        self._find_cookie, self._read_cookie, self._token_in = self.cookie.find, self.cookie.read, self.cookie.token_in
        self._cookie_text = self.cookie.text
        self._writer, self._unbounded = setup.signers.writer, setup.signers.unbounded
        self._resign_unread, self._lifetime = setup.resign_unread, setup.lifetime
        self._session_writer = SessionWriter(
            setup,
            self.cookie,
            typed_name="SessionMiddleware(..., typed=True)",
            logger=logger,
            ended="Session cookie %r deleted: the session has ended (set_expiry() or absolute_timeout)",
        )
        #: The short path's response (the usual write in one call, the rest as _finish's).
        self._usual_headers = self._session_writer.usual_headers
        self.revocation, self.user_key = revocation, user_key
        #: Add ``Server-Timing: b2sw-load;dur=..., b2sw-save;dur=...`` (milliseconds) to every response.
        self.server_timing = server_timing
        reader = setup.signers.reader
        self.legacy = StarletteCookieReader(secret, fallbacks, reader.max_age) if migrate_starlette_cookies else None
        self.idle_timeout, self.absolute_timeout = idle_timeout, absolute_timeout
        #: A session too large for one cookie is split into name, name.1, ... (blake2sign_web.sessions.chunks).
        self.chunked, self.max_chunks = chunked, max_chunks
        #: Revocation, Server-Timing or chunking: __call__ takes the slower path that handles them.
        self._extras = setup.extras
        self._reader = setup.token_reader(None if self.legacy is None else self.legacy.read_dated, itsdangerous_shape)
        #: The session of a cookie: lazy on Starlette 1.0 and later, whose request.session marks it accessed
        #: (before it, code that reads the session without marking it could serialize the still-empty dict).
        words = RefusalWords(
            f"expired (max_age={max_age!r})",
            f"past absolute_timeout={absolute_timeout!r}",
            "it has the shape of a cookie of Starlette's own SessionMiddleware (itsdangerous): is that "
            "middleware also on this app, under the same cookie name? While migrating from it, pass "
            "migrate_starlette_cookies=True",
            "not a valid Starlette session cookie",
        )
        self._loader = SessionLoader(
            setup,
            self.cookie,
            self._reader,
            self._session_class,
            lazy=STARLETTE_MARKS_ACCESS,
            logger=logger,
            words=words,
        )
        self._session_for, self._load = self._loader.for_cookie, self._loader.load
        #: Every cookie is read lazily (no cookie of Starlette's own middleware to re-issue at once).
        self._lazy_always = STARLETTE_MARKS_ACCESS and self.legacy is None

    @property
    def signer(self) -> SerializerSigner:
        """The signer that verifies this middleware's cookies (its loader's: setting it replaces it there)."""
        return self._loader.signer

    @signer.setter
    def signer(self, signer: SerializerSigner) -> None:
        self._loader.signer = signer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self._extras:
            await self._call_with_extras(scope, receive, send)
            return

        # The common case, kept short: it runs on every request, most of which never use the session.
        cookie: str | bytes | None = None
        if self._lazy_always:
            # Only the Cookie header is found now; the session cookie is cut out of it if the session is used.
            for name, raw in scope["headers"]:
                if name == b"cookie":
                    if cookie is not None:  # several Cookie headers (HTTP/2 may split them): find ours now
                        cookie = self._read_cookie(scope["headers"])
                        break
                    cookie = raw
        else:
            cookie = self._find_cookie(scope["headers"])
        if cookie is None:
            session = self._session_class()
        elif self._lazy_always:  # verified and decoded when first used
            session = LazySession()
            session.source = (cookie, self._loader)
        else:
            session = self._session_for(self._cookie_text(cookie))
        scope["session"] = session

        def send_wrapper(message: Message) -> Awaitable[None]:
            # Not a coroutine of its own: the server's send is awaited directly, one frame less per message.
            if message["type"] == "http.response.start":
                session = scope["session"]
                if session.modified or self._resign_unread:
                    if self._resign_unread and type(session) is LazySession:
                        session.load()  # fallback secrets: a session verified by one is re-signed, even unused
                    # The raw list, as MutableHeaders(scope=message) would make it, without its per-call cost.
                    headers = self._usual_headers(session, message.get("headers", ()))
                    if headers is not None:
                        message["headers"] = headers
                elif session.accessed:  # read, unchanged: only Vary (what _finish would add)
                    headers = message.get("headers", ())
                    for name, _ in headers:
                        if name == b"vary":
                            message["headers"] = with_vary_cookie(headers)
                            break
                    else:  # the usual case, without a call: no Vary yet (with_vary_cookie's first branch)
                        message["headers"] = [*headers, VARY_COOKIE]
            return send(message)

        await self.app(scope, receive, send_wrapper)

    async def _call_with_extras(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``__call__`` with revocation (a Redis round trip per verified cookie), Server-Timing or chunking."""
        timing = self.server_timing
        started = perf_counter()
        sent_chunks: list[str] = []
        #: An incomplete set of chunks: the cookies to delete unless the response writes the session.
        incomplete: list[str] = []
        if self.chunked:
            cookie = chunked_token(self.cookie, scope["headers"], sent_chunks, incomplete, self._log_incomplete)
        else:
            cookie = self._read_cookie(scope["headers"])
        token: SessionToken | None = None
        if self.revocation is None:
            session = self._session_for(cookie)
        else:
            session, token = await self._load_revocable(self.revocation, cookie)
            from .revocation import SCOPE_KEY

            scope[SCOPE_KEY] = token
        scope["session"] = session
        load_ms = (perf_counter() - started) * 1000

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                session: Session = scope["session"]
                if token is not None:
                    plan = writing(session, token, self.user_key, self.session_cookie, token.lifetime)
                    await adrive(plan, partial(aask, token.store))
                self._finish(session, message, token, load_ms if timing else None, sent_chunks, incomplete)
            await send(message)

        await self.app(scope, receive, send_wrapper)

    def _finish(
        self,
        session: Session,
        message: Message,
        token: SessionToken | None,
        load_ms: float | None = None,
        sent_chunks: list[str] | None = None,
        incomplete: list[str] | None = None,
    ) -> None:
        """Add to the response's start message what the session needs: Vary, Set-Cookie, Server-Timing."""
        if self._resign_unread and type(session) is LazySession:
            # Fallback secrets: a session verified by one is re-signed, whether or not it was used.
            session.load()
        # The raw list, as MutableHeaders(scope=message) would make it, without its per-call cost.
        headers = self._session_writer.response_headers(
            session,
            message.get("headers", ()),
            None if token is None else token.session_id,
            load_ms,
            sent_chunks or (),
            incomplete or (),
        )
        if headers is not None:
            message["headers"] = headers

    def _log_incomplete(self, error: Exception) -> None:
        logger.warning("Rejected session cookie %r: %s", self.session_cookie, error)

    async def _load_revocable(self, store: RedisStore, cookie: str | None) -> tuple[Session, SessionToken]:
        """The session, checked (``sessions.revocable``), and what revocation needs to know of it."""
        from .revocation import SessionToken

        read = None if cookie is None else self._reader.read(cookie)
        session = self._session_class() if read is None else self._loader.session(read, cookie)
        if (check := revocation_check(read, cookie, session)) is None:
            token = self._new_token(store)
            return read_with_revocation(session, token, False), token
        user = dict.get(session, self.user_key)
        fresh = SessionToken(store, check.session_id, True, self._lifetime, self.user_key, user, check.generation or "")
        try:
            revoked: bool | StoreUnavailable = await store.is_revoked(
                check.session_id, user, check.issued_at, check.generation
            )
        except StoreUnavailable as error:
            revoked = error
        new = partial(self._new_token, store)
        return checked(
            session,
            fresh,
            revoked,
            fails_open=store.fails_open,
            setting="on_unavailable",
            cookie_name=self.session_cookie,
            unchecked=new,
        )

    def _new_token(self, store: RedisStore) -> SessionToken:
        """Revocation's state for a session no valid cookie came with: a new session's id."""
        from .revocation import SessionToken, new_session_id

        return SessionToken(store, new_session_id(), False, self._lifetime, self.user_key)


def _reduce_as_base(self: Session, protocol: SupportsIndex) -> tuple[Any, ...]:
    """Pickle a middleware's session class as the module's (``SESSION_CLASS``), which pickle can find by name."""
    return (SESSION_CLASS, (dict(self),), vars(self) or None)
