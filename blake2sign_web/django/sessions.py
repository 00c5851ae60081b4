"""Signed-cookie sessions on keyed BLAKE: ``SESSION_ENGINE = "blake2sign_web.django.sessions"``.

As with Django's ``signed_cookies`` backend, the session key *is* the data; this module translates Django's
``SessionBase`` contract into calls of the core (docs/django.md). Importing it builds the configuration, so a
bad one raises ImproperlyConfigured at start-up.
"""

from __future__ import annotations

import logging
import weakref
from datetime import datetime
from functools import partial
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.utils.functional import cached_property
from django.utils.module_loading import import_string

from ..exceptions import BadSignature
from ..sessions import options
from ..sessions import revocable as revocable_session
from ..sessions.cookies import token_cookies
from ..sessions.expiry import IDLE_REFRESH_FRACTION as IDLE_REFRESH_FRACTION  # re-exported: importable from here
from ..sessions.expiry import (
    SessionEnd,
    data_written,
    expiry_date,
    now_datetime,
    stored_end,
)
from ..sessions.expiry import check_expiry as _check_expiry
from ..sessions.request import signed_token
from ..sessions.revocation import SessionState
from ..sessions.settings import SessionConfig
from ..sessions.token import BAD, Presented, ReadToken, RefusalWords, refusal_reason
from ..stores.revocation import StoreUnavailable
from . import revocation
from .conf import DJANGO_SIGNED_COOKIES_SALT as DJANGO_SIGNED_COOKIES_SALT  # their home was here: still importable
from .conf import SETTING, session_config
from .conf import STARTED as STARTED
from .conf import SessionTooLarge as SessionTooLarge
from .current import CURRENT_SESSION

__all__ = ["SessionStore", "SessionTooLarge"]

#: Django's logger for session cookies that fail verification (its convention, its name).
suspicious_logger: Final = logging.getLogger("django.security.SuspiciousSession")
#: Why a cookie was refused, in Django's words (``refusal_reason``): an expiry says when, no full stop.
DJANGO_WORDS: Final = RefusalWords(
    "expired", "timed out", "", "not a session cookie of Django's engine", "session is not a JSON object", True
)
logger: Final = logging.getLogger(__name__)
#: Where django.contrib.auth keeps the user's id in the session (its SESSION_KEY).
AUTH_USER_ID: Final = "_auth_user_id"


