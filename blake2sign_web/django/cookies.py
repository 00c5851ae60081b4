"""A Django request's cookies, from every ``Cookie`` header it came with: under ASGI, Django before ticket 36399's
fix joins an HTTP/2 client's several headers with commas, which ``request.COOKIES`` does not split.
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
