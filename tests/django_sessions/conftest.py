from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import Client

from blake2sign_web import SerializerSigner
from blake2sign_web.django import conf

DJANGO_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
OUR_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
SUSPICIOUS = "django.security.SuspiciousSession"


def middleware_with(session_middleware: str) -> list[str]:
    return [session_middleware if m == DJANGO_MIDDLEWARE else m for m in settings.MIDDLEWARE]


@pytest.fixture(params=[DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def session_middleware(request: pytest.FixtureRequest, settings: Any) -> str:
    """Run the test once with Django's SessionMiddleware and once with ours."""
    settings.MIDDLEWARE = middleware_with(request.param)
    settings.ROOT_URLCONF = "tests.django_sessions.urls"
    return request.param


def run(client: Client, *ops: list[Any], status: int = 200) -> HttpResponse:
    response = client.post("/ops/", json.dumps({"ops": list(ops), "status": status}), content_type="application/json")
    assert response.status_code == status
    return response  # type: ignore[no-any-return]


def session_of(response: HttpResponse) -> dict[str, Any]:
    return json.loads(response.content)["session"]  # type: ignore[no-any-return]


def cookie(response: HttpResponse) -> Any:
    return response.cookies.get(settings.SESSION_COOKIE_NAME)


def signer(**options: Any) -> SerializerSigner:
    """A signer with the engine's keys; pass clock= to date tokens in the past."""
    config = conf.session_config().signer
    fallbacks = tuple(settings.SECRET_KEY_FALLBACKS)
    return SerializerSigner(
        settings.SECRET_KEY,
        purpose=conf.PURPOSE,
        fallbacks=fallbacks,
        compression_threshold=config.compression_threshold,
        dictionary=config.dictionary,
        tag_size=config.tag_size,
        format=config.format,
        **options,
    )
