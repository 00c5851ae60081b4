"""The Starlette site of the fleet: the same paths and answers as ``django_site``, on this project's
SessionMiddleware and URLSigner, with secrets from the environment (``FLEET_SECRET_KEY``, and
``FLEET_SECRET_KEY_FALLBACKS`` as a JSON list). Served by ``uvicorn --factory tests.fleet.starlette_site:app``
and by gunicorn's uvicorn workers (``tests.fleet.starlette_site:app()``).

The session looks like a login's: user id, a backend name, an auth hash and a small cart.
"""

from __future__ import annotations

import hashlib
import json
import os
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SessionMiddleware, signed_url_required

LINK_PURPOSE = "fleet-links"


def link_signer(secret: str, fallbacks: list[str]) -> URLSigner:
    return URLSigner(secret, purpose=LINK_PURPOSE, fallbacks=fallbacks)


class ServedBy:
    """Adds ``X-Served-By: <pid>`` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_pid(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (b"x-served-by", str(os.getpid()).encode())]
            await send(message)

        await self.app(scope, receive, send_with_pid)


def build(secret: str, fallbacks: list[str]) -> Starlette:
    signer = link_signer(secret, fallbacks)

    async def log_in(request: Request) -> Response:
        form = parse_qs((await request.body()).decode())
        user = int(form["username"][0].removeprefix("user"))
        request.session.update(
            user_id=user,
            backend="fleet.backends.PasswordBackend",
            auth_hash=hashlib.sha256(f"user{user}".encode()).hexdigest(),
            cart=["sku-1", "sku-2"],
        )
        return JSONResponse({"user": user, "cart": request.session["cart"]})

    async def me(request: Request) -> Response:
        session = request.session
        user = session.get("user_id")
        if "add" in request.query_params and user is not None:
            session["cart"] = [*session["cart"], request.query_params["add"]]
        return JSONResponse({"user": user, "cart": session.get("cart")})

    async def cart(request: Request) -> Response:
        return JSONResponse({"cart": request.session.get("cart")})

    async def link(request: Request) -> Response:
        return PlainTextResponse(signer.sign(f"/signed/{request.path_params['n']}/", expires_in=3600))

    @signed_url_required(signer)
    async def signed(request: Request) -> Response:
        return PlainTextResponse(str(request.path_params["n"]))

    async def note(request: Request) -> Response:
        notes = [*request.session.get("notes", []), request.query_params["v"]]
        request.session["notes"] = notes
        return JSONResponse({"notes": notes})

    return Starlette(
        routes=[
            Route("/login/", log_in, methods=["POST"]),
            Route("/me/", me),
            Route("/cart/", cart),
            Route("/link/{n:int}/", link),
            Route("/signed/{n:int}/", signed),
            Route("/note/", note),
        ],
        middleware=[
            Middleware(ServedBy),
            Middleware(SessionMiddleware, secret_key=secret, fallback_secrets=fallbacks),
        ],
    )


def app() -> Starlette:
    """The site with the secrets of this process's environment."""
    return build(os.environ["FLEET_SECRET_KEY"], json.loads(os.environ.get("FLEET_SECRET_KEY_FALLBACKS", "[]")))
