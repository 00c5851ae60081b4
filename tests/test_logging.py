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


#: Flask and Quart apps, logging left as each framework sets it up (its app.logger's default handler, on stderr,
#: as under ``flask run``, or gunicorn's error log through wsgi.errors): a forged cookie, a session too large under
#: "log", then cookies of Flask's own session interface while ACCEPT_FLASK_COOKIES is off, on two requests.
FLASK_SCRIPT = textwrap.dedent(
    """
    import asyncio
    import secrets
    import time

    import flask
    import quart
    from flask.sessions import SecureCookieSessionInterface

    from blake2sign_web.flask import FlaskSessions, QuartSessions

    SECRET = "flask-logging-secret-0123456789abcdefghijklmnop"
    old = flask.Flask("old")
    old.config["SECRET_KEY"] = SECRET
    theirs = SecureCookieSessionInterface().get_signing_serializer(old).dumps({"user_id": 42})

    app = flask.Flask("shop")
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"OVERSIZE": "log"})
    FlaskSessions(app)

    @app.get("/me")
    def me():
        return str(flask.session.get("user_id"))

    @app.get("/big")
    def big():
        flask.session["blob"] = secrets.token_urlsafe(5000)
        return ""

    client = app.test_client()  # Werkzeug's test client sends its jar's cookies, not a Cookie header given
    client.set_cookie("session", "forged")
    assert client.get("/me").text == "None"
    assert client.get("/big").status_code == 200
    for _ in range(2):
        client.set_cookie("session", theirs)
        assert client.get("/me").text == "None"

    qapp = quart.Quart("qshop")
    qapp.config.update(SECRET_KEY=SECRET)
    QuartSessions(qapp)

    @qapp.get("/me")
    async def qme():
        return str(quart.session.get("user_id"))

    async def main():
        client = qapp.test_client()
        for _ in range(2):
            response = await client.get("/me", headers={"Cookie": "session=" + theirs})
            assert await response.get_data() == b"None"

    asyncio.run(main())
    time.sleep(0.5)  # Quart's app.logger writes from a QueueListener thread, which a server's process outlives
    """
)


def test_flask_and_quart_users_see_a_switch_that_logs_everyone_out() -> None:
    """Refusing Flask's own cookies (ACCEPT_FLASK_COOKIES off) is said once per app on its app.logger, which Flask
    and Quart print by default; a forged cookie stays quiet (as Flask's own interface is); a session too large under
    "log" is an error on app.logger."""
    completed = subprocess.run(
        [sys.executable, "-c", FLASK_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stderr.splitlines()
    assert not any("forged" in line or "not a valid session cookie" in line for line in lines), lines
    [oversize] = [line for line in lines if "would take" in line]
    assert "] ERROR in cookies: Session cookie 'session' would take" in oversize  # Flask's format
    alerts = [line for line in lines if "ACCEPT_FLASK_COOKIES" in line]
    assert len(alerts) == 2, lines  # once for the Flask app, once for the Quart app
    for alert in alerts:
        assert "] WARNING in loading: Rejected session cookie 'session': " in alert
        assert "set BLAKE2SIGN_WEB['ACCEPT_FLASK_COOKIES'] = True" in alert
        assert "Everyone who holds such a cookie is logged out" in alert
    assert secrets_free(completed.stderr)


def secrets_free(text: str) -> bool:
    """No secret and no cookie's content in what is printed."""
    return "flask-logging-secret" not in text and "eyJ" not in text and "user_id" not in text
