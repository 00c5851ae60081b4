"""A request's session is verified and decoded when it is first used, on Flask and on Quart (as under Starlette),
when SESSION_REFRESH_EACH_REQUEST is off: a request that never uses it does not verify its cookie, so neither logs
a bad one nor re-issues one; a used session behaves as it always did. With it on (Flask's default), Flask's contract
re-issues a permanent session's cookie on every response, so the cookie is read on every request, as before. And
the configuration follows app.config, changed between requests."""

from __future__ import annotations

import asyncio
from typing import Any

import flask
import pytest
import quart

from blake2sign_web import SerializerSigner

from . import test_quart
from .conftest import OLD_SECRET, SECRET, make_app, set_cookies

PURPOSE = "flask.sessions:session"
#: The config under which a session is read when first used.
LAZY = {"SESSION_REFRESH_EACH_REQUEST": False}
REJECTED = "Rejected session cookie 'session'"
FORGED = "QaxU0dQEgk40CAKPFDhPplVNqqrcUelwa4e4_9fbp7PnYLVXRrQWVc3Kua8sjg_2vr6L"


def old_cookie(data: dict[str, Any]) -> str:
    """A cookie signed with the secret now a fallback."""
    return SerializerSigner(OLD_SECRET, purpose=PURPOSE, typed=True).dumps(data)


def test_a_bad_cookie_on_a_request_that_never_uses_the_session_is_not_read(caplog: pytest.LogCaptureFixture) -> None:
    client = make_app(**LAZY).test_client()
    client.set_cookie("session", FORGED)
    with caplog.at_level("WARNING", logger="blake2sign_web.flask"):
        response = client.get("/plain")
        assert REJECTED not in caplog.text  # not verified: nothing to reject
        assert set_cookies(response) == []
        assert "Vary" not in response.headers
        used = client.get("/read")
    assert used.json == {}
    assert caplog.text.count(REJECTED) == 1  # verified when used, and refused as before
    assert used.headers["Vary"] == "Cookie"


@pytest.mark.parametrize("config", [LAZY, {}], ids=["lazy", "refresh on"])
def test_a_used_session_reads_as_before_after_an_unused_request(config: dict[str, Any]) -> None:
    client = make_app(**config).test_client()
    client.post("/write", json={"user_id": 42})
    assert set_cookies(client.get("/plain")) == []
    read = client.get("/read")
    assert read.json == {"user_id": 42}
    assert set_cookies(read) == []


def test_a_cookie_of_a_fallback_secret_is_re_signed_when_used_not_before() -> None:
    app = make_app(SECRET_KEY_FALLBACKS=[OLD_SECRET], **LAZY)
    seen: list[bool] = []

    @app.get("/modified")
    def modified() -> Any:
        value = flask.session.get("a")
        seen.append(flask.session.modified)  # the application's: it changed nothing
        return {"a": value}

    client = app.test_client()
    client.set_cookie("session", old_cookie({"a": 1}))
    assert set_cookies(client.get("/plain")) == []
    used = client.get("/modified")
    assert used.json == {"a": 1}
    assert seen == [False]
    [header] = set_cookies(used)  # re-signed under the current secret
    value = header.split(";", 1)[0].split("=", 1)[1]
    assert SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(value) == {"a": 1}


def test_a_permanent_session_is_refreshed_on_every_response_as_flasks_contract_says() -> None:
    """SESSION_REFRESH_EACH_REQUEST (Flask's default): a permanent session's cookie is re-issued by a request that
    never touches it, with Vary: Cookie (Flask's own suite, test_session_refresh_vary, asks it too)."""
    client = make_app(PERMANENT_SESSION_LIFETIME=3600).test_client()
    client.post("/write", json={"a": 1})
    client.post("/permanent", json=True)
    plain = client.get("/plain")
    [again] = set_cookies(plain)
    assert "Max-Age=3600" in again
    assert plain.headers["Vary"] == "Cookie"


def test_without_refresh_a_permanent_session_unused_is_not_read() -> None:
    client = make_app(PERMANENT_SESSION_LIFETIME=3600, **LAZY).test_client()
    client.post("/write", json={"a": 1})
    client.post("/permanent", json=True)
    assert set_cookies(client.get("/plain")) == []
    assert "Vary" not in client.get("/plain").headers


def test_permanent_read_before_any_other_use_loads_the_session() -> None:
    app = make_app()

    @app.get("/is-permanent")
    def is_permanent() -> Any:
        return {"permanent": flask.session.permanent}

    client = app.test_client()
    client.post("/write", json={"a": 1})
    client.post("/permanent", json=True)
    assert client.get("/is-permanent").json == {"permanent": True}


def test_quart_a_bad_cookie_is_read_only_when_the_session_is_used(caplog: pytest.LogCaptureFixture) -> None:
    async def steps(client: Any) -> None:
        client.set_cookie("localhost", "session", FORGED)
        response = await client.get("/plain")
        assert REJECTED not in caplog.text
        assert test_quart.set_cookies(response) == []
        assert "Vary" not in response.headers
        used = await client.get("/read")
        assert await used.get_json() == {}
        assert caplog.text.count(REJECTED) == 1
        assert used.headers["Vary"] == "Cookie"

    with caplog.at_level("WARNING", logger="blake2sign_web.flask"):
        test_quart.run(steps, **LAZY)