class SessionStore(SessionBase):
    """Django's session API over a signed cookie: the session key is the token, there is no store."""

    #: True after save() met an oversized session under ``"OVERSIZE": "log"``: no new cookie.
    oversized = False
    #: The client's cookie when it verified: what ``"OVERSIZE": "log"`` leaves in place.
    _verified_cookie: str | None = None
    #: With revocation, once read: the session as revocation sees it (the next token's id, the client's session
    #: to end, the user's generation, read as empty while the cache was down); the rules are the core's.
    _state: SessionState | None = None
    #: True after save() left the client's cookie as it was (a session read while the cache was down).
    unsaved = False
    #: When the session began (ABSOLUTE_TIMEOUT counts from it): read from the cookie, or set by the first save.
    _started_at: int | None = None
    #: With CHUNKED, after save(): the cookies ``(name, value)`` that carry the token, in order (one when it
    #: fits); what this project's middleware writes. None without CHUNKED.
    chunks: list[tuple[str, str]] | None = None
    # SessionBase's lazily loaded data (absent until loaded, so only annotated here).
    _session_cache: dict[str, Any]

    def __init__(self, session_key: str | None = None) -> None:
        # SessionBase.__init__ (Django 4.2 to 6.1) without resolving SESSION_SERIALIZER (``serializer``, on use),
        # and the key kept as its setter keeps it (valid, else None) without its two calls for a valid one.
        self._SessionBase__session_key = (
            session_key if session_key and (len(session_key) >= 8 or self._validate_session_key(session_key)) else None
        )
        self.accessed = False
        self.modified = False
        if session_config().revocation_cache is not None:
            # One per request: log_out_everywhere() finds the session to keep here.
            CURRENT_SESSION.set(weakref.ref(self))

    def _validate_session_key(self, key: str | None) -> bool:
        """Django's rule (at least 8 characters), with the warning any bad cookie gets (Django's is silent)."""
        if key and len(key) < 8:
            suspicious_logger.warning("Session cookie rejected: %d characters, too short to be a session.", len(key))
            return False
        return bool(key)

    def get_session_cookie_age(self) -> int:
        """SESSION_COOKIE_AGE, from the configuration resolved once (settings changes reset it)."""
        return session_config().cookie_age

    @cached_property
    def serializer(self) -> Any:
        """SessionBase's ``serializer``: SESSION_SERIALIZER, for ``encode()``, ``decode()`` and migrated cookies."""
        return import_string(settings.SESSION_SERIALIZER)

    def _get_session(self, no_load: bool = False) -> dict[str, Any]:
        """SessionBase's lazy load, without raising an AttributeError on the first access of every request."""
        self.accessed = True
        cache: dict[str, Any] | None = getattr(self, "_session_cache", None)  # no exception made for a miss
        if cache is None:
            cache = self._session_cache = {} if no_load or self.session_key is None else self.load()
        return cache

    _session = property(_get_session)

    def load(self) -> dict[str, Any]:
        """Verify and read the cookie; a bad one gives an empty session and a warning, never an error."""
        config = session_config()
        token = self.session_key
        if not token:  # SessionStore().load(), as Django's middleware tests call it
            return {}
        read = self._read(config, token)
        if read.data is None:
            error = read.error or BadSignature(refusal_reason(read, DJANGO_WORDS))
            suspicious_logger.warning(
                "Session cookie rejected: %s.", refusal_reason(ReadToken(BAD, error=error), DJANGO_WORDS)
            )
            # Forget the key: the middleware then deletes the bad cookie.
            self._session_key = None
            return {}
        if config.revocation_cache is not None:
            kept, self._state, ended = revocable_session.checked_read(
                read,
                token,
                read.data,
                AUTH_USER_ID,
                partial(_is_revoked, config),
                fails_open=config.revocation_fails_open,
                setting="REVOCATION_UNAVAILABLE",
                cookie_name=config.cookie_name,
            )
            if ended:  # logout, log out everywhere: the middleware then deletes the cookie
                self._session_key = None
            if not kept:
                return {}
        self._started_at = read.started
        if read.token is None:
            self.modified = True  # a cookie of Django's signed_cookies engine: re-issue it in this format
        else:
            self._verified_cookie = token
            if read.reissue:
                # A fallback key, another form than this engine writes, or IDLE_TIMEOUT's refresh: issued again.
                self.modified = True
        return read.data

    def _read(self, config: SessionConfig, token: str) -> ReadToken:
        """The client's cookie read (with ACCEPT_DJANGO_SIGNED_COOKIES, Django's engine's cookies too)."""
        own_age = type(self).get_session_cookie_age is SessionStore.get_session_cookie_age  # Django's hook kept
        return config.reader.read(token, default_age=config.cookie_age if own_age else self.get_session_cookie_age())

    async def aload(self) -> dict[str, Any]:
        if session_config().revocation_cache is not None:  # a cache round trip: not on the event loop
            return await sync_to_async(self.load)()
        return self.load()

    def _revocation(self) -> SessionState:
        """The session as revocation sees it: as load() read it, else from the client's verified cookie."""
        state = self._state
        if state is None:
            token = self._session_key
            read = self._read(session_config(), token) if token else None
            state = self._state = revocable_session.client_state(read, token)
        return state

    def keep_through_log_out(self, user_id: str, generation: str) -> None:
        """``log_out_everywhere(user)`` keeps this session (``revocation.current_session_fate``, which read and
        checked it while the new generation did not exist yet): its next token gets a new id and ``generation``."""
        owner = self._session.get(AUTH_USER_ID)
        self._revocation().keep(user_id, generation)
        if owner is not None:
            self.modified = True  # re-signed at the response with the new generation

    def revoke(self, *, raise_errors: bool = True) -> None:
        """End the client's session on every server (revocation on; the next gets a new id); ``raise_errors=False``
        logs a cache failure instead of raising StoreUnavailable."""
        config = session_config()
        if config.revocation_cache is None:
            return
        client_session = self._revocation().end()
        if client_session is None:
            return
        try:
            cache = revocation.get_cache(config.revocation_cache)
            revocation.revoke_session(
                cache, client_session, config.cookie_age, config.revocation_key_prefix, config.revocation_clock_skew
            )
        except StoreUnavailable as error:
            if raise_errors:
                raise
            revocation.logger.error("Session could not be revoked: %s.", error)

    def create(self) -> None:
        """No store to create a key in: mark the session so the middleware sends a cookie."""
        self.modified = True

    async def acreate(self) -> None:
        self.create()

    def set_expiry(self, value: Any) -> None:
        """Django's set_expiry, refusing at once an expiry the token cannot carry."""
        check_expiry(value)
        super().set_expiry(value)

    async def aset_expiry(self, value: Any) -> None:
        check_expiry(value)
        await super().aset_expiry(value)

    def save(self, must_create: bool = False) -> None:
        """Sign the session into its key; SessionTooLarge (or a logged error) if the browser would drop it. One read
        as empty while the revocation cache was down is not saved: its cookie is kept (docs/security.md)."""
        config = session_config()
        self.oversized = False
        self.unsaved = False
        data, expires_in, started = data_written(  # reads the session: loads (and checks) it if nothing has
            self._session,
            self._started_at,
            absolute_timeout=config.absolute_timeout,
            started_key=STARTED,
            check=check_expiry,
        )
        state = self._state
        if state is not None and state.unchecked:
            revocation.logger.warning(
                "Session not saved: it was read as empty because the revocation cache was down; the cookie is kept."
            )
            self.unsaved = True
            return
        self._started_at = started
        session_id = None
        if config.revocation_cache is not None:
            state, alias, prefix = self._revocation(), config.revocation_cache, config.revocation_key_prefix
            data = state.signed_data(
                data,
                data.get(AUTH_USER_ID),
                lambda user: revocation.user_generation(revocation.get_cache(alias), user, prefix),
            )
            session_id = state.session_id
        policy = config.oversize
        token = signed_token(
            config.writer, data, expires_in=expires_in, session_id=session_id, typed_name=TYPED_NAME, oversize=policy
        )
        if token is not None:
            cookies = token_cookies(
                policy,
                token,
                attributes_length=config.cookie_overhead - 1,  # the overhead counts the "="
                max_chunks=config.max_chunks,
                max_chunks_name=MAX_CHUNKS_SETTING,
                chunks_fix=CHUNKS_FIX,
            )
        if token is None or cookies is None:
            self._keep_client_cookie(config)
            return
        if config.max_chunks:
            self.chunks = cookies
        self._session_key = token
        self.modified = True

    async def asave(self, must_create: bool = False) -> None:
        if session_config().revocation_cache is not None and self.session_key and not hasattr(self, "_session_cache"):
            self._session_cache = await self.aload()  # save() reads the data first: not on the event loop
        self.save(must_create=must_create)

    def get_expiry_age(self, **kwargs: Any) -> int:
        """Django's, capped by IDLE_TIMEOUT and what is left of ABSOLUTE_TIMEOUT: the cookie's Max-Age."""
        return self._end(**kwargs).age or 0  # never None: SESSION_COOKIE_AGE is an int

    def get_expiry_date(self, **kwargs: Any) -> datetime:
        """Django's, with the same caps as ``get_expiry_age``: when the server refuses the session if saved now."""
        modification = kwargs.get("modification") or now_datetime(settings.USE_TZ)  # Django's timezone.now()
        value = kwargs["expiry"] if "expiry" in kwargs else self.get("_session_expiry")
        return expiry_date(self._end(modification=modification, expiry=value), modification, value)

    def get_expire_at_browser_close(self, **kwargs: Any) -> bool:
        """Django's: whether the cookie has no Max-Age (``set_expiry(0)``, or SESSION_EXPIRE_AT_BROWSER_CLOSE)."""
        return self._end(**kwargs).browser_session

    async def aget_expiry_age(self, **kwargs: Any) -> int:
        if "expiry" not in kwargs:
            kwargs["expiry"] = await self.aget("_session_expiry")  # loads it, as Django's does
        return self.get_expiry_age(**kwargs)

    async def aget_expiry_date(self, **kwargs: Any) -> datetime:
        if "expiry" not in kwargs:
            kwargs["expiry"] = await self.aget("_session_expiry")
        return self.get_expiry_date(**kwargs)

    async def aget_expire_at_browser_close(self) -> bool:
        return self.get_expire_at_browser_close(expiry=await self.aget("_session_expiry"))

    def _end(self, **kwargs: Any) -> SessionEnd:
        """When this session ends if saved now, and whether its cookie is a browser-close one (``..expiry``)."""
        config = session_config()
        modification = kwargs.get("modification")
        now: float | None = None if modification is None else modification.timestamp()  # None: the core's clock
        return stored_end(
            now,
            kwargs["expiry"] if "expiry" in kwargs else self.get("_session_expiry"),
            default_age=self.get_session_cookie_age(),
            browser_session_default=settings.SESSION_EXPIRE_AT_BROWSER_CLOSE,
            idle_timeout=config.idle_timeout,
            absolute_timeout=config.absolute_timeout,
            started=self._started_at,
        )

    def _keep_client_cookie(self, config: SessionConfig) -> None:
        """Too large, and logged (``"OVERSIZE": "log"``): no new cookie, the client's is left as it was."""
        self.oversized = True
        self.chunks = None
        if self._verified_cookie is not None:
            self._session_key = self._verified_cookie
        else:
            # Django's own middleware writes *some* value: an empty session, not the string "None".
            self._session_key = config.signer.dumps({})

    def exists(self, session_key: str | None = None) -> bool:
        """A key that is the data never collides with another session."""
        return False

    async def aexists(self, session_key: str | None = None) -> bool:
        return False

    def delete(self, session_key: str | None = None) -> None:
        """Empty the session (first: a cache failure, raised, still deletes the cookie); with revocation, end it."""
        if session_config().revocation_cache is not None:
            self._revocation()  # read before the key is gone; revoke() below ends it (SessionState.end)
        self._started_at = None
        self._session_key = ""
        self._session_cache = {}
        self.modified = True
        self.revoke()

    async def adelete(self, session_key: str | None = None) -> None:
        if session_config().revocation_cache is not None:
            await sync_to_async(self.delete)(session_key)
        else:
            self.delete(session_key)

    def cycle_key(self) -> None:
        """A new key is a new token of the same data, signed now (as Django's signed_cookies); with revocation the
        old one is ended (``login()``: the anonymous session's cookie stops working)."""
        data = self._session  # read (and checked) under the old id first: revoking it would empty the session
        self.revoke(raise_errors=False)  # a new session (login): saved even if the old one could not be checked
        self._started_at = None  # ABSOLUTE_TIMEOUT counts from the login that cycles the key
        self._session_cache = data
        self.save()

    async def acycle_key(self) -> None:
        if session_config().revocation_cache is not None:
            await sync_to_async(self.cycle_key)()
        else:
            self.cycle_key()

    @classmethod
    def clear_expired(cls) -> None:
        """Nothing stored server-side: expired cookies are refused when they arrive."""

    @classmethod
    async def aclear_expired(cls) -> None:
        pass


