"""A drop-in for ``starlette.middleware.sessions.SessionMiddleware`` on the cached core signer.

Same arguments, same ``request.session``, same Set-Cookie attributes as Starlette's;
the cookie holds a keyed-BLAKE token (compact JSON, compressed when that pays) instead
of itsdangerous over base64 JSON. ``__init__`` does all the set-up once (signer from
the per-process cache, cookie attribute strings); ``__call__`` only does per-request
work. Bad cookies of any kind give an empty session and a warning, never an exception.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any, Final, Literal

from starlette.datastructures import MutableHeaders, Secret
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..cache import get_signer
from ..exceptions import BadSignature
from .session_migration import StarletteCookieReader

logger = logging.getLogger("blake2sign_web.starlette")

#: Browsers keep cookies of up to 4096 bytes, counting name, value and attributes.
BROWSER_COOKIE_LIMIT: Final = 4096
#: Cookies travel on every request, so compress from a lower size than the core's default.
COMPRESSION_THRESHOLD: Final = 128
_EXPIRED: Final = "expires=Thu, 01 Jan 1970 00:00:00 GMT; "


class SessionCookieTooLarge(ValueError):
    """The session would make a cookie over the browser limit, which browsers silently drop."""


class Session(dict[str, Any]):
    """``request.session``: a dict that records whether it was read and whether it changed.

    Starlette 1.x marks a session accessed when ``request.session`` is touched; reads
    mark it too, so ``Vary: Cookie`` is right on older Starlette versions as well.
    """

    accessed: bool = False
    modified: bool = False

    def mark_accessed(self) -> None:
        self.accessed = True

    def mark_modified(self) -> None:
        self.accessed = True
        self.modified = True

    # Reads.
    def __getitem__(self, key: str) -> Any:
        self.accessed = True
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.accessed = True
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.accessed = True
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        self.accessed = True
        return super().__iter__()

    def __len__(self) -> int:
        self.accessed = True
        return super().__len__()

    def keys(self) -> Any:
        self.accessed = True
        return super().keys()

    def values(self) -> Any:
        self.accessed = True
        return super().values()

    def items(self) -> Any:
        self.accessed = True
        return super().items()

    # Writes, as Starlette's Session.
    def __setitem__(self, key: str, value: Any) -> None:
        self.mark_modified()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.mark_modified()
        super().__delitem__(key)

    def clear(self) -> None:
        self.mark_modified()
        super().clear()

    def pop(self, key: str, *args: Any) -> Any:
        self.accessed = True
        if dict.__contains__(self, key):
            self.modified = True
        return super().pop(key, *args)

    def popitem(self) -> tuple[str, Any]:
        item = super().popitem()
        self.mark_modified()
        return item

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.accessed = True
        if not dict.__contains__(self, key):
            self.modified = True
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.mark_modified()
        super().update(*args, **kwargs)

    def __ior__(self, other: Any, /) -> Session:  # type: ignore[override,misc]
        self.mark_modified()
        return super().__ior__(other)


class SessionMiddleware:
    """Signed-cookie sessions for Starlette and FastAPI; replaces Starlette's by changing one import.

    The positional and keyword arguments and their defaults are Starlette's. The extras
    are keyword-only: ``fallback_secrets`` (older secrets still accepted; a session read
    with one is re-issued under ``secret_key``), ``hasher``, ``compression`` and
    ``compression_threshold``, ``on_oversize`` ("raise" or "log") and
    ``migrate_starlette_cookies`` (accept and re-issue cookies from Starlette's middleware).
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
        hasher: Literal["blake2b", "blake2s", "blake3"] = "blake2b",
        compression: Literal["zstd"] | None = "zstd",
        compression_threshold: int = COMPRESSION_THRESHOLD,
        on_oversize: Literal["raise", "log"] = "raise",
        migrate_starlette_cookies: bool = False,
    ) -> None:
        secret = _secret(secret_key, "secret_key")
        if isinstance(fallback_secrets, (str, bytes, Secret)):
            raise TypeError("SessionMiddleware fallback_secrets must be a list of secrets, not a single secret")
        fallbacks = tuple(_secret(s, "each of fallback_secrets") for s in fallback_secrets)
        if not isinstance(session_cookie, str) or not session_cookie:
            raise ValueError(
                f"SessionMiddleware session_cookie must be a non-empty cookie name; got {session_cookie!r}"
            )
        if same_site not in ("lax", "strict", "none"):
            raise ValueError(f"SessionMiddleware same_site must be 'lax', 'strict' or 'none'; got {same_site!r}")
        if on_oversize not in ("raise", "log"):
            raise ValueError(f"SessionMiddleware on_oversize must be 'raise' or 'log'; got {on_oversize!r}")

        self.app = app
        self.session_cookie = session_cookie
        self.max_age = max_age
        self.path = path
        self.on_oversize = on_oversize
        # The cookie name is part of the purpose: a cookie only verifies under the name it was issued for.
        self.signer = get_signer(
            secret,
            purpose=f"starlette.sessions:{session_cookie}",
            max_age=max_age,
            fallbacks=fallbacks,
            hasher=hasher,
            compression=compression,
            compression_threshold=compression_threshold,
            max_token_length=BROWSER_COOKIE_LIMIT,
        )
        self.legacy = StarletteCookieReader(secret, fallbacks, max_age) if migrate_starlette_cookies else None

        # The Set-Cookie attributes, in Starlette's order and spelling.
        self.security_flags = "httponly; samesite=" + same_site
        if https_only:
            self.security_flags += "; secure"
        if domain is not None:
            self.security_flags += f"; domain={domain}"
        if partitioned:
            self.security_flags += "; partitioned"
        max_age_attribute = f"Max-Age={max_age}; " if max_age is not None else ""
        self._cookie_suffix = f"; path={path}; {max_age_attribute}{self.security_flags}"
        self._delete_cookie = f"{session_cookie}=null; path={path}; {_EXPIRED}{self.security_flags}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        cookie = HTTPConnection(scope).cookies.get(self.session_cookie)
        session = Session() if cookie is None else self._load(cookie)
        initial_session_was_empty = not dict.__len__(session)
        scope["session"] = session

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                session: Session = scope["session"]
                if session.accessed or session.modified:
                    headers = MutableHeaders(scope=message)
                    if session.accessed:
                        headers.add_vary_header("Cookie")
                    if session.modified and dict.__len__(session):
                        header = self._cookie_header(session)
                        if header is not None:
                            headers.append("Set-Cookie", header)
                    elif session.modified and not initial_session_was_empty:
                        headers.append("Set-Cookie", self._delete_cookie)
            await send(message)

        await self.app(scope, receive, send_wrapper)

    def _load(self, cookie: str) -> Session:
        """The session in ``cookie``; an empty one, with a warning, if it is not a valid session."""
        if self.legacy is not None and cookie.count(".") == 2:  # itsdangerous: data.timestamp.signature
            value = self.legacy.read(cookie)
            if value is None:
                logger.warning("Rejected session cookie %r: not a valid Starlette session cookie", self.session_cookie)
                return Session()
            session = Session(value)
            session.modified = True  # re-issue it in this project's format
            return session
        try:
            loaded = self.signer.load_token(cookie)
        except BadSignature as error:  # the core's messages never quote the token
            logger.warning("Rejected session cookie %r: %s", self.session_cookie, error)
            return Session()
        if not isinstance(loaded.value, dict):
            logger.warning("Rejected session cookie %r: its value is not a session", self.session_cookie)
            return Session()
        session = Session(loaded.value)
        if loaded.used_fallback:
            session.modified = True  # re-sign it with the current secret
        return session

    def _cookie_header(self, session: Session) -> str | None:
        """The Set-Cookie value for ``session``, or None (logged) if it is too large and so configured."""
        try:
            token = self.signer.dumps(session)
        except ValueError as error:  # over the signer's length or decompressed-size limit
            self._oversize(f"the session is too large for a cookie ({error})")
            return None
        header = f"{self.session_cookie}={token}{self._cookie_suffix}"
        if len(header) > BROWSER_COOKIE_LIMIT:
            self._oversize(f"session cookie {self.session_cookie!r} would be {len(header)} bytes with its attributes")
            return None
        return header

    def _oversize(self, problem: str) -> None:
        message = (
            f"{problem}, over the browser limit of {BROWSER_COOKIE_LIMIT} bytes: browsers drop such cookies. "
            "Store less in request.session (keep an id and load the rest server-side)."
        )
        if self.on_oversize == "raise":
            raise SessionCookieTooLarge(message)
        logger.error("%s The response keeps the client's previous session cookie.", message)


def _secret(value: object, name: str) -> str:
    """A non-empty secret string from a str or Starlette's Secret; a clear error otherwise."""
    if isinstance(value, Secret):
        value = str(value)
    if not isinstance(value, str):
        raise TypeError(
            f"SessionMiddleware {name} must be a str or starlette.datastructures.Secret, not {type(value).__name__}"
        )
    if not value:
        raise ValueError(
            f"SessionMiddleware {name} must not be empty: pass a long random string, e.g. from "
            "secrets.token_urlsafe(50), read from configuration"
        )
    return value