def test_quart_a_session_written_then_read_after_an_unused_request() -> None:
    async def steps(client: Any) -> None:
        await client.post("/write", json={"user_id": 7})
        assert test_quart.set_cookies(await client.get("/plain")) == []
        read = await client.get("/read")
        assert await read.get_json() == {"user_id": 7}
        assert read.headers["Vary"] == "Cookie"

    test_quart.run(steps, **LAZY)


def test_quart_several_cookie_headers_are_one_header() -> None:
    """HTTP/2 clients (and Quart's test client) send a Cookie header per cookie: the session's is found in any."""
    app = test_quart.make_app()
    token = SerializerSigner(SECRET, purpose=PURPOSE, typed=True).dumps({"a": 1})

    async def main() -> None:
        client = app.test_client()
        headers = [("Cookie", "other=1"), ("Cookie", f"session={token}")]
        response = await client.get("/read", headers=quart.datastructures.Headers(headers))  # type: ignore[attr-defined]
        assert await response.get_json() == {"a": 1}

    asyncio.run(main())


# --- app.config changed between requests ----------------------------------------------------------------------


def test_a_fallback_added_in_place_is_used_on_the_next_request() -> None:
    app = make_app(SECRET_KEY_FALLBACKS=[])
    client = app.test_client()
    client.set_cookie("session", old_cookie({"a": 1}))
    assert client.get("/read").json == {}
    app.config["SECRET_KEY_FALLBACKS"].append(OLD_SECRET)  # the same list, changed
    assert client.get("/read").json == {"a": 1}


def test_the_blake2sign_web_dict_changed_in_place_is_used_on_the_next_request() -> None:
    app = make_app(BLAKE2SIGN_WEB={}, TESTING=True)
    client = app.test_client()
    client.post("/write", json={"a": 1})
    assert client.get("/read").json == {"a": 1}
    app.config["BLAKE2SIGN_WEB"]["IDLE_TIMEOUT"] = 0  # the same dict, changed: refused as a setting
    with pytest.raises(ValueError, match="IDLE_TIMEOUT"):
        client.get("/read")


def test_a_new_cookie_name_is_used_on_the_next_request() -> None:
    app = make_app()
    client = app.test_client()
    assert set_cookies(client.post("/write", json={"a": 1}))[0].startswith("session=")
    app.config["SESSION_COOKIE_NAME"] = "other"
    assert client.get("/read").json == {}  # the old cookie is not this configuration's
    assert set_cookies(client.post("/write", json={"b": 2}))[0].startswith("other=")
    app.config["SESSION_COOKIE_NAME"] = "session"  # back: the configuration built first
    assert client.get("/read").json == {"a": 1}


def test_two_apps_on_one_interface_keep_their_own_configuration() -> None:
    from blake2sign_web.flask import FlaskSessions

    interface = FlaskSessions()
    first, second = make_app(), make_app(SESSION_COOKIE_NAME="second")
    first.session_interface = second.session_interface = interface
    one, two = first.test_client(), second.test_client()
    for _ in range(2):  # alternating
        assert set_cookies(one.post("/write", json={"a": 1}))[0].startswith("session=")
        assert set_cookies(two.post("/write", json={"a": 1}))[0].startswith("second=")


def test_a_config_updated_as_a_whole_is_used_on_the_next_request() -> None:
    app = make_app()
    client = app.test_client()
    assert "samesite" not in set_cookies(client.post("/write", json={"a": 1}))[0]
    app.config.update(SESSION_COOKIE_SAMESITE="Strict")  # (the config counts its changes: this one is seen)
    assert "; samesite=Strict" in set_cookies(client.post("/write", json={"a": 2}))[0]
    app.secret_key = OLD_SECRET  # Flask's attribute, its config's key
    assert client.get("/read").json == {}  # signed with the other secret


def test_the_config_stays_flasks_and_pickles() -> None:
    import pickle

    app = make_app(SESSION_COOKIE_NAME="kept")
    assert isinstance(app.config, flask.Config)
    copied = pickle.loads(pickle.dumps(app.config))
    assert copied["SESSION_COOKIE_NAME"] == "kept"
    assert isinstance(copied, flask.Config)


def test_an_applications_own_config_class_is_compared_by_its_values() -> None:
    class OwnConfig(flask.Config):
        pass

    class OwnApp(flask.Flask):
        config_class = OwnConfig

    from blake2sign_web.flask import FlaskSessions

    app = OwnApp(__name__)
    app.config.update(SECRET_KEY=SECRET)
    FlaskSessions(app)

    @app.post("/write")
    def write() -> str:
        flask.session["a"] = 1
        return ""

    assert type(app.config) is OwnConfig  # left as it is
    client = app.test_client()
    assert set_cookies(client.post("/write"))[0].startswith("session=")
    app.config["SESSION_COOKIE_NAME"] = "own"
    assert set_cookies(client.post("/write"))[0].startswith("own=")


def test_quart_a_config_change_is_used_on_the_next_request() -> None:
    app = test_quart.make_app()

    async def main() -> None:
        client = app.test_client()
        assert test_quart.set_cookies(await client.post("/write", json={"a": 1}))[0].startswith("session=")
        app.config["SESSION_COOKIE_NAME"] = "other"
        assert test_quart.set_cookies(await client.post("/write", json={"a": 1}))[0].startswith("other=")

    asyncio.run(main())
    assert isinstance(app.config, quart.Config)
