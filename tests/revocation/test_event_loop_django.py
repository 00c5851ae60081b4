"""Django under ASGI with revocation on: no cache call on the event loop, even against a frozen Redis.

Eight concurrent requests through this project's middleware, against a redis-server that is
frozen (SIGSTOP: connections accepted, nothing answers), so every revocation check waits for
the cache's socket timeout. A ticker task on the same event loop measures how long the loop
was kept from running; each request runs in its own ThreadSensitiveContext, as Django's
ASGIHandler runs it, so the requests' cache calls may wait side by side.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from asgiref.sync import ThreadSensitiveContext
from django.test import AsyncClient, Client

from tests.django_sessions.conftest import OUR_MIDDLEWARE, middleware_with
from tests.redis_server import FROZEN_OPTIONS, FROZEN_TIMEOUT, RedisServer

from .test_sessions_django import use_revocation

pytestmark = [pytest.mark.urls("tests.revocation.django_urls"), pytest.mark.django_db(transaction=True)]

CONCURRENT = 8
#: A loop kept from running this long was blocked by a cache call (each waits FROZEN_TIMEOUT, 1 s).
BLOCKED = FROZEN_TIMEOUT / 2


async def ticker(gaps: list[float], stop: anyio.Event) -> None:
    """Tick every 10 ms; record the longest time between two ticks (the loop could not run meanwhile)."""
    last = time.monotonic()
    while not stop.is_set():
        await anyio.sleep(0.01)
        now = time.monotonic()
        gaps.append(now - last)
        last = now


def concurrently(cookie: str, path: str, method: str = "get") -> tuple[float, float, list[int]]:
    """CONCURRENT requests at once on one event loop: (longest loop stall, wall time, statuses)."""

    async def scenario() -> tuple[float, float, list[int]]:
        client = AsyncClient()
        client.cookies["sessionid"] = cookie
        gaps: list[float] = []
        statuses: list[int] = []
        stop = anyio.Event()

        async def one() -> None:
            async with ThreadSensitiveContext():  # as django.core.handlers.asgi.ASGIHandler does per request
                response = await getattr(client, method)(path)
            statuses.append(response.status_code)

        started = time.monotonic()
        async with anyio.create_task_group() as outer:
            outer.start_soon(ticker, gaps, stop)
            async with anyio.create_task_group() as requests:
                for _ in range(CONCURRENT):
                    requests.start_soon(one)
            elapsed = time.monotonic() - started
            stop.set()
        return max(gaps), elapsed, statuses

    return anyio.run(scenario)


def logged_in_cookie() -> str:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("ada")
    client = Client()
    assert client.post("/login/", {"username": "ada"}).content == b"in"
    return str(client.cookies["sessionid"].value)


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"SERVER_TIMING": True}, "/untouched/"),  # the timed load in the middleware
        ({}, "/untouched/"),  # SESSION_SAVE_EVERY_REQUEST: the read before saving an untouched session
        ({}, "/asave/"),  # an async view's request.session.asave() on a session it never read
    ],
    ids=["server-timing", "save-every-request", "asave"],
)
def test_frozen_redis_does_not_block_the_event_loop(
    settings: Any, own_redis_server: RedisServer, options: dict[str, Any], path: str
) -> None:
    settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    settings.SESSION_SAVE_EVERY_REQUEST = not options and path == "/untouched/"
    use_revocation(settings, own_redis_server, options=FROZEN_OPTIONS, **options)
    cookie = logged_in_cookie()
    own_redis_server.pause()
    try:
        stall, elapsed, statuses = concurrently(cookie, path)
    finally:
        own_redis_server.resume()
    assert statuses == [200] * CONCURRENT
    assert stall < BLOCKED, f"the event loop was blocked for {stall:.2f} s"
    # Side by side, all eight wait about one timeout; one after the other they would take eight.
    assert elapsed < CONCURRENT * FROZEN_TIMEOUT / 2, f"{CONCURRENT} requests took {elapsed:.2f} s"
