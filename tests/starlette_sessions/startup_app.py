"""An application configured from the environment, as a deployed one is: for the start-up tests."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.middleware import Middleware

from blake2sign_web.starlette import SessionMiddleware

from .conftest import ROUTES

app = Starlette(
    routes=ROUTES, middleware=[Middleware(SessionMiddleware, secret_key=os.environ["BLAKE2SIGN_TEST_SECRET"])]
)
