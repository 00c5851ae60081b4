"""FlaskSessions through Flask's real test client: reading, writing, Flask's permanent sessions, Vary."""

from __future__ import annotations

import logging
import re
import uuid
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

import flask
import pytest
from markupsafe import Markup

from blake2sign_web import SerializerSigner

from .conftest import OLD_SECRET, SECRET, AppFactory, cookie_value, make_app, set_cookies

PURPOSE = "flask.sessions:session"


def test_a_session_written_is_read_back_and_not_rewritten(app_for: AppFactory) -> None:
    client = app_for().test_client()
    response = client.post("/write", json={"user_id": 42})
    [header] = set_cookies(response)
    assert header.startswith("session=")
    assert "; path=/" in header
    assert "httponly" in header
    assert "Max-Age" not in header
    assert "expires" not in header
    assert response.headers["Vary"] == "Cookie"
    assert SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(cookie_value(header)) == {"user_id": 42}
    read = client.get("/read")
    assert read.json == {"user_id": 42}
    assert set_cookies(read) == []
    assert read.headers["Vary"] == "Cookie"


def test_a_request_that_never_uses_the_session_adds_nothing(app_for: AppFactory) -> None:
    client = app_for().test_client()
    client.post("/write", json={"a": 1})
    response = client.get("/plain")
    assert set_cookies(response) == []
    assert "Vary" not in response.headers


def test_a_permanent_session_lives_the_permanent_session_lifetime(app_for: AppFactory) -> None:
    client = app_for(PERMANENT_SESSION_LIFETIME=3600).test_client()
    client.post("/write", json={"a": 1})
    [header] = set_cookies(client.post("/permanent", json=True))
    assert "Max-Age=3600" in header
    expires = parsedate_to_datetime(re.search(r"expires=([^;]+)", header).group(1))  # type: ignore[union-attr]
    assert abs((expires - datetime.now(timezone.utc)).total_seconds() - 3600) < 5
    # SESSION_REFRESH_EACH_REQUEST (Flask's default): a permanent session's cookie is re-issued on each request.
    [again] = set_cookies(client.get("/read"))
    assert "Max-Age=3600" in again
    [browser] = set_cookies(client.post("/permanent", json=False))
    assert "Max-Age" not in browser
    assert "expires" not in browser
    assert set_cookies(client.get("/read")) == []


def test_refresh_each_request_off_keeps_a_permanent_cookie(app_for: AppFactory) -> None:
    client = app_for(SESSION_REFRESH_EACH_REQUEST=False).test_client()
    client.post("/write", json={"a": 1})
    client.post("/permanent", json=True)
    assert set_cookies(client.get("/read")) == []


def test_the_permanent_lifetime_bounds_every_token(app_for: AppFactory) -> None:
    """A browser-session cookie kept past the lifetime is refused: the token's age is the lifetime's."""
    client = app_for(PERMANENT_SESSION_LIFETIME=60).test_client()
    old = SerializerSigner(SECRET, purpose=PURPOSE, typed=True, clock=lambda: 1_000_000.0).dumps({"a": 1})
    client.set_cookie("session", old)
    assert client.get("/read").json == {}


def test_clear_deletes_the_cookie_as_werkzeug_would(app_for: AppFactory) -> None:
    client = app_for().test_client()
    client.post("/write", json={"a": 1})
    [header] = set_cookies(client.post("/clear"))
    assert header.startswith("session=; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT")
    assert client.get("/read").json == {}


def test_clearing_a_session_the_client_never_had_writes_nothing(app_for: AppFactory) -> None:
    assert set_cookies(app_for().test_client().post("/clear")) == []


def test_the_cookie_attributes_are_flasks_settings(app_for: AppFactory) -> None:
    app = app_for(
        SESSION_COOKIE_NAME="__Secure-s",
        SESSION_COOKIE_DOMAIN="example.com",
        SESSION_COOKIE_PATH="/app",
        SESSION_COOKIE_HTTPONLY=False,
        SESSION_COOKIE_SECURE=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_PARTITIONED=True,
    )
    header = set_cookies(app.test_client().post("/write", json={"a": 1}, base_url="https://example.com"))[0]
    assert header.startswith("__Secure-s=")
    assert header.endswith("; path=/app; samesite=Strict; secure; domain=example.com; partitioned")


def test_no_samesite_attribute_when_flask_has_none(app_for: AppFactory) -> None:
    [header] = set_cookies(app_for(SESSION_COOKIE_SAMESITE=None).test_client().post("/write", json={"a": 1}))
    assert "samesite" not in header.lower()


def test_the_path_falls_back_to_application_root(app_for: AppFactory) -> None:
    [header] = set_cookies(app_for(APPLICATION_ROOT="/root").test_client().post("/write", json={"a": 1}))
    assert "; path=/root" in header


