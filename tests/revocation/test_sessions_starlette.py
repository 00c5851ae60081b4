"""Starlette sessions with revocation in a real redis-server: logout, log out everywhere, outages."""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

import pytest
import redis
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.revocation import RedisStore, log_out_everywhere, revoke_session
from blake2sign_web.stores import revocation
from tests.redis_server import FROZEN_TIMEOUT, RedisServer, patient_store

SECRET = "starlette-revocation-secret-0123456789"
MAX_AGE = 3600


async def login(request: Request) -> Response:
    request.session.clear()
    request.session["user_id"] = int(request.query_params["user"])
    return PlainTextResponse("in")


async def logout(request: Request) -> Response:
    await revoke_session(request)
    return PlainTextResponse("out")


async def clear(request: Request) -> Response:
    request.session.clear()
    return PlainTextResponse("cleared")


async def whoami(request: Request) -> Response:
    return PlainTextResponse(str(request.session.get("user_id", "anonymous")))


async def slide(request: Request) -> Response:
    """Sliding expiry, as in docs/recipes/session-timeouts.md: the session is re-signed on every request."""
    request.session.mark_modified()
    return PlainTextResponse(str(request.session.get("user_id", "anonymous")))


async def everywhere(request: Request) -> Response:
    keep = request.query_params.get("keep") == "1"
    await log_out_everywhere(request, keep_current=keep)
    return PlainTextResponse("everywhere")


async def ban(request: Request) -> Response:
    await log_out_everywhere(request, int(request.query_params["user"]), keep_current=True)
    return PlainTextResponse("banned")


def build(store: RedisStore | None, **options: Any) -> Starlette:
    middleware_options: dict[str, Any] = {"secret_key": SECRET, "max_age": MAX_AGE, **options}
    if store is not None:
        middleware_options["revocation"] = store
    return Starlette(
        routes=[
            Route("/login", login),
            Route("/logout", logout),
            Route("/clear", clear),
            Route("/whoami", whoami),
            Route("/slide", slide),
            Route("/everywhere", everywhere),
            Route("/ban", ban),
        ],
        middleware=[Middleware(SessionMiddleware, **middleware_options)],
    )


def old_cookie(user_id: int, age: float = 30) -> str:
    """A real session cookie of this middleware's keys, signed ``age`` seconds ago, with a session id."""
    signer = SerializerSigner(SECRET, purpose="starlette.sessions:session", clock=lambda: time.time() - age)
    return signer.dumps({"user_id": user_id}, session_id=secrets.token_bytes(8))


class Devices:
    """Several browsers, each with its own session cookie, through one TestClient (one event loop).

    A redis.asyncio client belongs to the event loop it connected on; each TestClient runs
    its own loop, so the browsers share one client here, as requests share a server's loop.
    """

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.jars: dict[str, str] = {}

    def set(self, device: str, cookie: str) -> None:
        self.jars[device] = cookie

    def get(self, device: str, path: str, **params: Any) -> Any:
        self.client.cookies.clear()
        headers = {"cookie": f"session={self.jars[device]}"} if device in self.jars else {}
        response = self.client.get(path, params=params, headers=headers)
        self.client.cookies.clear()
        for line in response.headers.get_list("set-cookie"):
            value = line.split(";", 1)[0].partition("=")[2]
            if value == "null":  # deleted
                self.jars.pop(device, None)
            else:
                self.jars[device] = value
        return response

    def who(self, device: str) -> str:
        return str(self.get(device, "/whoami").text)


@pytest.fixture
def store(redis_server: RedisServer) -> RedisStore:
    return patient_store(redis_server)


@pytest.fixture
def devices(store: RedisStore) -> Any:
    with TestClient(build(store)) as client:
        yield Devices(client)


def test_logout_ends_a_copied_cookie(devices: Devices) -> None:
    devices.get("browser", "/login", user=7)
    devices.set("thief", devices.jars["browser"])
    assert devices.who("thief") == "7"
    assert devices.get("browser", "/logout").text == "out"
    assert devices.who("browser") == "anonymous"
    refused = devices.get("thief", "/whoami")
    assert refused.text == "anonymous"
    assert "session=null" in refused.headers["set-cookie"]  # the revoked cookie is deleted


def test_clearing_the_session_revokes_it_too(devices: Devices) -> None:
    devices.get("browser", "/login", user=7)
    devices.set("thief", devices.jars["browser"])
    devices.get("browser", "/clear")
    assert devices.who("thief") == "anonymous"


def test_login_after_clear_gets_a_new_session_id(devices: Devices) -> None:
    devices.get("browser", "/login", user=7)
    devices.set("thief", devices.jars["browser"])
    devices.get("browser", "/login", user=8)  # clear() then a new user: the old cookie is ended
    assert devices.who("browser") == "8"
    assert devices.who("thief") == "anonymous"


