"""Shared helpers: a browser that carries one cookie from one deployment to the next."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.django_sessions.conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, SUSPICIOUS, middleware_with

__all__ = ["SUSPICIOUS", "browser", "middleware_with", "session_middleware", "user", "whoami"]

OUR_ENGINE = "blake2sign_web.django.sessions"


@pytest.fixture(params=[DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def session_middleware(request: pytest.FixtureRequest) -> str:
    """Run the test once with Django's SessionMiddleware and once with ours, named by the test (MIDDLEWARE is
    switched per deployment with override_settings, unlike tests.django_sessions' fixture of the same name)."""
    return str(request.param)


@pytest.fixture
def user(db: Any) -> Any:
    return get_user_model().objects.create_user("ada", password="correct horse")


def browser(cookie: str | None = None, name: str = "sessionid") -> Client:
    """A new test client (so the middleware and engine are loaded from the settings in force) holding ``cookie``."""
    client = Client()
    if cookie is not None:
        client.cookies[name] = cookie
    return client


def whoami(client: Client) -> str:
    return client.get("/whoami/").content.decode()
