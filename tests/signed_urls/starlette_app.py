"""The Starlette and FastAPI apps the tests (and the real-server test) serve."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import Depends, FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SignedFiles, grant_cookie, require_signature, sign_url_for, signed_url_required

SECRET = "starlette-tests-secret-0123456789"
#: The site's public URL, as an application configures it for the links it mails.
PUBLIC_URL = "https://files.example.com"


def make_signer(**options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", **options)  # type: ignore[arg-type]


def build_starlette(root: str | os.PathLike[str], signer: URLSigner | None = None) -> Starlette:
    signer = signer or make_signer()

    @signed_url_required(signer)
    async def hello(request: Request) -> Response:
        return PlainTextResponse(f"hello {request.path_params['who']}")

    @signed_url_required(signer, bind=lambda request: request.headers.get("x-user"))
    async def bound(request: Request) -> Response:
        return PlainTextResponse("bound")

    @signed_url_required(signer)
    async def echo(request: Request) -> Response:
        return PlainTextResponse(request.query_params.get("q", ""))

    async def link(request: Request) -> Response:
        return PlainTextResponse(sign_url_for(request, signer, "files", expires_in=60, name=request.query_params["n"]))

    async def mail_link(request: Request) -> Response:
        # What an endpoint that e-mails a link would put into the message.
        name = request.query_params["n"]
        link = sign_url_for(request, signer, "files", base_url=PUBLIC_URL, expires_in=60, name=name)
        return PlainTextResponse(link)

    async def own_host_link(request: Request) -> Response:
        # A link shown to the client itself, on the host it asked for.
        link = sign_url_for(
            request, signer, "files", base_url=request.base_url, expires_in=60, name=request.query_params["n"]
        )
        return PlainTextResponse(link)

    async def grant(request: Request) -> Response:
        # Grants this browser the folder files/<folder> by cookie (a real endpoint checks who asks first).
        response = PlainTextResponse("granted")
        folder = request.app.url_path_for("files", name=request.path_params["folder"])
        grant_cookie(response, request, signer, folder, expires_in=60)
        return response

    async def grant_bound(request: Request) -> Response:
        response = PlainTextResponse("granted")
        folder = "/bound-files/" + request.path_params["folder"]
        grant_cookie(response, request, signer, folder, expires_in=60, bind=request.headers["x-user"])
        return response

    return Starlette(
        routes=[
            Route("/grant/{folder:path}", grant),
            Route("/grant-bound/{folder:path}", grant_bound),
            Route("/bound-files/{name:path}", SignedFiles(signer, root, bind=lambda r: r.headers.get("x-user"))),
            Route("/hello/{who}", hello, name="hello"),
            Route("/bound", bound),
            Route("/link", link),
            Route("/mail-link", mail_link),
            Route("/own-host-link", own_host_link),
            Route("/echo", echo),
            Route("/files/{name:path}", SignedFiles(signer, root), name="files"),
            Route("/inline/{name:path}", SignedFiles(signer, root, as_attachment=False)),
            Route("/raw-playlists/{name:path}", SignedFiles(signer, root, sign_playlists=False)),
        ]
    )


def build_fastapi(signer: URLSigner | None = None) -> FastAPI:
    signer = signer or make_signer()
    app = FastAPI()

    @app.get("/report/{year}", dependencies=[Depends(require_signature(signer))])
    async def report(year: int) -> dict[str, int]:
        return {"year": year}

    return app


def app_from_env() -> Starlette:
    """For uvicorn --factory in the real-server test and the benchmark."""
    return build_starlette(Path(os.environ["BLAKE2SIGN_SERVED_ROOT"]))
