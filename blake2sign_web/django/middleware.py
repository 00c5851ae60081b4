"""A drop-in for ``django.contrib.sessions.middleware.SessionMiddleware`` that does less per request.

Same behaviour: the cookie named by ``SESSION_COOKIE_NAME`` becomes ``request.session``
(the engine's own SessionStore); a modified session (or every session with
``SESSION_SAVE_EVERY_REQUEST``) is saved and its cookie written with every
``SESSION_COOKIE_*`` attribute, a browser-close cookie when the session asks for one;
an emptied session's cookie is deleted; 5xx responses save nothing; ``Vary: Cookie``
whenever the session was accessed; ``SessionInterrupted`` when the store lost the session.

Less work: settings are read once (and again after ``setting_changed``), the
cookie's attributes are formatted once, ``expires`` is formatted once a second,
and the one Set-Cookie line goes out already formatted. With this project's engine,
a session whose cookie was too large under ``"OVERSIZE": "log"`` sends no cookie at all.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.cookies import Morsel
from importlib import import_module
from typing import Any, Literal

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.contrib.sessions.backends.base import UpdateError
from django.contrib.sessions.exceptions import SessionInterrupted
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.utils.http import http_date

__all__ = ["SessionMiddleware"]


@dataclass(frozen=True)
class CookieSettings:
    """The SESSION_* settings a response needs, read once per settings change."""

    name: str
    path: str
    domain: str | None
    samesite: Literal["Lax", "Strict", "None", False] | None
    #: "; Path=/; SameSite=Lax; Secure; HttpOnly" and so on, in Morsel's order and spelling.
    attributes: dict[str, Any]
    save_every_request: bool


_cookie_settings: CookieSettings | None = None


def cookie_settings() -> CookieSettings:
    global _cookie_settings
    current = _cookie_settings
    if current is None:
        attributes: dict[str, Any] = {}
        if settings.SESSION_COOKIE_PATH:
            attributes["path"] = settings.SESSION_COOKIE_PATH
        if settings.SESSION_COOKIE_DOMAIN:
            attributes["domain"] = settings.SESSION_COOKIE_DOMAIN
        if settings.SESSION_COOKIE_SECURE:
            attributes["secure"] = True
        if settings.SESSION_COOKIE_HTTPONLY:
            attributes["httponly"] = True
        if settings.SESSION_COOKIE_SAMESITE:
            if settings.SESSION_COOKIE_SAMESITE.lower() not in ("lax", "none", "strict"):
                raise ValueError('SESSION_COOKIE_SAMESITE must be "lax", "none", or "strict".')
            attributes["samesite"] = settings.SESSION_COOKIE_SAMESITE
        current = _cookie_settings = CookieSettings(
            name=settings.SESSION_COOKIE_NAME,
            path=settings.SESSION_COOKIE_PATH,
            domain=settings.SESSION_COOKIE_DOMAIN,
            samesite=settings.SESSION_COOKIE_SAMESITE,
            attributes=attributes,
            save_every_request=settings.SESSION_SAVE_EVERY_REQUEST,
        )
    return current


def reset(**kwargs: Any) -> None:
    """Forget the cookie settings (connected to Django's ``setting_changed``)."""
    global _cookie_settings, _expires_cache
    _cookie_settings = None
    _expires_cache = (0, 0, "")


#: (second, max_age, formatted expires): the last ``expires`` written, reused within the second.
_expires_cache: tuple[int, int, str] = (0, 0, "")


def expires_for(max_age: int) -> str:
    """``http_date(time.time() + max_age)``, formatted at most once a second per max_age."""
    global _expires_cache
    now = time.time()
    second, age, text = _expires_cache
    if int(now) != second or max_age != age:
        text = http_date(now + max_age)
        _expires_cache = (int(now), max_age, text)
    return text


class SessionMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        self.process_request(request)
        return self.process_response(request, self.get_response(request))

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        self.process_request(request)
        get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = self.get_response
        return self.process_response(request, await get_response(request))

    def process_request(self, request: HttpRequest) -> None:
        request.session = self.SessionStore(request.COOKIES.get(cookie_settings().name))

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        """Save a modified session and write, refresh or delete its cookie, as Django's middleware does."""
        try:
            session = request.session
            accessed = session.accessed
            modified = session.modified
            empty = session.is_empty()
        except AttributeError:
            return response
        cookie = cookie_settings()
        if empty and cookie.name in request.COOKIES:
            response.delete_cookie(cookie.name, path=cookie.path, domain=cookie.domain, samesite=cookie.samesite)
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
                if not getattr(session, "oversized", False):
                    self._set_cookie(response, cookie, session)
                need_vary_cookie = True
        if need_vary_cookie:
            if "Vary" in response:
                patch_vary_headers(response, ("Cookie",))
            else:
                response.headers["Vary"] = "Cookie"
        return response

    @staticmethod
    def _set_cookie(response: HttpResponseBase, cookie: CookieSettings, session: Any) -> None:
        """What ``response.set_cookie(...)`` writes, without re-validating each attribute."""
        morsel: Morsel[str] = Morsel()
        morsel.set(cookie.name, *response.cookies.value_encode(session.session_key))
        items: dict[str, Any] = {"expires": "", "max-age": ""}
        if not session.get_expire_at_browser_close():
            max_age = int(session.get_expiry_age())
            items["max-age"] = max_age
            items["expires"] = expires_for(max_age)
        items.update(cookie.attributes)
        dict.update(morsel, items)
        dict.__setitem__(response.cookies, cookie.name, morsel)
