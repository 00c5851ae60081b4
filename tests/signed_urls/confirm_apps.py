"""Apps whose single-use links are signed with ``consume_on="post"``: the tests' and the real servers'.

Django: ``tests.signed_urls.confirm_urls`` (SignedFileView and decorated views), served by gunicorn with
``tests.signed_urls.confirm_settings``. Starlette and FastAPI: ``build_starlette`` and ``build_fastapi`` here,
served by uvicorn through ``starlette_from_env`` and ``fastapi_from_env``.
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import Depends, FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from blake2sign_web import URLSigner, VerifiedLink
from blake2sign_web.starlette import (
    ConfirmationRequired,
    SignedFiles,
    confirmation_handler,
    require_signature,
    signed_file_response,
    signed_url_required,
)
from blake2sign_web.starlette.revocation import RedisStore

SECRET = "confirm-tests-secret-0123456789abcdef"
CONTENT = bytes(range(256)) * 64  # 16 KiB
CUSTOM_PAGE = "<!DOCTYPE html><title>Sign in</title><form method=post><button>Sign in as Ann</button></form>"


def make_signer() -> URLSigner:
    return URLSigner(SECRET, purpose="downloads")


def write_files(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "report.bin").write_bytes(CONTENT)
    return root


def custom_page(request: Request, link: VerifiedLink) -> Response:
    return HTMLResponse(CUSTOM_PAGE, headers={"Content-Security-Policy": "default-src 'self'"})


def build_starlette(root: str | os.PathLike[str], store: RedisStore | None) -> Starlette:
    signer = make_signer()

    @signed_url_required(signer, single_use=store)
    async def magic(request: Request) -> Response:
        return PlainTextResponse(f"signed in by {request.method}")

    @signed_url_required(signer, single_use=store, confirm=custom_page)
    async def own_page(request: Request) -> Response:
        return PlainTextResponse("signed in")

    return Starlette(
        routes=[
            Route("/magic", magic, methods=["GET", "HEAD", "POST"]),
            Route("/own-page", own_page, methods=["GET", "HEAD", "POST"]),
            Route("/files/{name:path}", SignedFiles(signer, root, single_use=store), name="files"),
        ]
    )


def build_fastapi(root: str | os.PathLike[str], store: RedisStore | None) -> FastAPI:
    signer = make_signer()
    app = FastAPI()
    app.add_exception_handler(ConfirmationRequired, confirmation_handler)
    checked = Depends(require_signature(signer, single_use=store))

    @app.api_route("/magic", methods=["GET", "HEAD", "POST"], dependencies=[checked])
    async def magic(request: Request) -> dict[str, str]:
        return {"signed_in_by": request.method}

    @app.api_route("/files/{name:path}", methods=["GET", "HEAD", "POST"], dependencies=[checked])
    async def download(name: str, request: Request) -> Response:
        return await signed_file_response(request, root, name)

    return app


def starlette_from_env() -> Starlette:
    """For ``uvicorn --factory``."""
    return build_starlette(os.environ["BLAKE2SIGN_SERVED_ROOT"], RedisStore(os.environ["BLAKE2SIGN_REDIS_URL"]))


def fastapi_from_env() -> FastAPI:
    """For ``uvicorn --factory``."""
    return build_fastapi(os.environ["BLAKE2SIGN_SERVED_ROOT"], RedisStore(os.environ["BLAKE2SIGN_REDIS_URL"]))
