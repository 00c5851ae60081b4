"""Starlette and FastAPI apps serving single-use links from a RedisStore (tests and the real-server test)."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import Depends, FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SignedFiles, require_signature, signed_url_required
from blake2sign_web.starlette.revocation import RedisStore

SECRET = "single-use-tests-secret-0123456789"
CONTENT = bytes(range(256)) * 8  # 2048 bytes


def make_signer() -> URLSigner:
    return URLSigner(SECRET, purpose="downloads")


def build_app(root: str | os.PathLike[str], store: RedisStore | None, *, expired_status: int = 410) -> Starlette:
    signer = make_signer()

    @signed_url_required(signer, single_use=store, expired_status=expired_status)
    async def action(request: Request) -> Response:
        return PlainTextResponse("done")

    @signed_url_required(signer)
    async def storeless(request: Request) -> Response:
        return PlainTextResponse("storeless")

    return Starlette(
        routes=[
            Route("/action", action, methods=["GET", "HEAD", "POST"]),
            Route("/storeless", storeless),
            Route("/files/{name:path}", SignedFiles(signer, root, single_use=store, expired_status=expired_status)),
        ]
    )


def build_fastapi(store: RedisStore) -> FastAPI:
    app = FastAPI()

    @app.get("/report", dependencies=[Depends(require_signature(make_signer(), single_use=store))])
    async def report() -> dict[str, str]:
        return {"report": "ok"}

    @app.post("/export", dependencies=[Depends(require_signature(make_signer(), single_use=store))])
    async def export() -> dict[str, str]:
        return {"export": "started"}

    return app


def write_files(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "report.bin").write_bytes(CONTENT)
    return root


def app_from_env() -> Starlette:
    """For ``uvicorn --factory`` in the several-process test."""
    store = RedisStore(os.environ["BLAKE2SIGN_REDIS_URL"], timeout=2)
    return build_app(os.environ["BLAKE2SIGN_SERVED_ROOT"], store)
