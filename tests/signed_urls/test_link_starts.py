"""``starts=`` through the adapters' signing helpers: Django's ``sign_url`` and ``{% signed_url %}``, Starlette's
``sign_url_for``. They only pass it on: the rules (tests/core/test_link_starts.py) are the core's."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.template import Context, Template
from django.test import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django import sign_url
from blake2sign_web.starlette import sign_url_for, signed_url_required

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")


def starts_of(url: str) -> int:
    return int(dict(parse_qsl(urlsplit(url).query))["starts"])


def test_django_sign_url_and_the_template_tag_pass_starts_on() -> None:
    later = int(time.time()) + 3600
    client = Client()
    early = sign_url("/plain/7/", expires_in=7200, starts=later)
    assert starts_of(early) == later
    assert client.get(early).status_code == 403
    assert client.get(sign_url("/plain/7/", expires_in=7200, starts=int(time.time()) - 5)).content == b"plain 7"
    with pytest.raises(ValueError, match="must be before the link's expiry"):
        sign_url("/plain/7/", expires_in=60, starts=later)
    opens = datetime.fromtimestamp(later, tz=timezone.utc)
    template = Template("{% load blake2sign %}{% signed_url 'sig-plain' 7 expires_in=7200 starts=opens %}")
    rendered = template.render(Context({"opens": opens})).replace("&amp;", "&")
    assert starts_of(rendered) == later
    assert client.get(rendered).status_code == 403


def test_starlette_sign_url_for_passes_starts_on() -> None:
    signer = URLSigner("a secret for links that start later, Starlette", purpose="starts")
    later = int(time.time()) + 3600

    @signed_url_required(signer)
    async def plain(request: Request) -> Response:
        return PlainTextResponse("plain")

    async def link(request: Request) -> Response:
        starts = int(request.query_params["starts"])
        return PlainTextResponse(sign_url_for(request, signer, "plain", expires_in=7200, starts=starts))

    app = Starlette(routes=[Route("/plain", plain, name="plain"), Route("/link", link)])
    with TestClient(app) as client:
        early = client.get("/link", params={"starts": later}).text
        assert starts_of(early) == later
        refused = client.get(early)
        assert refused.status_code == 403
        assert refused.text.startswith("This link is not valid yet; it becomes valid at ")
        started = client.get("/link", params={"starts": int(time.time()) - 5}).text
        assert client.get(started).text == "plain"
