"""The Django admin with our middleware in place of Django's: its checks pass and a real login works."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.core.checks import run_checks
from django.core.management import call_command
from django.test import Client, override_settings

from blake2sign_web.django.middleware import SessionMiddleware

from .conftest import OUR_MIDDLEWARE, cookie, middleware_with, signer

pytestmark = [pytest.mark.urls("tests.django_sessions.admin_urls")]


@pytest.fixture
def our_middleware(settings: Any) -> None:
    settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)


def test_it_is_a_django_session_middleware() -> None:
    """What admin.E410 and third-party apps look for."""
    assert issubclass(SessionMiddleware, DjangoSessionMiddleware)


def test_the_admin_accepts_our_middleware(our_middleware: None) -> None:
    assert "django.contrib.admin" in settings.INSTALLED_APPS
    assert [m.id for m in run_checks() if m.id == "admin.E410"] == []
    call_command("check")  # raises SystemCheckError on any error


@pytest.mark.django_db
def test_an_admin_login_through_our_middleware(our_middleware: None) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "correct horse battery")
    client = Client()
    assert client.get("/admin/").status_code == 302  # to the login page
    response = client.post(
        "/admin/login/", {"username": "root", "password": "correct horse battery", "next": "/admin/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    session = signer().loads(cookie(response).value)
    assert session["_auth_user_id"] == str(get_user_model().objects.get(username="root").pk)
    index = client.get("/admin/")
    assert index.status_code == 200
    assert b"root" in index.content


@pytest.mark.django_db
def test_a_wrong_password_is_refused_through_our_middleware(our_middleware: None) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "correct horse battery")
    client = Client()
    response = client.post("/admin/login/", {"username": "root", "password": "wrong", "next": "/admin/"})
    assert response.status_code == 200  # the form again, with its error
    assert client.get("/admin/").status_code == 302


def test_checks_pass_with_djangos_middleware_too() -> None:
    with override_settings(MIDDLEWARE=middleware_with("django.contrib.sessions.middleware.SessionMiddleware")):
        call_command("check")
