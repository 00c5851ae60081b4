"""Folder links through each framework's link checks that are not file views: Django's ``signed_url_required``,
Starlette's ``require_signature`` (FastAPI), ``signed_url_required`` and ``check_signature``."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from fastapi import Depends, FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django import signed_url_required as django_required
from blake2sign_web.django.signed_urls import get_signer
from blake2sign_web.starlette import require_signature
from blake2sign_web.starlette import signed_url_required as starlette_required
from blake2sign_web.starlette.signed_urls import check_signature


@django_required
def gallery(request: HttpRequest, rest: str) -> HttpResponse:
    return HttpResponse(f"{request.signed_link.prefix} {rest}")  # type: ignore[attr-defined]


urlpatterns = [path("gallery/<path:rest>", gallery)]
pytestmark = pytest.mark.urls(__name__)

SIGNER = URLSigner("a folder link secret for starlette tests", purpose="gallery")


def test_django_decorated_view_takes_a_folder_link(client: Client) -> None:
    folder = get_signer().sign_prefix("/gallery/42/", expires_in=60)
    response = client.get(folder.link("photos/a.jpg"))
    assert (response.status_code, response.content) == (200, b"/gallery/42/ 42/photos/a.jpg")
    assert client.get("/gallery/43/a.jpg?" + folder.query).status_code == 403
    assert client.get("/gallery/42/../43/a.jpg?" + folder.query).status_code == 403
    assert client.get("/gallery/42/a.jpg?" + folder.query.replace("%2F42%2F", "%2F43%2F")).status_code == 403


async def photo(request: Request) -> Response:
    link = check_signature(request, SIGNER)
    return PlainTextResponse(f"{link.prefix} {link.below}")


async def decorated(request: Request) -> Response:
    return PlainTextResponse(request.state.signed_link.below)


def test_starlette_check_signature_and_decorator_take_a_folder_link() -> None:
    app = Starlette(
        routes=[
            Route("/gallery/{rest:path}", photo),
            Route("/decorated/{rest:path}", starlette_required(SIGNER)(decorated)),
        ]
    )
    client = TestClient(app)
    folder = SIGNER.sign_prefix("/gallery/42/", expires_in=60)
    assert client.get(folder.link("a/b.jpg")).text == "/gallery/42/ a/b.jpg"
    assert client.get("/gallery/420/b.jpg?" + folder.query).status_code == 403
    assert client.get("/gallery/42/a%2Fb.jpg?" + folder.query).status_code == 403
    decorated_folder = SIGNER.sign_prefix("/decorated/", expires_in=60)
    assert client.get(decorated_folder.link("x/y")).text == "x/y"
    assert client.get("/gallery/42/x?" + decorated_folder.query).status_code == 403


def test_fastapi_dependency_takes_a_folder_link() -> None:
    app = FastAPI()

    @app.get("/course/{lesson:path}", dependencies=[Depends(require_signature(SIGNER))])
    async def lesson(lesson: str) -> dict[str, Any]:
        return {"lesson": lesson}

    client = TestClient(app)
    folder = SIGNER.sign_prefix("/course/", expires_in=60)
    assert client.get(folder.link("1/intro")).json() == {"lesson": "1/intro"}
    assert client.get("/other/1?" + folder.query).status_code in (403, 404)
    assert client.get("/course/1?" + SIGNER.sign_prefix("/course/1/", expires_in=60).query).status_code == 403
