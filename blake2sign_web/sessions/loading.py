"""A session read from its cookie: at once, or when it is first used. No framework here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any

from ..exceptions import BadSignature
from .request import session_from, settled
from .state import ReadTrackingSession, Session
from .token import INCUMBENT_SHAPE, ReadToken, RefusalWords, SessionTokenReader, refusal_reason

if TYPE_CHECKING:
    from ..signing.serializer import LoadedToken
    from .cookies import SessionCookie
    from .request import SessionSetup


class SessionLoader:
    """How one configuration's cookie becomes ``request.session``: the reader, the session class, the words."""

    def __init__(
        self,
        setup: SessionSetup,
        cookie: SessionCookie,
        reader: SessionTokenReader,
        session_class: type[Session],
        *,
        lazy: bool,
        logger: logging.Logger,
        words: RefusalWords,
        alert: logging.Logger | None = None,
    ) -> None:
        self.session_class, self.reader, self.cookie = session_class, reader, cookie
        #: Read lazily: ``LazySession``, unless the cookie is one the reader re-issues on any request.
        self.lazy = lazy
        #: The usual cookie, cut out of a Cookie header without a call: ``name=`` first, no ``;``, no quote.
        self.cookie_prefix, self.prefix_length, self.token_in = cookie.prefix, cookie.prefix_length, cookie.token_in
        self.signer = setup.signers.reader
        self.needs_token = setup.needs_token
        #: A valid token holding a plain session may be read straight into it: nothing else decides how it loads.
        self.direct = setup.direct_read
        self.logger, self.words = logger, words
        #: A logger the user sees (Flask's ``app.logger``), told once when a cookie of the framework's own is refused.
        self.alert = alert
        #: The write loading asks for is left ``pending``, not ``modified``: Flask's ``session.modified`` is the app's.
        self.pending_writes = False

    def for_cookie(self, cookie: str | None) -> Session:
        """The session for the session cookie: empty without one, else loaded when first used (or now, if re-issued)."""
        if cookie is None:
            return self.session_class()
        if self.lazy and not self.reader.read_at_once(cookie):
            session = LazySession()
            session.source = (cookie, self)
            return session
        return self.read(cookie)

    def read(self, cookie: str) -> Session:
        """The session in ``cookie``, read now."""
        return settled(self.session(self.reader.read(cookie), cookie))

    def load(self, cookie: str) -> tuple[Session, LoadedToken | None]:
        """The session in ``cookie`` and its verified token (None when not needed, or for a migrated cookie)."""
        read = self.reader.read(cookie)
        return self.session(read, cookie), read.token

    def session(self, read: ReadToken, cookie: str | None) -> Session:
        """The session for what the reader made of a cookie, and a refused one's warning."""
        if read.data is None:
            reason = refusal_reason(read, self.words)
            if read.outcome == INCUMBENT_SHAPE and self.alert is not None:
                # The first one only (every user holding such a cookie comes through here), and one line per cookie.
                alert, self.alert = self.alert, None
                alert.warning(
                    "Rejected session cookie %r: %s. Everyone who holds such a cookie is logged out. (Said here "
                    "once; later ones are logged on the %r logger.)",
                    self.cookie.name, reason, self.logger.name,
                )  # fmt: skip
            else:
                self.logger.warning("Rejected session cookie %r: %s", self.cookie.name, reason)
        return session_from(read, self.session_class, self.cookie.name, cookie, self.cookie.max_chunks)