def test_flasks_types_round_trip_by_default(app_for: AppFactory) -> None:
    app = app_for()
    the_uuid, now = uuid.uuid4(), datetime.now(timezone.utc).replace(microsecond=0)

    @app.get("/typed")
    def typed() -> str:
        flask.session.update(t=(1, 2), b=b"\xff", u=the_uuid, d=now, e={" t": "not a tuple"})
        return ""

    client = app.test_client()
    client.get("/typed")
    with client:
        client.get("/plain")
        assert dict(flask.session) == {"t": (1, 2), "b": b"\xff", "u": the_uuid, "d": now, "e": {" t": "not a tuple"}}


def test_flashed_messages_keep_their_categories(app_for: AppFactory) -> None:
    app = app_for()

    @app.get("/flash")
    def flash() -> str:
        flask.flash("saved", "info")
        return ""

    @app.get("/flashes")
    def flashes() -> object:
        return repr(flask.get_flashed_messages(with_categories=True))

    @app.get("/safe")
    def safe() -> str:
        flask.flash(Markup("<em>saved</em>"))
        return ""

    @app.get("/rendered")
    def rendered() -> str:
        return flask.render_template_string("{% for m in get_flashed_messages() %}{{ m }}{% endfor %}")

    client = app.test_client()
    client.get("/flash")
    assert client.get("/flashes").text == "[('info', 'saved')]"
    assert client.get("/flashes").text == "[]"
    client.get("/safe")  # a Markup message comes back as Markup: the template does not escape it
    assert client.get("/rendered").text == "<em>saved</em>"


def test_a_tampered_cookie_gives_an_empty_session_and_a_warning(
    app_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = app_for().test_client()
    token = cookie_value(set_cookies(client.post("/write", json={"a": 1}))[0])
    client.set_cookie("session", token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    with caplog.at_level(logging.WARNING, "blake2sign_web.flask"):
        response = client.get("/read")
    assert response.status_code == 200
    assert response.json == {}
    assert "Rejected session cookie 'session'" in caplog.text
    assert token[:-2] not in caplog.text  # never the cookie's value


@pytest.mark.parametrize("cookie", ["", "x", "a.b.c", "%00", "A" * 5000, "\u00ff" * 3])
def test_malformed_cookies_never_raise(app_for: AppFactory, cookie: str) -> None:
    client = app_for().test_client(use_cookies=False)  # with its jar, Werkzeug's client drops a Cookie header given
    response = client.get("/read", headers={"Cookie": f"session={cookie}"})
    assert response.status_code == 200
    assert response.json == {}


def test_a_fallback_secret_verifies_and_the_session_is_resigned(app_for: AppFactory) -> None:
    old = make_app(SECRET_KEY=OLD_SECRET).test_client()
    token = cookie_value(set_cookies(old.post("/write", json={"a": 1}))[0])
    client = app_for(SECRET_KEY_FALLBACKS=[OLD_SECRET]).test_client()
    client.set_cookie("session", token)
    response = client.get("/read")
    assert response.json == {"a": 1}
    [header] = set_cookies(response)
    assert SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(cookie_value(header)) == {"a": 1}


def test_without_a_secret_the_session_is_flasks_null_session() -> None:
    app = make_app(SECRET_KEY=None)
    with app.test_request_context():
        assert flask.session.get("a") is None
        with pytest.raises(RuntimeError, match="session is unavailable"):
            flask.session["a"] = 1


def test_chunked_sessions_span_cookies(app_for: AppFactory) -> None:
    client = app_for(BLAKE2SIGN_WEB={"CHUNKED": True, "MAX_CHUNKS": 4, "COMPRESSION": None}).test_client()
    big = uuid.uuid4().hex * 150  # about 4.8 kB, over one cookie
    headers = set_cookies(client.post("/write", json={"big": big}))
    assert [header.split("=", 1)[0] for header in headers] == ["session", "session.1"]
    assert client.get("/read").json == {"big": big}
    deleted = set_cookies(client.post("/clear"))
    assert sorted(header.split("=", 1)[0] for header in deleted) == ["session", "session.1"]


def test_an_oversized_session_raises_by_default(app_for: AppFactory) -> None:
    app = app_for(TESTING=True, BLAKE2SIGN_WEB={"COMPRESSION": None})
    with pytest.raises(ValueError, match="over the browser limit"):
        app.test_client().post("/write", json={"big": uuid.uuid4().hex * 150})


def test_an_encrypted_session_hides_its_data(app_for: AppFactory) -> None:
    client = app_for(BLAKE2SIGN_WEB={"ENCRYPT": True}).test_client()
    [header] = set_cookies(client.post("/write", json={"secret_plan": "attack at dawn"}))
    assert "dawn" not in header
    assert client.get("/read").json == {"secret_plan": "attack at dawn"}


@pytest.mark.parametrize(
    "header",
    ["other=1; session={token}; last=2", "session={token}", ' session="{token}" ', "a=b;session={token}"],
)
def test_the_session_cookie_is_found_among_others(app_for: AppFactory, header: str) -> None:
    """The core's cookie finds the value in the raw Cookie header (no parsing of every cookie), quoted or not."""
    client = app_for().test_client()
    token = cookie_value(set_cookies(client.post("/write", json={"a": 1}))[0])
    fresh = app_for().test_client(use_cookies=False)
    assert fresh.get("/read", headers={"Cookie": header.format(token=token)}).json == {"a": 1}