def test_session_id_survives_resaves() -> None:
    signer = SerializerSigner(SECRET, purpose="starlette.sessions:session")
    with TestClient(
        build(RedisStore("redis://127.0.0.1:1/0", key_prefix="tests"))
    ) as client:  # nothing to check: no cookie yet
        client.get("/login", params={"user": 7})
        first = signer.load_token(client.cookies["session"]).session_id
    assert first is not None
    assert len(first) == 8


def test_without_revocation_a_copied_cookie_outlives_logout() -> None:
    with TestClient(build(None)) as client:
        devices = Devices(client)
        devices.get("browser", "/login", user=7)
        devices.set("thief", devices.jars["browser"])
        devices.get("browser", "/clear")
        assert devices.who("thief") == "7"
        loaded = SerializerSigner(SECRET, purpose="starlette.sessions:session").load_token(devices.jars["thief"])
    assert loaded.session_id is None


def test_log_out_everywhere_keeping_this_session(devices: Devices) -> None:
    devices.set("phone", old_cookie(7))
    devices.set("laptop", old_cookie(7, age=100))
    devices.set("other user", old_cookie(8))
    assert devices.get("laptop", "/everywhere", keep="1").text == "everywhere"
    assert [devices.who("phone"), devices.who("laptop"), devices.who("other user")] == ["anonymous", "7", "8"]


def test_log_out_everywhere_including_this_session(devices: Devices) -> None:
    devices.set("phone", old_cookie(7))
    devices.set("laptop", old_cookie(7))
    devices.get("laptop", "/everywhere")
    assert [devices.who("phone"), devices.who("laptop")] == ["anonymous", "anonymous"]


def test_log_out_another_user_everywhere(devices: Devices, redis_server: RedisServer) -> None:
    devices.set("admin", old_cookie(1))
    devices.set("victim", old_cookie(42))
    response = devices.get("admin", "/ban", user=42)
    assert "set-cookie" not in response.headers  # the administrator's own session is left as it was
    assert [devices.who("victim"), devices.who("admin")] == ["anonymous", "1"]
    ttl = redis.Redis.from_url(redis_server.url).ttl(revocation.user_key(42, "tests"))
    longest = MAX_AGE + revocation.DEFAULT_CLOCK_SKEW + revocation.RECORD_MARGIN
    assert longest - 5 <= ttl <= longest  # type: ignore[operator]


def test_an_ended_session_record_outlives_the_token_by_the_clocks_margin(
    devices: Devices, redis_server: RedisServer
) -> None:
    devices.get("browser", "/login", user=7)
    devices.get("browser", "/logout")
    client = redis.Redis.from_url(redis_server.url)
    (key,) = client.keys("*:sid:*")
    longest = MAX_AGE + revocation.DEFAULT_CLOCK_SKEW + revocation.RECORD_MARGIN  # every re-signed copy ends by then
    assert longest - 5 <= client.ttl(key) <= longest  # type: ignore[operator]


def test_user_key_is_configurable(store: RedisStore) -> None:
    async def login_as(request: Request) -> Response:
        request.session["account"] = "ada"
        return PlainTextResponse("in")

    async def everywhere_for(request: Request) -> Response:
        await log_out_everywhere(request)
        return PlainTextResponse("ok")

    app = Starlette(
        routes=[Route("/in", login_as), Route("/everywhere", everywhere_for)],
        middleware=[Middleware(SessionMiddleware, secret_key=SECRET, revocation=store, user_key="account")],
    )
    with TestClient(app) as client:
        client.get("/in")
        assert client.get("/everywhere").text == "ok"


def test_one_round_trip_per_request(store: RedisStore, redis_server: RedisServer) -> None:
    app = build(store)
    with TestClient(app) as browser:
        browser.get("/login", params={"user": 7})
        assert browser.get("/whoami").text == "7"  # connects (HELLO): later requests reuse the connection
        redis_server.command("CONFIG", "RESETSTAT")
        assert browser.get("/whoami").text == "7"
        stats = redis_server.command("INFO", "commandstats").decode()
    calls = {line.split(":")[0].split("|")[0]: line for line in stats.splitlines() if line.startswith("cmdstat_")}
    assert set(calls) <= {"cmdstat_mget", "cmdstat_config", "cmdstat_info"}
    assert "calls=1," in calls["cmdstat_mget"]


