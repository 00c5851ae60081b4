"""Signed links in Starlette and FastAPI.

- ``sign_url_for(request, signer, "route", expires_in=..., **path_params)``;
- ``require_signature(signer)``: a FastAPI dependency (``Depends(...)``) and the check
  behind ``signed_url_required(signer)``, a decorator for plain Starlette endpoints;
- ``signed_file_response(request, root, name)`` and ``SignedFiles(signer, root)``: a
  file from a directory, streamed by Starlette's FileResponse, with single-range,
  HEAD and conditional-GET handling shared with the Django view.

Answers: 403 for a missing or bad signature, 410 (``expired_status``) for an expired one,
400 for an unsafe path, 404 for a missing file, 416 for an unsatisfiable range.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from .. import files
from ..exceptions import BadSignature, SignatureExpired
from ..urls import Bound, URLSigner

logger = logging.getLogger("blake2sign_web.signed_urls")

BindFunction = Callable[[Request], Bound | None]
Endpoint = Callable[[Request], Awaitable[Response]]


def sign_url_for(
    request: Request,
    signer: URLSigner,
    name: str,
    /,
    *,
    expires_in: int | float | timedelta | None = None,
    bind: Bound | None = None,
    **path_params: Any,
) -> str:
    """Sign ``request.url_for(name, **path_params)`` (an absolute URL; the host is signed only with bind_host)."""
    return signer.sign(str(request.url_for(name, **path_params)), expires_in=expires_in, bind=bind)


def request_url(request: Request, signer: URLSigner) -> str:
    """The URL as the client sent it: the raw path, so a decoded '%25' cannot be decoded twice."""
    raw_path: bytes | None = request.scope.get("raw_path")
    if raw_path:
        # ASGI's raw_path has no query string, but some clients (Starlette's TestClient before
        # 0.38) put it there; the query is read from query_string below.
        path = raw_path.partition(b"?")[0].decode("latin-1")
    else:
        path = request.scope.get("root_path", "") + request.scope["path"]
    query = request.scope.get("query_string", b"").decode("latin-1")
    url = path + ("?" + query if query else "")
    if signer.bind_host:
        url = f"{request.url.scheme}://{request.url.netloc}{url}"
    return url


def check_signature(
    request: Request, signer: URLSigner, *, bind: Bound | None = None, expired_status: int = 410
) -> None:
    """Raise HTTPException(403), or ``expired_status`` for an expired link, unless the URL is correctly signed."""
    try:
        signer.verify(request_url(request, signer), bind=bind)
    except SignatureExpired:
        logger.info("expired signed URL for %s", request.url.path)
        raise HTTPException(expired_status, "This link has expired.") from None
    except BadSignature as error:
        logger.warning("rejected signed URL for %s: %s", request.url.path, error)
        raise HTTPException(403, "This link is not valid.") from None


def require_signature(
    signer: URLSigner, *, bind: BindFunction | None = None, expired_status: int = 410
) -> Callable[[Request], Awaitable[None]]:
    """A dependency for FastAPI: ``@app.get("/x", dependencies=[Depends(require_signature(signer))])``."""
    if expired_status not in (403, 410):
        raise ValueError(f"expired_status must be 410 or 403; got {expired_status!r}")

    async def signature_required(request: Request) -> None:
        check_signature(request, signer, bind=None if bind is None else bind(request), expired_status=expired_status)

    return signature_required


def signed_url_required(
    signer: URLSigner, *, bind: BindFunction | None = None, expired_status: int = 410
) -> Callable[[Endpoint], Endpoint]:
    """Decorate a Starlette ``async def endpoint(request)`` so that only signed URLs reach it."""
    check = require_signature(signer, bind=bind, expired_status=expired_status)

    def decorate(endpoint: Endpoint) -> Endpoint:
        @functools.wraps(endpoint)
        async def wrapper(request: Request) -> Response:
            await check(request)
            return await endpoint(request)

        return wrapper

    return decorate


class _RangeFileResponse(FileResponse):
    """FileResponse whose Range handling follows ``files.requested_range``, not Starlette's own.

    The decision (whole file, one range, 416) is made before the response is built; the
    Range header is then rewritten to that one range, or removed, so Starlette never sends
    multipart answers or a 400 for a header it cannot parse.
    """

    def __init__(self, *args: Any, byte_range: files.ByteRange | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.byte_range = byte_range

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"range", b"if-range")]
        if self.byte_range is not None:
            headers.append((b"range", f"bytes={self.byte_range.start}-{self.byte_range.stop - 1}".encode()))
        await super().__call__({**scope, "headers": headers}, receive, send)


async def signed_file_response(
    request: Request, root: str | os.PathLike[str], name: str, *, as_attachment: bool = True
) -> Response:
    """Serve ``name`` under ``root`` (check the signature first); see the module docstring for statuses."""
    try:
        path = await anyio.to_thread.run_sync(files.resolve_under, root, name)
        stat_result = await anyio.to_thread.run_sync(os.stat, path)
    except files.UnsafePath:
        raise HTTPException(400, "Refused file name.") from None
    except (FileNotFoundError, NotADirectoryError):
        raise HTTPException(404, "No such file.") from None
    etag = files.etag_for(stat_result.st_size, stat_result.st_mtime_ns)
    last_modified = files.http_date(stat_result.st_mtime)
    headers = {
        "etag": etag,
        "last-modified": last_modified,
        "content-disposition": files.content_disposition(name, as_attachment=as_attachment),
        "x-content-type-options": "nosniff",
    }
    if files.not_modified(
        request.headers.get("if-none-match"), request.headers.get("if-modified-since"), etag, stat_result.st_mtime
    ):
        return Response(status_code=304, headers={"etag": etag, "last-modified": last_modified})
    try:
        byte_range = files.requested_range(
            request.headers.get("range"), request.headers.get("if-range"), stat_result.st_size, etag, last_modified
        )
    except files.RangeNotSatisfiable as error:
        return Response(status_code=416, headers={"content-range": error.content_range})
    return _RangeFileResponse(
        path,
        headers=headers,
        media_type=files.content_type_for(name),
        stat_result=stat_result,
        byte_range=byte_range,
    )


class SignedFiles:
    """Serves files under ``root`` by signed link: ``Route("/files/{name:path}", SignedFiles(signer, root))``."""

    def __init__(
        self,
        signer: URLSigner,
        root: str | os.PathLike[str],
        *,
        path_param: str = "name",
        as_attachment: bool = True,
        bind: BindFunction | None = None,
        expired_status: int = 410,
    ) -> None:
        if not os.path.isdir(root):
            raise ValueError(f"SignedFiles root {os.fspath(root)!r} is not a directory")
        self.check = require_signature(signer, bind=bind, expired_status=expired_status)
        self.root = os.path.realpath(root)
        self.path_param = path_param
        self.as_attachment = as_attachment

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # An ASGI app (Starlette's Route calls class instances that way), answering its own errors.
        request = Request(scope, receive)
        try:
            response = await self.respond(request)
        except HTTPException as error:
            response = PlainTextResponse(error.detail, status_code=error.status_code, headers=error.headers)
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        await self.check(request)
        if request.method not in ("GET", "HEAD"):
            raise HTTPException(405, headers={"Allow": "GET, HEAD"})
        name = request.path_params[self.path_param]
        return await signed_file_response(request, self.root, name, as_attachment=self.as_attachment)
