"""Reading Flask's own session cookies while migrating: accepted and re-issued in this project's format."""

from __future__ import annotations

import logging
import uuid

import flask
import pytest

from blake2sign_web import SerializerSigner

from .conftest import SECRET, cookie_value, make_app, set_cookies

PURPOSE = "flask.sessions:session"


def flasks_own_cookie(secret: str = SECRET) -> tuple[str, uuid.UUID]:
    """A cookie written by Flask's own SecureCookieSessionInterface, holding tagged types."""
    app = flask.Flask(__name__)
    app.config["SECRET_KEY"] = secret
    the_uuid = uuid.uuid4()

    @app.get("/")
    def index() -> str:
        flask.session.update(user_id=7, cart=(1, 2), u=the_uuid)
        return ""

    [header] = app.test_client().get("/").headers.getlist("Set-Cookie")
    return cookie_value(header), the_uuid


def test_a_flask_cookie_is_read_and_reissued_in_this_projects_format() -> None:
    theirs, the_uuid = flasks_own_cookie()
    client = make_app(BLAKE2SIGN_WEB={"ACCEPT_FLASK_COOKIES": True}).test_client()
    client.set_cookie("session", theirs)
    response = client.get("/read")
    assert response.json == {"user_id": 7, "cart": [1, 2], "u": str(the_uuid)}
    [header] = set_cookies(response)
    ours = SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(cookie_value(header))
    assert ours == {"user_id": 7, "cart": (1, 2), "u": the_uuid}
    client.set_cookie("session", cookie_value(header))
    again = client.get("/read")
    assert again.json == response.json
    assert set_cookies(again) == []


def test_a_flask_cookie_under_another_secret_is_refused() -> None:
    theirs, _ = flasks_own_cookie("another-secret-0123456789abcdefghijklmnop")
    client = make_app(BLAKE2SIGN_WEB={"ACCEPT_FLASK_COOKIES": True}).test_client()
    client.set_cookie("session", theirs)
    assert client.get("/read").json == {}


def test_without_migration_a_flask_cookie_is_refused_with_a_hint(caplog: pytest.LogCaptureFixture) -> None:
    theirs, _ = flasks_own_cookie()
    client = make_app().test_client()
    client.set_cookie("session", theirs)
    with caplog.at_level(logging.WARNING, "blake2sign_web.flask"):
        assert client.get("/read").json == {}
    assert "BLAKE2SIGN_WEB['ACCEPT_FLASK_COOKIES'] = True" in caplog.text
