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
        # Flask's key, not the core's max_age (issue 38, item 14).
        (
            {"PERMANENT_SESSION_LIFETIME": "31 days"},
            TypeError,
            r"^PERMANENT_SESSION_LIFETIME must be a timedelta or seconds \(an int\); got '31 days'$",
        ),
        ({"PERMANENT_SESSION_LIFETIME": 2**40}, ValueError, r"^PERMANENT_SESSION_LIFETIME must be below 2\*\*32"),
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


def test_the_other_frameworks_app_is_refused_at_once() -> None:
    """FlaskSessions(quart_app) and QuartSessions(flask_app) used to start, then fail on the first request."""
    import quart

    from blake2sign_web.flask import QuartSessions

    with pytest.raises(TypeError, match=r"this is a Quart app: use QuartSessions\(app\)"):
        FlaskSessions(quart.Quart(__name__))
    with pytest.raises(TypeError, match=r"this is a Flask app: use FlaskSessions\(app\)"):
        QuartSessions(app_with())


def test_a_bad_setting_under_an_assigned_interface_is_one_error(caplog: pytest.LogCaptureFixture) -> None:
    """``app.session_interface = FlaskSessions()`` (no start-up check): the bad setting's error, and no second,
    unrelated traceback from saving the session that never opened."""
    app = app_with(SESSION_COOKIE_SAMESITE="None")
    app.session_interface = FlaskSessions()

    @app.get("/")
    def index() -> str:
        return "never"

    assert app.test_client().get("/").status_code == 500
    errors = [record for record in caplog.records if record.levelname == "ERROR"]
    assert [str(record.exc_info[1]) for record in errors if record.exc_info] == [
        'SESSION_COOKIE_SAMESITE = "None" needs SESSION_COOKIE_SECURE = True: browsers drop SameSite=None cookies '
        "that are not Secure, so no session would last; serve the site over HTTPS with SESSION_COOKIE_SECURE = "
        'True, or set SESSION_COOKIE_SAMESITE = "lax"'
    ]
    assert "another exception occurred" not in caplog.text
    assert "AttributeError" not in caplog.text


def test_a_session_too_large_names_flasks_chunked_option() -> None:
    import secrets

    from blake2sign_web.flask import SessionCookieTooLarge

    app = make_app(TESTING=True)
    with pytest.raises(SessionCookieTooLarge) as raised:
        app.test_client().post("/write", json={"blob": secrets.token_urlsafe(5000)})
    assert str(raised.value).endswith(
        ": store less in flask.session (keep an id and load the rest server-side), or set "
        "BLAKE2SIGN_WEB['CHUNKED'] = True to split it over several cookies."
    )


def test_an_expired_cookie_is_logged_in_words(caplog: pytest.LogCaptureFixture) -> None:
    import time

    app = make_app(PERMANENT_SESSION_LIFETIME=1)
    client = app.test_client()
    client.post("/write", json={"a": 1})
    client.post("/permanent", json=True)
    time.sleep(2.1)
    with caplog.at_level("WARNING", logger="blake2sign_web.flask"):
        assert client.get("/read").json == {}
    assert "Rejected session cookie 'session': token is older than 1 second" in caplog.text
    assert "1 seconds" not in caplog.text
