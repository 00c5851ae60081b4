"""A drop-in for ``django.contrib.sessions.middleware.SessionMiddleware`` that does less per request: every
behaviour of Django's, plus ``SERVER_TIMING`` and ``CHUNKED``, with the settings read once and the cookie's
Set-Cookie line formatted once (docs/django.md). A subclass of Django's, so that the admin (admin.E410) and
third-party apps find it; it overrides every per-request method.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, cast

from asgiref.sync import iscoroutinefunction
from django.contrib.sessions import middleware as django_middleware
from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.exceptions import SessionInterrupted
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers

from ..sessions.chunks import IncompleteChunks
from ..sessions.request import joined_token, server_timing_value
from ..sessions.settings import MIDDLEWARE_KEYS, ResponseSettings
from .conf import ENGINE, cookie_problems, cookie_settings, prefix_problems, session_options, session_problems
from .cookies import request_cookies

__all__ = ["SessionMiddleware"]

Response = TypeVar("Response", bound=HttpResponseBase)


#: The request attribute that carries the session's load time (ms) to the response, with SERVER_TIMING on.
LOAD_TIME: Final = "_blake2sign_web_session_load_ms"


def load_now(request: HttpRequest) -> None:
    """Load the session at once and time it (SERVER_TIMING; docs/django.md): not marked accessed, so the
    response's Vary and cookie are what they would have been. Any engine."""
    session: Any = request.session
    started = time.perf_counter()
    if session.session_key is not None:
        session._session_cache = session.load()
    setattr(request, LOAD_TIME, (time.perf_counter() - started) * 1000)


async def aload_now(request: HttpRequest) -> None:
    """``load_now`` for an async request: the engine's ``aload()``, which leaves the event loop for cache I/O."""
    session: Any = request.session
    started = time.perf_counter()
    if session.session_key is not None:
        session._session_cache = await session.aload()
    setattr(request, LOAD_TIME, (time.perf_counter() - started) * 1000)


async def aload_before_save(request: HttpRequest, save_every_request: bool) -> None:
    """Read a session ``process_response`` will save but nothing read, with ``aload()`` (not marked accessed):
    ``save()`` reads it first, and with revocation that read would ask the cache on the event loop."""
    session: Any = getattr(request, "session", None)
    if session is None or hasattr(session, "_session_cache") or not session.session_key:
        return
    if save_every_request or session.modified:
        session._session_cache = await session.aload()


class SessionMiddleware(django_middleware.SessionMiddleware):
    """Django's SessionMiddleware, checking its settings at start-up and doing less per request for this engine."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        """Refuse cookie settings that cannot work, then Django's set-up (async mode, the engine's SessionStore)."""
        problems = [problem for _, problem in cookie_problems() + prefix_problems()]
        problems += [f"{p.message}." for p in session_problems(session_options()) if p.key in MIDDLEWARE_KEYS]
        if problems:
            raise ImproperlyConfigured(" ".join(problems))
        super().__init__(get_response)
        self.async_mode = iscoroutinefunction(get_response)  # Django 4.2's mixin does not set it
        #: This project's engine does no I/O, so an async request needs no thread for it.
        self.store_in_cookie = any(cls.__module__ == ENGINE for cls in self.SessionStore.__mro__)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        if self._new_session(request).server_timing:  # process_request, inline
            load_now(request)
        return self.process_response(request, cast(HttpResponseBase, self.get_response(request)))

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        """With this project's engine, no thread for the signing (Django's mixin runs all of it in one): only the
        engine's reads that may ask the revocation cache leave the event loop, through its ``aload()``."""
        if not self.store_in_cookie:  # a db or cache engine does I/O, which has to leave the event loop
            return await super().__acall__(request)
        cookie = self._new_session(request)
        if cookie.server_timing:
            await aload_now(request)
        get_response = cast(Callable[[HttpRequest], Awaitable[HttpResponseBase]], self.get_response)
        response = await get_response(request)
        await aload_before_save(request, cookie.save_every_request)
        return self.process_response(request, response)

    def process_request(self, request: HttpRequest) -> None:
        if self._new_session(request).server_timing:
            load_now(request)

    def _new_session(self, request: HttpRequest) -> ResponseSettings:
        cookie, cookies = cookie_settings(), request_cookies(request)
        if cookie.max_chunks and self.store_in_cookie:
            incomplete: list[str] = []  # an incomplete set of chunks: its cookies, which the response deletes
            token = joined_token(cookie.name, cookies, cookie.max_chunks, incomplete, _log_incomplete)
            if incomplete:
                setattr(request, INCOMPLETE_CHUNKS, incomplete)
            request.session = self.SessionStore(token)
        else:
            request.session = self.SessionStore(cookies.get(cookie.name))
        return cookie

    def process_response(self, request: HttpRequest, response: Response) -> Response:
        """Save a modified session and write, refresh or delete its cookie, as Django's middleware does."""
        try:
            session = request.session
            accessed = session.accessed
            modified = session.modified
            empty = session.is_empty()
        except AttributeError:
            return response
        cookie = cookie_settings()
        if cookie.server_timing:
            started = time.perf_counter()
        # An incomplete set of chunks (IncompleteChunks.cookies): the session cookie and every chunk sent, the
        # session cookie even when the client left it out of its Cookie header (it still holds it).
        cookies = request_cookies(request)
        if empty and (cookie.name in cookies or getattr(request, INCOMPLETE_CHUNKS, None)):
            cookie.cookies.put(response.cookies, cookie.cookies.deletions(cookies))
            need_vary_cookie = True
        else:
            need_vary_cookie = accessed
            if (modified or cookie.save_every_request) and not empty and response.status_code < 500:
                try:
                    session.save()
                except UpdateError:
                    raise SessionInterrupted(
                        "The request's session was deleted before the request completed. "
                        "The user may have logged out in a concurrent request, for example."
                    ) from None
                # Oversized under "log", or read while the revocation cache was down: the client keeps its cookie.
                if not getattr(session, "oversized", False) and not getattr(session, "unsaved", False):
                    chunks = getattr(session, "chunks", None) if cookie.max_chunks else None
                    max_age = None if session.get_expire_at_browser_close() else int(session.get_expiry_age())
                    key = session.session_key or ""
                    cookie.cookies.put_session(response.cookies, chunks, key, cookies, max_age)
                need_vary_cookie = True
        if need_vary_cookie:
            # ResponseHeaders' own dict (Django 3.2+): no KeyError to find no Vary, no re-validation of "Cookie";
            # Django's public way wherever that private dict is not there.
            store = getattr(response.headers, "_store", None)
            if store is None or "vary" in store:
                patch_vary_headers(response, ("Cookie",))
            else:
                store["vary"] = ("Vary", "Cookie")
        if cookie.server_timing:
            save_ms = (time.perf_counter() - started) * 1000
            load_ms = getattr(request, LOAD_TIME, 0.0)
            response.headers["Server-Timing"] = server_timing_value(load_ms, save_ms)
        return response


#: Django's logger for session cookies that fail verification, as the engine logs them.
suspicious_logger: Final = logging.getLogger("django.security.SuspiciousSession")


#: The request attribute naming the cookies of an incomplete set of chunks, which the response deletes.
INCOMPLETE_CHUNKS: Final = "_blake2sign_web_incomplete_chunks"


def _log_incomplete(error: IncompleteChunks) -> None:
    """An incomplete set of chunks is logged as any bad cookie (``sessions.request.joined_token``)."""
    suspicious_logger.warning("Session cookie rejected: %s.", str(error).rstrip("."))