def _is_revoked(config: SessionConfig, client: Presented, user_id: object) -> bool:
    """Whether the cache has the verified session ended (StoreUnavailable if it cannot say)."""
    return revocation.is_session_revoked(
        revocation.get_cache(config.revocation_cache or ""),
        client.session_id,
        user_id,
        client.issued_at,
        config.revocation_clock_skew,
        config.revocation_key_prefix,
        client.generation,
        config.revocation_earlier_until,
    )


def check_expiry(value: Any) -> None:
    """ValueError for a set_expiry() value no token can carry (``expiry.check_expiry``), in Django's names."""
    longest = session_config().longest_expiry
    _check_expiry(
        value, longest=longest, longest_name="SESSION_COOKIE_AGE", default="set_expiry(None) for SESSION_COOKIE_AGE."
    )


#: How a message names the chunk limit, and the option that stores typed values (named by a NotJSON).
MAX_CHUNKS_SETTING: Final = f"{SETTING}['SESSIONS']['MAX_CHUNKS']"
#: How to turn chunks on, offered when one cookie cannot carry the session (they also need this SessionMiddleware).
CHUNKS_FIX: Final = options.chunks_fix(options.DJANGO)
TYPED_NAME: Final = f"{SETTING}['SESSIONS']['TYPED'] = True"


if settings.configured:
    # The middleware imports this module when it starts: a bad configuration stops it there,
    # not at the first request that saves a session.
    session_config()
