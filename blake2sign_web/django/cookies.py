"""A Django request's cookies, from every ``Cookie`` header it came with.

Under ASGI, HTTP/2 clients send one ``Cookie`` header per cookie, and Django before ticket 36399's fix joins them
with commas into ``HTTP_COOKIE``, which ``request.COOKIES`` splits on ";" only: every cookie after the first is
lost into the first one's value. This reads them from the ASGI scope instead; WSGI requests, and ASGI ones with
one header, are ``request.COOKIES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest

from ..sessions.cookies import cookies_in


def request_cookies(request: HttpRequest) -> Mapping[str, str]:
    """The request's cookies: ``request.COOKIES``, or each of an ASGI request's several ``Cookie`` headers'."""
    scope: Any = getattr(request, "scope", None)
    if scope is None:
        return request.COOKIES
    headers = scope.get("headers", ())
    if sum(name == b"cookie" for name, _ in headers) < 2:
        return request.COOKIES
    cookies: Any = request.__dict__.get("_blake2sign_web_cookies")
    if cookies is None:
        cookies = request.__dict__["_blake2sign_web_cookies"] = cookies_in(headers)
    return cookies  # type: ignore[no-any-return]
