"""The example Starlette app: a visit counter in a signed session cookie."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from blake2sign_web.starlette import SessionMiddleware

SECRET_KEY = os.environ.get("EXAMPLE_SECRET_KEY", "example-only-secret-key-do-not-use-in-production-0123456789")


async def counter(request: Request) -> HTMLResponse:
    visits = request.session.get("visits", 0) + 1
    request.session["visits"] = visits
    return HTMLResponse(
        "<h1>blake2sign_web example (Starlette)</h1>"
        f"<p>Visits in this session: <strong>{visits}</strong>.</p>"
        "<p>The session lives in the <code>session</code> cookie, signed with keyed BLAKE2b.</p>"
    )


app = Starlette(routes=[Route("/", counter)], middleware=[Middleware(SessionMiddleware, secret_key=SECRET_KEY)])
