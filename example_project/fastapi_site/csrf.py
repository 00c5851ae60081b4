"""CSRF protection for the example FastAPI app, as Django's CsrfViewMiddleware protects the Django site.

Two checks on every unsafe request (POST, PUT, PATCH, DELETE), each failing with 403 before
the application runs, so a refused request changes nothing:

1. Where it came from. A browser says so: ``Sec-Fetch-Site`` must be ``same-origin`` (or
   ``none``, a request the user made themselves); without that header, an ``Origin`` must be
   this site's own. A request with neither came from no browser (curl, a test client), which
   no other site can make on a visitor's behalf.
2. A token only this site's pages hold: a random value kept in the session
   (``csrf_token``), written into each form as a hidden input, or sent by scripts in an
   ``X-CSRF-Token`` header; compared with ``hmac.compare_digest``.

The session cookie's ``SameSite=Lax`` is not enough alone. It keeps the cookie off
cross-site POSTs, but the login and the engine switch need no cookie to do harm: a
cross-site form logs the visitor in as the attacker's account, or switches their engine
(which ends their session), and the response's Set-Cookie is kept. And SameSite is about
sites, not origins: every subdomain of a domain, and every port of ``127.0.0.1``, is the
same site, so a page on any of them sends the cookie with its POSTs, and can set cookies
for the whole domain (its own session, with a token it knows). The origin check refuses
those; the token covers browsers that send neither header.

The token is per session, and a new one is drawn after login and logout (both clear the
session), as Django rotates its token at login.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from html import escape
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_KEY = "csrf_token"
FIELD = "csrf_token"
HEADER = b"x-csrf-token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The example's forms are a few dozen bytes: a longer body is refused before it is read whole.
MAX_FORM = 64 * 1024


def csrf_token(request: Request) -> str:
    """This session's token, drawn on first use (the page that shows a form writes the session)."""
    token = request.session.get(SESSION_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        request.session[SESSION_KEY] = token
    return token


def csrf_input(request: Request) -> str:
    """The hidden input every form of the app carries."""
    return f'<input type="hidden" name="{FIELD}" value="{escape(csrf_token(request))}">'


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def cross_origin(scope: Scope) -> str | None:
    """Why the request is not from this site's own pages, or None when it is (or no browser sent it)."""
    fetch_site = _header(scope, b"sec-fetch-site")
    if fetch_site is not None:
        return None if fetch_site in ("same-origin", "none") else f"Sec-Fetch-Site is {fetch_site}"
    origin = _header(scope, b"origin")
    if origin is None:
        return None
    host = _header(scope, b"host")
    # Behind a proxy that ends TLS, run uvicorn with --proxy-headers so that the scheme is https here too.
    if host is None or origin.lower() != f"{scope.get('scheme', 'http')}://{host}".lower():
        return f"Origin {origin} is not this site"
    return None


def _same_token(expected: object, given: str | None) -> bool:
    if not isinstance(expected, str) or not expected or not given:
        return False
    # Bytes: compare_digest refuses str with non-ASCII characters (a TypeError, not a refusal).
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8", "replace"))


class CSRFMiddleware:
    """Inside the session middleware (it reads ``scope["session"]``), around the application."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in UNSAFE:
            await self.app(scope, receive, send)
            return
        reason = cross_origin(scope)
        if reason is not None:
            await refuse(reason, scope, receive, send)
            return
        session: Mapping[str, Any] = scope["session"]
        expected = session.get(SESSION_KEY)
        given = _header(scope, HEADER)
        if given is None:
            content_type = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
            if content_type == "application/x-www-form-urlencoded":
                body = await read_body(receive)
                if body is None:
                    await PlainTextResponse("Form too large.", status_code=413)(scope, receive, send)
                    return
                receive = replay(body, receive)
                values = parse_qs(body.decode("utf-8", "replace")).get(FIELD)
                given = values[0] if values else None
        if not _same_token(expected, given):
            reason = "CSRF token missing" if not given else "CSRF token incorrect"
            await refuse(reason, scope, receive, send)
            return
        await self.app(scope, receive, send)


async def refuse(reason: str, scope: Scope, receive: Receive, send: Send) -> None:
    message = f"Forbidden (CSRF check failed): {reason}. Reload the page and try again."
    await PlainTextResponse(message, status_code=403)(scope, receive, send)


async def read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None past MAX_FORM."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the token check decides, nobody reads on
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the application the body already read, then what the server sends next."""
    pending = True

    async def receive_again() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return receive_again