def test_redis_down_reads_an_empty_session_and_keeps_the_cookie(
    own_redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    app = build(patient_store(own_redis_server))
    with TestClient(app) as browser:
        browser.get("/login", params={"user": 7})
        own_redis_server.stop()
        with caplog.at_level(logging.ERROR, logger="blake2sign_web.revocation"):
            down = browser.get("/whoami")
        own_redis_server.start()
        back = browser.get("/whoami")
    assert down.text == "anonymous"
    assert "set-cookie" not in down.headers
    assert "Session read as empty" in caplog.text
    assert back.text == "7"


def test_hung_redis_reads_an_empty_session(own_redis_server: RedisServer) -> None:
    app = build(RedisStore(own_redis_server.url, timeout=FROZEN_TIMEOUT, key_prefix="tests"))
    with TestClient(app) as browser:
        browser.get("/login", params={"user": 7})
        own_redis_server.pause()
        try:
            frozen = browser.get("/whoami").text
        finally:
            own_redis_server.resume()
        assert browser.get("/whoami").text == "7"
    assert frozen == "anonymous"


def test_redis_down_fails_open_when_asked(own_redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    app = build(patient_store(own_redis_server, on_unavailable="open"))
    with TestClient(app) as browser:
        browser.get("/login", params={"user": 7})
        own_redis_server.stop()
        with caplog.at_level(logging.ERROR, logger="blake2sign_web.revocation"):
            assert browser.get("/whoami").text == "7"
    assert "accepted unchecked" in caplog.text


def test_revocation_needs_an_end_to_sessions(store: RedisStore) -> None:
    with pytest.raises(ValueError, match="revocation needs max_age"):
        SessionMiddleware(build(None), secret_key=SECRET, max_age=None, revocation=store)
    with pytest.raises(ValueError, match="revocation needs format=2"):
        SessionMiddleware(build(None), secret_key=SECRET, format=1, revocation=store)
    with pytest.raises(ValueError, match="RedisStore clock_skew must be a number of seconds from 0 to 600"):
        RedisStore("redis://127.0.0.1:1/0", clock_skew=-1)
    with pytest.raises(TypeError, match="revocation must be a RedisStore"):
        SessionMiddleware(build(None), secret_key=SECRET, revocation="redis://x")  # type: ignore[arg-type]


def test_helpers_without_revocation_say_how_to_turn_it_on() -> None:
    async def endpoint(request: Request) -> Response:
        await revoke_session(request)
        return PlainTextResponse("never")

    app = Starlette(routes=[Route("/", endpoint)], middleware=[Middleware(SessionMiddleware, secret_key=SECRET)])
    with TestClient(app) as client, pytest.raises(RuntimeError, match="revocation=RedisStore"):
        client.get("/")


@pytest.mark.parametrize("path", ["/slide", "/set"])
def test_a_request_while_redis_is_down_never_overwrites_the_session(own_redis_server: RedisServer, path: str) -> None:
    """Sliding expiry (mark_modified) or a write: the session read as empty is not signed over the client's."""

    async def set_something(request: Request) -> Response:
        request.session["cart"] = 1
        return PlainTextResponse("set")

    app = build(patient_store(own_redis_server))
    app.router.routes.append(Route("/set", set_something))
    with TestClient(app) as client:
        devices = Devices(client)
        devices.get("browser", "/login", user=7)
        before = devices.jars["browser"]
        own_redis_server.stop()
        response = devices.get("browser", path)
        assert response.status_code == 200
        assert "set-cookie" not in response.headers
        own_redis_server.start()
        assert devices.who("browser") == "7"
    assert devices.jars["browser"] == before


def test_logging_out_while_redis_is_down_deletes_the_cookie(own_redis_server: RedisServer) -> None:
    """request.session.clear() on a session read as empty (Redis down) still deletes the client's cookie."""
    app = build(patient_store(own_redis_server))
    with TestClient(app) as client:
        devices = Devices(client)
        devices.get("browser", "/login", user=7)
        own_redis_server.stop()
        response = devices.get("browser", "/clear")
        own_redis_server.start()
    assert response.text == "cleared"
    assert "session=null" in response.headers["set-cookie"]
    assert "browser" not in devices.jars


def test_logging_in_while_redis_is_down_starts_a_new_session(own_redis_server: RedisServer) -> None:
    app = build(patient_store(own_redis_server))
    with TestClient(app) as client:
        devices = Devices(client)
        devices.get("browser", "/login", user=7)
        own_redis_server.stop()
        devices.get("browser", "/login", user=8)  # clear(), then the new user: a session of its own
        own_redis_server.start()
        assert devices.who("browser") == "8"


def _remaining(redis_server: RedisServer, pattern: str) -> float:
    client = redis.Redis.from_url(redis_server.url)
    (key,) = client.keys(pattern)
    return client.pttl(key) / 1000  # type: ignore[operator, no-any-return]


def test_a_copy_re_signed_before_logout_never_outlives_the_record(devices: Devices, redis_server: RedisServer) -> None:
    """Review 4: the record was kept for the presented cookie's remaining life, and a thief's copy that kept
    sliding ended later: once the record expired, the copy read as the victim again."""
    devices.set("victim", old_cookie(7, age=MAX_AGE - 100))  # a cookie with 100 s left
    devices.jars["thief"] = devices.jars["victim"]
    assert devices.get("thief", "/slide").text == "7"  # re-signed now: this copy ends MAX_AGE from now
    thief_ends = SerializerSigner(SECRET, purpose="starlette.sessions:session").load_token(devices.jars["thief"])
    assert devices.get("victim", "/logout").text == "out"
    left = _remaining(redis_server, "*:sid:*")
    copy_left = (thief_ends.issued_at + MAX_AGE) - time.time()
    assert left >= copy_left + revocation.DEFAULT_CLOCK_SKEW  # was about 100 + 60 s against the copy's 3,600
    assert devices.who("thief") == "anonymous"


def test_a_login_right_after_log_out_everywhere_sticks(devices: Devices) -> None:
    """Review 4: sessions issued up to the cut-off plus the clock skew were refused, new logins included."""
    devices.get("laptop", "/login", user=42)
    devices.set("ahead", old_cookie(42, age=-60))  # signed by a server whose clock runs a minute ahead
    devices.get("admin", "/login", user=1)
    assert devices.get("admin", "/ban", user=42).text == "banned"
    assert [devices.who("laptop"), devices.who("ahead")] == ["anonymous", "anonymous"]
    devices.get("phone", "/login", user=42)
    assert [devices.who("phone"), devices.who("phone")] == ["42", "42"]  # was anonymous for the skew's 5 s
    assert devices.get("phone", "/slide").text == "42"  # re-signed, still this generation
    devices.get("admin", "/ban", user=42)
    assert devices.who("phone") == "anonymous"


def test_the_generation_is_the_middlewares_own_key(devices: Devices, redis_server: RedisServer) -> None:
    async def keys(request: Request) -> Response:
        return PlainTextResponse(",".join(sorted(request.session)))

    devices.get("admin", "/login", user=1)
    devices.get("admin", "/ban", user=42)
    devices.get("phone", "/login", user=42)
    app = devices.client.app
    app.router.routes.append(Route("/keys", keys))  # type: ignore[attr-defined]
    assert devices.get("phone", "/keys").text == "user_id"
    token = SerializerSigner(SECRET, purpose="starlette.sessions:session").loads(devices.jars["phone"])
    record = redis.Redis.from_url(redis_server.url).get(revocation.user_key(42, "tests"))
    assert record.startswith(b"g:" + token[revocation.GENERATION_KEY].encode() + b":")  # type: ignore[union-attr]


def test_set_expiry_longer_than_max_age_is_refused_with_revocation(store: RedisStore) -> None:
    async def long(request: Request) -> Response:
        request.session.set_expiry(MAX_AGE + 1)
        return PlainTextResponse("long")

    app = build(store)
    app.router.routes.append(Route("/long", long))
    with TestClient(app) as client, pytest.raises(ValueError, match=r"longer than max_age \(3600 seconds\)"):
        client.get("/long")


def test_revocation_needs_a_key_prefix() -> None:
    with pytest.raises(ValueError, match=r"revocation needs RedisStore\(\.\.\., key_prefix="):
        SessionMiddleware(build(None), secret_key=SECRET, revocation=RedisStore("redis://127.0.0.1:1/0"))


async def fill(request: Request) -> Response:
    request.session["cart"] = [1, 2]
    return PlainTextResponse("filled")


async def cart(request: Request) -> Response:
    return PlainTextResponse(str(request.session.get("cart", "empty")))


async def kept_then_cleared(request: Request) -> Response:
    """An anonymous visitor's request logs user 7 out everywhere (its session kept, with a new id), then ends it."""
    await log_out_everywhere(request, 7, keep_current=True)
    request.session.clear()
    return PlainTextResponse("done")


def test_a_session_kept_through_log_out_everywhere_then_cleared_ends_the_cookies_own_session(
    store: RedisStore,
) -> None:
    """keep() gives the next token a new id: clearing must still end the id the client's cookie (and copies) carry."""
    app = build(store)
    app.router.routes.extend(
        [Route("/fill", fill), Route("/cart", cart), Route("/kept-then-cleared", kept_then_cleared)]
    )
    with TestClient(app) as client:
        devices = Devices(client)
        devices.get("browser", "/fill")
        devices.set("copy", devices.jars["browser"])
        assert devices.get("copy", "/cart").text == "[1, 2]"
        assert devices.get("browser", "/kept-then-cleared").text == "done"
        assert devices.get("copy", "/cart").text == "empty"
