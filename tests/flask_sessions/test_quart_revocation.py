"""Revocation with QuartSessions, through Quart's test client and a real redis-server: the store (the core's
``AsyncRedisStore``) is awaited. Logout ends every copy of the cookie, "log out everywhere" the user's sessions
and not a later login, an ended cookie reads as empty, a store that is down reads it as empty (fail closed).
The kind of store each interface needs is checked at start-up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import flask
import pytest
import quart

from blake2sign_web.flask import FlaskSessions, QuartSessions
from blake2sign_web.flask import revocation as flask_revocation
from blake2sign_web.flask.quart import RedisStore, log_out_everywhere, revoke_session
from tests.redis_server import RedisServer, redis_server_fixture

from .conftest import SECRET


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


def revocable_app(url: str, **options: Any) -> quart.Quart:
    app = quart.Quart(__name__)
    store = RedisStore(url, key_prefix="quart-tests", **options)
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": store})
    QuartSessions(app)

    @app.post("/login/<user>")
    async def login(user: str) -> str:
        quart.session["_user_id"] = user
        return ""

    @app.get("/me")
    async def me() -> Any:
        return {"user": quart.session.get("_user_id")}

    @app.post("/logout")
    async def logout() -> str:
        await revoke_session()
        return ""

    @app.post("/everywhere")
    async def everywhere() -> str:
        await log_out_everywhere(keep_current=quart.request.args.get("keep") == "1")
        return ""

    return app


def run(url: str, steps: Callable[[quart.Quart, Any], Awaitable[None]], **options: Any) -> None:
    async def main() -> None:
        app = revocable_app(url, **options)
        await steps(app, app.test_client(use_cookies=False))

    asyncio.run(main())


def cookie_of(response: Any) -> str:
    return str(response.headers["Set-Cookie"].split(";", 1)[0].split("=", 1)[1])


async def me(client: Any, cookie: str) -> Any:
    return await (await client.get("/me", headers={"Cookie": f"session={cookie}"})).get_json()


async def login(client: Any, user: str) -> str:
    return cookie_of(await client.post(f"/login/{user}"))


def test_logout_ends_every_copy_of_the_cookie(redis_server: RedisServer) -> None:
    redis_server.flush()

    async def steps(app: quart.Quart, client: Any) -> None:
        copy = await login(client, "ada")
        assert await me(client, copy) == {"user": "ada"}
        deleted = await client.post("/logout", headers={"Cookie": f"session={copy}"})
        assert deleted.headers["Set-Cookie"].startswith("session=;")
        assert await me(client, copy) == {"user": None}  # the copy an attacker kept is refused

    run(redis_server.url, steps)


def test_clearing_the_session_ends_it_too(redis_server: RedisServer) -> None:
    redis_server.flush()

    async def steps(app: quart.Quart, client: Any) -> None:
        @app.post("/clear")
        async def clear() -> str:
            quart.session.clear()
            return ""

        copy = await login(client, "ada")
        await client.post("/clear", headers={"Cookie": f"session={copy}"})
        assert await me(client, copy) == {"user": None}

    run(redis_server.url, steps)


def test_log_out_everywhere_ends_the_users_sessions_and_not_a_later_login(redis_server: RedisServer) -> None:
    redis_server.flush()

    async def steps(app: quart.Quart, client: Any) -> None:
        phone, laptop, other = await login(client, "ada"), await login(client, "ada"), await login(client, "bob")
        await client.post("/everywhere", headers={"Cookie": f"session={laptop}"})
        assert [await me(client, c) for c in (phone, laptop, other)] == [
            {"user": None},
            {"user": None},
            {"user": "bob"},
        ]
        later = await login(client, "ada")
        assert await me(client, later) == {"user": "ada"}

    run(redis_server.url, steps)


def test_log_out_everywhere_can_keep_the_current_session(redis_server: RedisServer) -> None:
    redis_server.flush()

    async def steps(app: quart.Quart, client: Any) -> None:
        phone, laptop = await login(client, "ada"), await login(client, "ada")
        kept = cookie_of(await client.post("/everywhere?keep=1", headers={"Cookie": f"session={laptop}"}))
        assert [await me(client, c) for c in (phone, laptop, kept)] == [{"user": None}, {"user": None}, {"user": "ada"}]

    run(redis_server.url, steps)


def test_the_store_down_reads_the_session_as_empty_and_keeps_its_cookie(redis_server: RedisServer) -> None:
    redis_server.flush()

    async def steps(app: quart.Quart, client: Any) -> None:
        cookie = await login(client, "ada")
        redis_server.stop()
        try:
            response = await client.get("/me", headers={"Cookie": f"session={cookie}"})
            assert await response.get_json() == {"user": None}  # "closed": unchecked is refused
            assert "Set-Cookie" not in response.headers  # the cookie is kept: the session comes back with the store
            response = await client.get("/me", headers={"Cookie": f"session={cookie}"})
            assert response.status_code == 200
        finally:
            redis_server.start()
        assert await me(client, cookie) == {"user": "ada"}

    run(redis_server.url, steps, timeout=0.5)


def test_quart_refuses_the_blocking_store_and_flask_the_asyncio_one() -> None:
    app = quart.Quart(__name__)
    blocking = flask_revocation.RedisStore("redis://127.0.0.1:1/0", key_prefix="x")
    app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": blocking})
    words = r'app\.config\["BLAKE2SIGN_WEB"\]\["REVOCATION"\] is a blocking store .*QuartSessions needs an asyncio one'
    with pytest.raises(TypeError, match=words + r", blake2sign_web\.flask\.quart\.RedisStore\("):
        QuartSessions(app)
    flask_app = flask.Flask(__name__)
    flask_app.config.update(SECRET_KEY=SECRET, BLAKE2SIGN_WEB={"REVOCATION": RedisStore("redis://127.0.0.1:1/0")})
    words = r"is an asyncio store .*FlaskSessions needs a blocking one, blake2sign_web\.flask\.revocation\.RedisStore\("
    with pytest.raises(TypeError, match=words):
        FlaskSessions(flask_app)


@pytest.mark.parametrize("helper", ["revoke_session", "log_out_everywhere"])
def test_quarts_helper_in_a_flask_view_fails_loudly(helper: str) -> None:
    """Called in a Flask view, Quart's helper used to return a coroutine nobody awaited: a 200, the user still in."""
    app = flask.Flask(__name__)
    app.config.update(SECRET_KEY=SECRET, TESTING=True)
    FlaskSessions(app)
    quarts = {"revoke_session": revoke_session, "log_out_everywhere": log_out_everywhere}[helper]

    @app.post("/logout")
    def logout() -> str:
        quarts()
        return "out"

    with pytest.raises(RuntimeError, match=rf"in a Flask view, call blake2sign_web\.flask\.revocation\.{helper}\(\)"):
        app.test_client().post("/logout")


@pytest.mark.parametrize("helper", ["revoke_session", "log_out_everywhere"])
def test_flasks_helper_in_a_quart_view_fails_naming_quarts(helper: str) -> None:
    app = quart.Quart(__name__)
    app.config.update(SECRET_KEY=SECRET, TESTING=True)
    QuartSessions(app)
    flasks = getattr(flask_revocation, helper)

    @app.post("/logout")
    async def logout() -> str:
        flasks()
        return "out"

    async def main() -> tuple[int, str]:
        try:
            response = await app.test_client().post("/logout")
        except RuntimeError as error:  # Quart 0.20 raises it to the test client under TESTING; later ones answer 500
            return 500, str(error)
        return response.status_code, (await response.get_data()).decode()

    status, page = asyncio.run(main())
    assert status == 500
    assert f"in a Quart view, await blake2sign_web.flask.quart.{helper}()" in page
