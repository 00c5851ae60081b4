""" "Log out everywhere" against an attacker who keeps the stolen session fresh, re-signing it every few ms.

A session re-signed on every request (SESSION_SAVE_EVERY_REQUEST, sliding expiry) always
carries a recent issue time. Every try: a thief holds a copy of one of the user's sessions
(the cookie of the very browser that logs out everywhere, or of another device) and polls
with it every few milliseconds; the user logs out everywhere (keeping their own session);
every request the thief starts afterwards must be refused, and the user must stay logged in.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import anyio
import httpx
import pytest
from django.test import Client

from tests.django_sessions.conftest import OUR_MIDDLEWARE, middleware_with
from tests.redis_server import RedisServer, patient_store

from .test_sessions_django import copy_of, old_cookie, use_revocation, whoami
from .test_sessions_starlette import build
from .test_sessions_starlette import old_cookie as starlette_cookie

TRIES = 10
#: Pause between two requests of the thief, in seconds.
POLL_EVERY = 0.003


class Poll(threading.Thread):
    """The thief: re-signs its copy of the session as fast as it can, noting when each request started."""

    def __init__(self, client: Client) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.stopping = threading.Event()
        #: (monotonic start of the request, whether the session was still there)
        self.seen: list[tuple[float, bool]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                started = time.monotonic()
                response = self.client.post("/ops/", json.dumps({"ops": []}), content_type="application/json")
                self.seen.append((started, bool(json.loads(response.content)["session"])))
                time.sleep(POLL_EVERY)
        except BaseException as error:  # reported by the test, not lost in the thread
            self.error = error


@pytest.fixture(params=["django-middleware", "our-middleware"])
def save_every_request(request: pytest.FixtureRequest, settings: Any, redis_server: RedisServer) -> RedisServer:
    if request.param == "our-middleware":
        settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    settings.SESSION_SAVE_EVERY_REQUEST = True
    use_revocation(settings, redis_server)
    return redis_server


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
@pytest.mark.parametrize("action", ["everywhere", "password"])
@pytest.mark.parametrize("stolen", ["this-browser", "other-device"])
def test_django_session_re_signed_every_few_ms_is_refused_after_log_out_everywhere(
    save_every_request: RedisServer, action: str, stolen: str
) -> None:
    from django.contrib.auth import get_user_model

    refused = 0
    for attempt in range(TRIES):  # a user per try: each try's cut-off is the first of its user
        user = get_user_model().objects.create_user(f"ada{attempt}", password="correct horse")
        browser = Client()
        assert browser.post("/login/", {"username": user.username}).content == b"in"
        if stolen == "this-browser":
            thief = copy_of(browser)
        else:
            thief = Client()
            old_cookie(thief, user)  # a session of another device, re-signed by the thief from now on
        poll = Poll(thief)
        poll.start()
        wait_for(poll, 3)  # the thief is polling
        time.sleep(random.uniform(0.02, 0.2))  # the cut-off lands anywhere in a second
        before = time.monotonic()
        if action == "everywhere":
            assert browser.post("/everywhere/").content == b"everywhere"
        else:
            assert browser.post("/password/", {"password": f"new horse {attempt}"}).content == b"changed"
        after = time.monotonic()
        deadline = after + 10  # a loaded machine may hold the poller back: wait for its next answer
        while not any(started > after for started, _ in poll.seen) and time.monotonic() < deadline:
            time.sleep(0.01)
        poll.stopping.set()
        poll.join()
        assert poll.error is None, poll.error
        assert any(alive for started, alive in poll.seen if started < before), "the thief never had the session"
        started_after = [alive for started, alive in poll.seen if started > after]
        assert started_after, "the thief sent nothing after the cut-off"
        if not any(started_after) and json.loads(
            thief.post("/ops/", json.dumps({"ops": []}), content_type="application/json").content
        ) == {"results": [], "session": {}, "key": None}:
            refused += 1
        assert whoami(browser) == user.username, f"try {attempt}: the session that logged out everywhere was lost"
    assert refused == TRIES


def wait_for(poll: Poll, requests: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while len(poll.seen) < requests:
        assert time.monotonic() < deadline, "the thief did not start polling"
        time.sleep(0.001)


class Browser:
    """One cookie jar on a shared httpx.AsyncClient (one event loop, as requests share a server's)."""

    def __init__(self, http: httpx.AsyncClient, cookie: str | None = None) -> None:
        self.http = http
        self.cookie = cookie

    async def get(self, path: str, **params: Any) -> httpx.Response:
        headers = {"cookie": f"session={self.cookie}"} if self.cookie else {}
        self.http.cookies.clear()  # only this browser's cookie, never the shared client's jar
        response = await self.http.get(path, params=params, headers=headers)
        self.http.cookies.clear()
        for line in response.headers.get_list("set-cookie"):
            value = line.split(";", 1)[0].partition("=")[2]
            self.cookie = None if value == "null" else value
        return response


async def slide_forever(thief: Browser, user: str, seen: list[tuple[float, bool]], polling: anyio.Event) -> None:
    """The thief under sliding expiry: every response re-signs the session; ``polling`` is set after 3 requests."""
    while True:
        started = time.monotonic()
        response = await thief.get("/slide")
        seen.append((started, response.text == user))
        if len(seen) == 3:
            polling.set()
        await anyio.sleep(POLL_EVERY)


@pytest.mark.parametrize("stolen", ["this-browser", "other-device"])
def test_starlette_session_re_signed_every_few_ms_is_refused_after_log_out_everywhere(
    redis_server: RedisServer, stolen: str
) -> None:
    async def scenario() -> int:
        app = build(patient_store(redis_server))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            refused = 0
            for attempt in range(TRIES):  # a user per try: each try's cut-off is the first of its user
                user = 100 + attempt
                browser = Browser(http)
                await browser.get("/login", user=user)
                thief = Browser(http, browser.cookie if stolen == "this-browser" else starlette_cookie(user))
                seen: list[tuple[float, bool]] = []
                polling = anyio.Event()
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(slide_forever, thief, str(user), seen, polling)
                    await polling.wait()  # the thief is polling
                    await anyio.sleep(random.uniform(0.02, 0.2))
                    before = time.monotonic()
                    assert (await browser.get("/everywhere", keep="1")).text == "everywhere"
                    after = time.monotonic()
                    deadline = after + 10  # a loaded machine may hold the poller back: wait for its next answer
                    while not any(started > after for started, _ in seen) and time.monotonic() < deadline:  # noqa: ASYNC110
                        await anyio.sleep(0.01)  # the poller appends to a list: there is no event to wait on
                    tasks.cancel_scope.cancel()
                assert any(alive for started, alive in seen if started < before), "the thief never had the session"
                started_after = [alive for started, alive in seen if started > after]
                assert started_after, "the thief sent nothing after the cut-off"
                if not any(started_after) and (await thief.get("/whoami")).text == "anonymous":
                    refused += 1
                own = (await browser.get("/whoami")).text
                assert own == str(user), f"try {attempt}: the user's own session was lost"
            return refused

    assert anyio.run(scenario) == TRIES
