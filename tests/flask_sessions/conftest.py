"""A small Flask app around this project's session interface, driven by Flask's real test client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flask
import pytest

from blake2sign_web.flask import FlaskSessions

SECRET = "flask-sessions-test-secret-0123456789abcdefghijklmnop"
OLD_SECRET = "flask-sessions-old-test-secret-0123456789abcdefghijkl"

AppFactory = Callable[..., flask.Flask]


def make_app(**config: Any) -> flask.Flask:
    """An app whose views read, write, clear and make permanent ``flask.session``; ``config`` over the defaults."""
    app = flask.Flask(__name__)
    app.config.update({"SECRET_KEY": SECRET, **config})
    FlaskSessions(app)

    @app.get("/read")
    def read() -> Any:
        return flask.jsonify(dict(flask.session))

    @app.post("/write")
    def write() -> Any:
        flask.session.update(flask.request.get_json())
        return flask.jsonify(dict(flask.session))

    @app.post("/permanent")
    def permanent() -> str:
        flask.session.permanent = flask.request.get_json()
        return ""

    @app.post("/clear")
    def clear() -> str:
        flask.session.clear()
        return ""

    @app.get("/plain")
    def plain() -> str:
        return "no session here"

    return app


@pytest.fixture
def app_for() -> AppFactory:
    return make_app


def set_cookies(response: Any) -> list[str]:
    return list(response.headers.getlist("Set-Cookie"))


def cookie_value(header: str) -> str:
    return header.split(";", 1)[0].split("=", 1)[1]
