"""Nothing is printed unless the application configures logging: a library's loggers end in a NullHandler.

Without it, Python's ``logging.lastResort`` printed every rejected link or cookie on stderr, in every test run
of a project that had not configured logging (DEBUG off: Django's own console handler is off too).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.servers import ROOT

#: A bad signed link in Django and in Starlette, and a bad session cookie in Starlette.
SCRIPT = textwrap.dedent(
    """
    import sys

    import django
    from django.conf import settings

    if sys.argv[1] == "configured":
        import logging

        logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
    settings.configure(
        DEBUG=False,
        SECRET_KEY="a-django-secret-key-long-enough-0123456789",
        ROOT_URLCONF="tests.signed_urls.django_urls",
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=["blake2sign_web.django"],
        MIDDLEWARE=["blake2sign_web.django.middleware.SessionMiddleware"],
        SESSION_ENGINE="blake2sign_web.django.sessions",
    )
    django.setup()
    from django.test import Client
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from blake2sign_web.starlette import SessionMiddleware
    from tests.signed_urls.starlette_app import build_starlette

    client = Client()
    assert client.get("/plain/1/?sig=forged").status_code == 403

    with TestClient(build_starlette(".")) as links:
        assert links.get("/hello/you?sig=forged").status_code == 403

    async def me(request):
        return PlainTextResponse(str(request.session.get("user")))

    sessions = Starlette(routes=[Route("/me", me)])
    sessions.add_middleware(SessionMiddleware, secret_key="starlette-logging-secret-0123456789")
    with TestClient(sessions) as visitor:
        assert visitor.get("/me", headers={"cookie": "session=forged"}).text == "None"
    """
)


def run(mode: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stderr


@pytest.fixture(scope="module")
def configured() -> str:
    return run("configured")


def test_nothing_is_printed_without_logging_configured() -> None:
    assert run("unconfigured") == ""


@pytest.mark.parametrize(
    "line",
    [
        "blake2sign_web.signed_urls WARNING rejected signed URL for '/plain/1/'",
        "blake2sign_web.signed_urls WARNING rejected signed URL for '/hello/you'",
        "blake2sign_web.starlette WARNING Rejected session cookie 'session'",
    ],
)
def test_the_same_lines_reach_a_configured_handler(configured: str, line: str) -> None:
    assert line in configured
