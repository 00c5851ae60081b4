"""Configuration errors fail at start-up (``init_app``), each named as the user wrote it in ``app.config``."""

from __future__ import annotations

import flask
import pytest

from blake2sign_web.flask import FlaskSessions

from .conftest import SECRET, make_app


def app_with(**config: object) -> flask.Flask:
    app = flask.Flask(__name__)
    app.config.update({"SECRET_KEY": SECRET, **config})
    return app


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"SESSION_COOKIE_SAMESITE": "invalid"}, ValueError, "SESSION_COOKIE_SAMESITE must be 'lax', 'strict' or"),
        (
            {"SESSION_COOKIE_SAMESITE": "None"},
            ValueError,
            'SESSION_COOKIE_SAMESITE = "None" needs SESSION_COOKIE_SECURE = True',
        ),
        ({"SESSION_COOKIE_PARTITIONED": True}, ValueError, "needs SESSION_COOKIE_SECURE = True"),
        ({"SESSION_COOKIE_NAME": "a b"}, ValueError, "SESSION_COOKIE_NAME must be a cookie name"),
        ({"SESSION_COOKIE_NAME": "__Host-s"}, ValueError, "SESSION_COOKIE_SECURE = True"),
        ({"SECRET_KEY": "short"}, ValueError, "SECRET_KEY is 5 bytes long"),
        ({"SECRET_KEY_FALLBACKS": "old-secret-of-some-length"}, TypeError, "SECRET_KEY_FALLBACKS must be a list"),
        ({"BLAKE2SIGN_WEB": {"HASHR": "blake2b"}}, ValueError, "BLAKE2SIGN_WEB has an unknown key 'HASHR'"),
        ({"BLAKE2SIGN_WEB": {"REVOCATION_CACHE": "x"}}, ValueError, "unknown key 'REVOCATION_CACHE'"),
        ({"BLAKE2SIGN_WEB": []}, TypeError, "BLAKE2SIGN_WEB must be a dict"),
        ({"BLAKE2SIGN_WEB": {"IDLE_TIMEOUT": 0}}, ValueError, r"BLAKE2SIGN_WEB\['IDLE_TIMEOUT'\] must be None"),
        ({"BLAKE2SIGN_WEB": {"MAX_CHUNKS": 3}}, ValueError, r"BLAKE2SIGN_WEB\['MAX_CHUNKS'\] applies to chunked"),
        ({"BLAKE2SIGN_WEB": {"TYPED": True, "FORMAT": 1}}, ValueError, r"BLAKE2SIGN_WEB\['TYPED'\] needs FORMAT 2"),
        ({"BLAKE2SIGN_WEB": {"ACCEPT_FLASK_COOKIES": 1}}, TypeError, "ACCEPT_FLASK_COOKIES'] must be True or False"),
    ],
)
def test_init_app_refuses_a_configuration_that_cannot_work(
    config: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        FlaskSessions(app_with(**config))


def test_a_config_changed_later_is_checked_when_a_request_uses_it() -> None:
    app = make_app(TESTING=True)
    app.config["SESSION_COOKIE_SAMESITE"] = "invalid"
    with pytest.raises(ValueError, match="SESSION_COOKIE_SAMESITE"):
        app.test_client().get("/read")


def test_a_config_change_takes_effect_on_the_next_request() -> None:
    app = make_app()
    client = app.test_client()
    assert "samesite" not in client.post("/write", json={"a": 1}).headers["Set-Cookie"]
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    assert "; samesite=Lax" in client.post("/write", json={"a": 2}).headers["Set-Cookie"]
    assert client.get("/read").json == {"a": 2}


def test_the_interface_can_be_assigned_as_flask_documents() -> None:
    app = app_with()
    app.session_interface = FlaskSessions()

    @app.get("/")
    def index() -> str:
        flask.session["n"] = flask.session.get("n", 0) + 1
        return str(flask.session["n"])

    client = app.test_client()
    assert [client.get("/").text for _ in range(3)] == ["1", "2", "3"]