class LazySession(Session):
    """A session whose cookie is read on first use (a request that never uses it pays nothing), then plain."""

    #: Set by ``SessionLoader`` (no ``__init__``: one Python call less on every request): the cookie (or the
    #: Cookie header it is in) and the loader, in one attribute (one to set and delete, not two).
    source: tuple[str | bytes, SessionLoader]

    def mark_accessed(self, accessed: bool = True) -> None:
        """Read the cookie into this session and mark it accessed (``request.session`` calls it) unless told not to."""
        cookie, loader = self.source
        del self.source
        self.__class__ = loader.session_class  # type: ignore[assignment]  # same layout: allowed, plain now
        if accessed:
            self.accessed = True
        if type(cookie) is bytes:  # a Cookie header: the session cookie is cut out of it now
            if cookie.startswith(loader.cookie_prefix) and 59 not in cookie and 34 not in cookie:
                cookie = cookie[loader.prefix_length :]  # the usual case (token_in's first), without a call
            else:
                found = loader.token_in(cookie)
                if found is None:
                    return  # not there: an empty session
                cookie = found
        if loader.direct:
            # The common configurations, kept short: a valid token holding a plain session is read straight in.
            rewrite = False
            try:
                if loader.needs_token:  # fallback secrets, encryption: the token says whether to re-issue it
                    loaded = loader.signer.load_token(cookie)
                    value, rewrite = loaded.value, loaded.rewrite
                else:
                    value = loader.signer.loads(cookie)
            except BadSignature:
                value = None  # read again below, where the rejection is logged (or the token's own expiry kept)
            if type(value) is dict:
                if value:
                    dict.update(self, value)
                    self.loaded_empty = False
                if rewrite:  # re-sign it under the current secret, in the current form
                    if loader.pending_writes:
                        self.pending = True
                    else:
                        self.modified = True
                return
            if value is not None:  # [session, meta] (set_expiry), or no session at all
                read = settled(loader.session(loader.reader.of_value(value, None, rewrite), None))
                LazySession._take(self, read, loader)
                return
        started = perf_counter()
        text = cookie if isinstance(cookie, str) else cookie.decode("latin-1").strip()
        LazySession._take(self, loader.read(text), loader)
        self.load_ms = (perf_counter() - started) * 1000  # for Server-Timing

    def load(self) -> None:
        """Read the cookie into this session, not marking it accessed."""
        LazySession.mark_accessed(self, False)

    def _take(self, loaded: Session, loader: SessionLoader) -> None:
        dict.update(self, loaded)
        vars(self).update(vars(loaded))  # modified, loaded_empty, and the expiry the token carried
        if loader.pending_writes and self.modified:
            self.modified, self.pending = False, True


def _loading(name: str) -> Callable[..., Any]:
    def method(self: LazySession, *args: Any, **kwargs: Any) -> Any:
        LazySession.mark_accessed(self, False)
        return getattr(self, name)(*args, **kwargs)  # the plain session's method now

    method.__name__ = method.__qualname__ = name
    return method


for _name in (
    "mark_modified", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__iter__",
    "__len__", "__reversed__", "__eq__", "__ne__", "__repr__", "__or__", "__ror__", "__ior__", "get", "keys",
    "values", "items", "copy", "pop", "popitem", "setdefault", "update", "clear", "__reduce_ex__",
    "set_expiry", "get_expiry_age", "get_expiry_date", "get_expire_at_browser_close",
):  # fmt: skip
    setattr(LazySession, _name, _loading(_name))


def _get(self: LazySession, key: str, default: Any = None) -> Any:
    """``get``, the usual first use, without ``_loading``'s packed arguments and lookup by name."""
    LazySession.mark_accessed(self, False)
    return self.get(key, default)


def _getitem(self: LazySession, key: str) -> Any:
    """``session[key]``, as ``_get``."""
    LazySession.mark_accessed(self, False)
    return self[key]


LazySession.get = _get  # type: ignore[method-assign,assignment]
LazySession.__getitem__ = _getitem  # type: ignore[method-assign,assignment]


def lazy_class(session_class: type[Session], **namespace: Any) -> type[LazySession]:
    """A ``LazySession`` that is also ``session_class``, for Flask, which looks at it before the app uses it."""
    namespace.setdefault("__module__", session_class.__module__)
    for name, read in _TRACKED_READS.items():  # a read marks the loaded session accessed: at once, one call less
        if getattr(session_class, name) is getattr(ReadTrackingSession, name):
            namespace.setdefault(name, read)
    return type(f"Lazy{session_class.__name__}", (LazySession, session_class), namespace)


def _tracked_get(self: LazySession, key: str, default: Any = None) -> Any:
    LazySession.mark_accessed(self)
    return dict.get(self, key, default)


def _tracked_getitem(self: LazySession, key: str) -> Any:
    LazySession.mark_accessed(self)
    return dict.__getitem__(self, key)


def _tracked_contains(self: LazySession, key: object) -> bool:
    LazySession.mark_accessed(self)
    return dict.__contains__(self, key)


#: ``ReadTrackingSession``'s usual reads (mark accessed, then the dict's), for a lazy class of such a session.
_TRACKED_READS: dict[str, Callable[..., Any]] = {
    "get": _tracked_get, "__getitem__": _tracked_getitem, "__contains__": _tracked_contains,
}  # fmt: skip
