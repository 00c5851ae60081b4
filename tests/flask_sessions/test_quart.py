"""QuartSessions through Quart's real test client: the Flask adapter's behaviour on Quart's async contract."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import quart

from blake2sign_web import SerializerSigner
from blake2sign_web.flask import QuartSessions

from .conftest import SECRET, cookie_value

PURPOSE = "flask.sessions:session"


def make_app(**config: Any) -> quart.Quart:
    app = quart.Quart(__name__)
    app.config.update({"SECRET_KEY": SECRET, **config})
    QuartSessions(app)

    @app.get("/read")
    async def read() -> Any:
        return dict(quart.session)

    @app.post("/write")
    async def write() -> Any:
        quart.session.update(await quart.request.get_json())
        return dict(quart.session)

    @app.post("/permanent")
    async def permanent() -> str:
        quart.session.permanent = True
        return ""

    @app.post("/clear")
    async def clear() -> str:
        quart.session.clear()
        return ""

    @app.get("/plain")
    async def plain() -> str:
        return "no session here"

    return app


def run(steps: Callable[[Any], Awaitable[None]], **config: Any) -> None:
    async def main() -> None:
        await steps(make_app(**config).test_client())

    asyncio.run(main())


def set_cookies(response: Any) -> list[str]:
    return list(response.headers.getlist("Set-Cookie"))


def test_a_session_is_written_read_back_and_varied() -> None:
    async def steps(client: Any) -> None:
        response = await client.post("/write", json={"user_id": 42, "cart": [1, 2]})
        [header] = set_cookies(response)
        assert "Max-Age" not in header  # not permanent: a browser-session cookie
        assert response.headers["Vary"] == "Cookie"
        token = cookie_value(header)
        assert SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(token) == {"user_id": 42, "cart": [1, 2]}
        read = await client.get("/read")
        assert await read.get_json() == {"user_id": 42, "cart": [1, 2]}
        assert set_cookies(read) == []
        assert read.headers["Vary"] == "Cookie"  # Quart marks nothing: the session's reads do
        plain = await client.get("/plain")
        assert "Vary" not in plain.headers

    run(steps)


def test_a_permanent_session_and_clear() -> None:
    async def steps(client: Any) -> None:
        await client.post("/write", json={"a": 1})
        [header] = set_cookies(await client.post("/permanent"))
        assert "Max-Age=600" in header
        [deleted] = set_cookies(await client.post("/clear"))
        assert deleted.startswith("session=; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT")
        assert await (await client.get("/read")).get_json() == {}

    run(steps, PERMANENT_SESSION_LIFETIME=600)


def test_a_bad_cookie_is_an_empty_session() -> None:
    async def steps(client: Any) -> None:
        response = await client.get("/read", headers={"Cookie": "session=" + uuid.uuid4().hex})
        assert response.status_code == 200
        assert await response.get_json() == {}

    run(steps)


def test_a_bad_configuration_fails_at_init_app() -> None:
    app = quart.Quart(__name__)
    app.config.update(SECRET_KEY=SECRET, SESSION_COOKIE_SAMESITE="None")
    with pytest.raises(ValueError, match="SESSION_COOKIE_SECURE = True"):
        QuartSessions(app)


def test_every_cookie_header_is_read() -> None:
    """Quart's test client sends one Cookie header per cookie (as HTTP/2 clients do): the session's may be any."""

    async def steps(client: Any) -> None:
        token = cookie_value(set_cookies(await client.post("/write", json={"user_id": 7}))[0])
        client.cookie_jar.clear()
        from werkzeug.datastructures import Headers

        for headers in (
            [("Cookie", "theme=dark"), ("Cookie", f"session={token}")],
            [("Cookie", f"session={token}"), ("Cookie", "theme=dark")],
            [("Cookie", "theme=dark; lang=en"), ("Cookie", f"session={token}; other=1")],
        ):
            assert await (await client.get("/read", headers=Headers(headers))).get_json() == {"user_id": 7}
        forged_last = Headers([("Cookie", f"session={token}"), ("Cookie", "session=forged")])
        assert await (await client.get("/read", headers=forged_last)).get_json() == {}  # the last wins

    run(steps)


def test_a_session_kept_beside_other_cookies_and_session_transaction() -> None:
    """Another cookie ahead of the session's in the jar: the session still reads, and is not replaced."""

    async def steps(client: Any) -> None:
        client.set_cookie("localhost", "aaa", "first")
        await client.post("/write", json={"user_id": 7})
        await client.post("/write", json={"cart": [1]})
        assert await (await client.get("/read")).get_json() == {"user_id": 7, "cart": [1]}
        async with client.session_transaction() as session:
            assert session["user_id"] == 7
            session["step"] = 2
        assert await (await client.get("/read")).get_json() == {"user_id": 7, "cart": [1], "step": 2}

    run(steps)


def test_a_session_modified_in_a_websocket_is_an_error_on_app_logger(caplog: pytest.LogCaptureFixture) -> None:
    """As Quart's own interface says it: on app.logger, which Quart prints by default."""
    app = make_app()

    @app.websocket("/ws")
    async def ws() -> None:
        quart.session["seen"] = True
        await quart.websocket.send("hi")

    async def main() -> None:
        async with app.test_client().websocket("/ws") as socket:
            assert await socket.receive() == "hi"

    with caplog.at_level("ERROR", logger=app.logger.name):
        asyncio.run(main())
    assert [(r.name, r.getMessage()) for r in caplog.records if r.levelname == "ERROR"] == [
        (app.logger.name, "Session modified during websocket handling: the changes are lost (no cookie to set)")
    ]
