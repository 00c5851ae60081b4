"""The applications the chunked real-server tests run under uvicorn: chunked=True, max_chunks 4 and the default."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from blake2sign_web.starlette import SessionMiddleware

from .conftest import ROUTES, SECRET

app = Starlette(
    routes=ROUTES, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, chunked=True, max_chunks=4)]
)

#: chunked=True and every other argument its default (max_chunks 2): what the client-limit tests meet.
default_app = Starlette(routes=ROUTES, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, chunked=True)])
