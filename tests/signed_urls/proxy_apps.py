"""The apps behind nginx in the proxy test: links bound to the host, issued and checked behind a path prefix.

Django (``tests.signed_urls.proxy_settings``, URLs below): trusts the proxy the documented way
(SECURE_PROXY_SSL_HEADER, USE_X_FORWARDED_HOST), the prefix from SCRIPT_NAME (gunicorn) or FORCE_SCRIPT_NAME
(uvicorn). Starlette (``starlette_from_env``): uvicorn --proxy-headers --forwarded-allow-ips <nginx's address>
--root-path <prefix>. Both sign with bind_host and keep single-use links in the Redis at $BLAKE2SIGN_REDIS_URL.
"""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from blake2sign_web import URLSigner
from blake2sign_web.django import SignedFileView, sign_url
from blake2sign_web.starlette import SignedFiles, sign_url_for
from blake2sign_web.starlette.revocation import RedisStore

SECRET = "proxy-tests-secret-0123456789abcdef"


def make_signer() -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", bind_host=True)


# Django


def share(request: HttpRequest) -> HttpResponse:
    """A link to report.bin as the client must use it: absolute, https, the client's host, the prefix."""
    single_use = request.GET.get("once") == "1"
    link = sign_url(reverse("files", args=["report.bin"]), request=request, expires_in=600, single_use=single_use)
    return HttpResponse(link, content_type="text/plain")


urlpatterns = [
    path("share", share),
    path("files/<path:name>", SignedFileView.as_view(storage="signed_test"), name="files"),
]


# Starlette


def build_starlette(root: str | os.PathLike[str], store: RedisStore | None) -> Starlette:
    signer = make_signer()

    async def share_link(request: Request) -> Response:
        single_use = request.query_params.get("once") == "1"
        # Shown to the client that asked: its own host (checked by nginx, which passes on only its own).
        link = sign_url_for(
            request,
            signer,
            "files",
            base_url=request.base_url,
            expires_in=600,
            single_use=single_use,
            name="report.bin",
        )
        return PlainTextResponse(link)

    return Starlette(
        routes=[
            Route("/share", share_link),
            Route("/files/{name:path}", SignedFiles(signer, root, single_use=store), name="files"),
        ]
    )


def starlette_from_env() -> Starlette:
    """For ``uvicorn --factory``."""
    return build_starlette(os.environ["BLAKE2SIGN_SERVED_ROOT"], RedisStore(os.environ["BLAKE2SIGN_REDIS_URL"]))
