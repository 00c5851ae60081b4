"""Revocation with FlaskSessions, in a real redis-server: logout ends a copied cookie, "log out everywhere"
ends the user's sessions and not a later login; configuration errors name the Flask setting.

The shared behaviour is the conformance suite's (tests/conformance/test_revocation.py runs the Flask driver);
these are the Flask API's own: ``revoke_session()``, ``log_out_everywhere()``, ``RedisStore``'s checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import flask
import pytest

from blake2sign_web.flask import FlaskSessions
from blake2sign_web.flask.revocation import RedisStore, log_out_everywhere, revoke_session
from tests.redis_server import RedisServer, redis_server_fixture

from .conftest import SECRET


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


def revocable_app(url: str) -> flask.Flask:
    app = flask.Flask(__name__)
    store = RedisStore(url, key_prefix="flask-tests")
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": store})
    FlaskSessions(app)

    @app.post("/login/<user>")
    def login(user: str) -> str:
        flask.session["_user_id"] = user  # what Flask-Login stores
        return ""

    @app.get("/me")
    def me() -> Any:
        return {"user": flask.session.get("_user_id")}

    @app.post("/logout")
    def logout() -> str:
        revoke_session()
        return ""

    @app.post("/everywhere")
    def everywhere() -> str:
        log_out_everywhere()
        return ""

    return app


def cookie_of(response: Any) -> str:
    return str(response.headers["Set-Cookie"].split(";", 1)[0].split("=", 1)[1])


def me(app: flask.Flask, cookie: str) -> Any:
    return app.test_client(use_cookies=False).get("/me", headers={"Cookie": f"session={cookie}"}).json


def test_logout_ends_every_copy_of_the_cookie(redis_server: RedisServer) -> None:
    redis_server.flush()
    app = revocable_app(redis_server.url)
    client = app.test_client(use_cookies=False)
    copy = cookie_of(client.post("/login/ada"))
    assert me(app, copy) == {"user": "ada"}
    deleted = client.post("/logout", headers={"Cookie": f"session={copy}"})
    assert deleted.headers["Set-Cookie"].startswith("session=;")
    assert me(app, copy) == {"user": None}  # the copy an attacker kept is refused


def test_log_out_everywhere_ends_the_users_sessions_and_not_a_later_login(redis_server: RedisServer) -> None:
    redis_server.flush()
    app = revocable_app(redis_server.url)
    client = app.test_client(use_cookies=False)
    phone, laptop = cookie_of(client.post("/login/ada")), cookie_of(client.post("/login/ada"))
    other = cookie_of(client.post("/login/bob"))
    client.post("/everywhere", headers={"Cookie": f"session={laptop}"})
    assert me(app, phone) == {"user": None}
    assert me(app, laptop) == {"user": None}
    assert me(app, other) == {"user": "bob"}
    later = cookie_of(client.post("/login/ada"))
    assert me(app, later) == {"user": "ada"}


def test_the_store_down_reads_the_session_as_empty_and_keeps_its_cookie(redis_server: RedisServer) -> None:
    redis_server.flush()
    app = revocable_app(redis_server.url)
    cookie = cookie_of(app.test_client(use_cookies=False).post("/login/ada"))
    redis_server.stop()
    try:
        response = app.test_client(use_cookies=False).get("/me", headers={"Cookie": f"session={cookie}"})
        assert response.json == {"user": None}  # "closed": unchecked is refused
        assert "Set-Cookie" not in response.headers  # the cookie is kept: the session comes back with the store
    finally:
        redis_server.start()
    assert me(app, cookie) == {"user": "ada"}


@pytest.mark.parametrize(
    ("store", "error", "message"),
    [
        ("redis://127.0.0.1:1/0", TypeError, r"BLAKE2SIGN_WEB\['REVOCATION'\] must be a RedisStore, not str"),
        (RedisStore("redis://127.0.0.1:1/0"), ValueError, r"RedisStore\(\.\.\., key_prefix='<this site>'\)"),
    ],
)
def test_a_revocation_store_that_cannot_work_stops_init_app(store: object, error: type, message: str) -> None:
    app = flask.Flask(__name__)
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": store})
    with pytest.raises(error, match=message):
        FlaskSessions(app)


def test_revoke_session_without_a_store_says_what_to_set() -> None:
    app = flask.Flask(__name__)
    app.config["SECRET_KEY"] = SECRET
    FlaskSessions(app)
    with app.test_request_context(), pytest.raises(RuntimeError, match=r"\['REVOCATION'\] = RedisStore"):
        revoke_session()
