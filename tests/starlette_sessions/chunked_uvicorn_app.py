"""The application the chunked real-server test runs under uvicorn: chunked=True, max_chunks=4."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from blake2sign_web.starlette import SessionMiddleware

from .conftest import ROUTES, SECRET

app = Starlette(
    routes=ROUTES, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, chunked=True, max_chunks=4)]
)
