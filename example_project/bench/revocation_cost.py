"""What revocation and single-use links add to one request, against the stateless path: real Redis on loopback.

The ``revocation-cost`` part of ``python -m example_project.bench`` (results under ``revocation_cost`` in
docs/benchmarks/results.json, the "Revocation: what one request adds" section of docs/performance.md)::

    python -m example_project.bench revocation-cost [--cost-rounds 21] [--cost-block 0.05] [--redis URL] [--quick]

Without ``--redis`` a redis-server is started on a free 127.0.0.1 port (as the tests do, tests/redis_server.py).

- **Sessions, read-only**, on a logged-in session: the stateless engine/middleware, then
  the same with revocation on (one ``get_many`` / ``MGET`` per request).
- **Signed links**: a fresh ordinary link per request, then a fresh single-use link per
  request (one ``SET NX`` per request); both include signing the link, so the difference
  is the nonce and the store.
- **For reference**, in the same run: one raw round trip (redis-py's ``MGET`` of two keys, sync and
  ``redis.asyncio``), Django's ``RedisCache.get_many`` of the same keys, and building the ``redis.Redis``
  client that ``RedisCache`` builds on every call.

Django: Django's handler with a real middleware chain and RequestFactory requests, the
cache is Django's RedisCache. Starlette: the whole application awaited on one asyncio
event loop (``loop.run_until_complete``) so that redis.asyncio can do its I/O; the
baselines run the same way. Every configuration runs once per round, rounds interleaved;
what each adds over its stateless baseline is taken per round and summarised by median
and quartiles (see ``interleaved``). Client and redis-server share this machine's cores.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .asgi_driver import Driver
from .interleaved import Quartiles, added, run_rounds
from .request_cost import DJANGO_LOGIN, STARLETTE_LOGIN

ROOT = Path(__file__).resolve().parents[2]
SECRET = "benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
OUR_DJANGO_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
ROUNDS, BLOCK = 21, 0.05
QUICK_ROUNDS, QUICK_BLOCK = 5, 0.01
FRAMEWORKS = ("django", "starlette")
#: The keys of the reference timings, in the order they run.
REFERENCE = ("mget_sync", "mget_async", "django_get_many", "redis_client")


@dataclass(frozen=True)
class Pair:
    """A request measured twice: stateless, then with Redis (both configurations' names in one round)."""

    key: str
    request: str
    setting: str
    stateless: str
    with_redis: str


PAIRS = (
    Pair("sessions", "read a logged-in session", "revocation on", "sessions: stateless", "sessions: revocation on"),
    Pair("links", "a fresh signed link", "single-use", "links: ordinary", "links: single-use"),
)


def steps(rounds: int) -> int:
    """Progress steps of ``run``: the server, then one per configuration per round (Django, reference, Starlette)."""
    return 1 + rounds * (2 * len(PAIRS) + len(REFERENCE) + 2 * len(PAIRS))


def supported(url: str | None = None) -> str | None:
    """Why the part cannot run here (no redis-server and no ``--redis URL``), or None."""
    if url:
        return None
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.redis_server import find_redis_server

    if find_redis_server() is None:
        return "no redis-server found (apt-get install redis-server), and no --redis URL given"
    return None


@contextmanager
def redis_url(given: str | None) -> Iterator[str]:
    if given:
        yield given
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.redis_server import RedisServer, find_redis_server

    binary = find_redis_server()
    if binary is None:
        raise RuntimeError(supported() or "no redis-server")
    server = RedisServer(binary)
    server.start()
    try:
        yield server.url
    finally:
        server.close()


# --- Django ---------------------------------------------------------------------------------------


def read_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse(f"user {request.session.get('_auth_user_id')}")


def link_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse("linked")


@contextmanager
def django_settings(url: str) -> Iterator[None]:
    """This part's Django settings, over the harness's (or configured here when nothing configured Django)."""
    import django
    from django.conf import settings
    from django.test import override_settings
    from django.urls import path

    from blake2sign_web.django import signed_url_required

    module = sys.modules[__name__]
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("read/", read_view),
        path("link/", signed_url_required(link_view)),
    ]
    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY=SECRET,
            USE_TZ=True,
            INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "blake2sign_web.django"],
            DATABASES={},
        )
        django.setup()
    redis_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }
    with override_settings(
        SECRET_KEY=SECRET,
        ALLOWED_HOSTS=["testserver"],
        ROOT_URLCONF=__name__,
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}, "redis": redis_cache},
        SESSION_ENGINE="blake2sign_web.django.sessions",
        SESSION_COOKIE_SECURE=True,
        MIDDLEWARE=[OUR_DJANGO_MIDDLEWARE],
        BLAKE2SIGN_WEB={"SIGNED_URLS": {"SINGLE_USE_CACHE": "redis"}},
    ):
        try:
            yield
        finally:
            from django.core.cache import caches

            caches.close_all()


def django_handler() -> Any:
    from django.core.handlers.base import BaseHandler

    handler = BaseHandler()
    handler.load_middleware()
    return handler


def django_session_request(revocation: bool) -> Callable[[], object]:
    """Requests under a session configuration resolved once (``conf._config`` is swapped in, not rebuilt)."""
    from django.test import RequestFactory, override_settings

    from blake2sign_web.django import conf
    from blake2sign_web.django.sessions import SessionStore

    options: dict[str, Any] = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "redis"}}
    if revocation:
        options["SESSIONS"] = {"REVOCATION_CACHE": "redis", "REVOCATION_KEY_PREFIX": "bench"}
    with override_settings(BLAKE2SIGN_WEB=options):
        config = conf.session_config()
        store = SessionStore()
        store.update(DJANGO_LOGIN)
        store.save()
    handler = django_handler()
    factory = RequestFactory()
    headers = {"HTTP_COOKIE": f"sessionid={store.session_key}"}

    def request() -> object:
        conf._config = config
        response = handler.get_response(factory.get("/read/", **headers))
        if response.content != b"user 1042":
            raise RuntimeError(f"unexpected response: {response.status_code} {response.content!r}")
        return response

    return request


def django_link_request(single_use: bool) -> Callable[[], object]:
    from django.test import RequestFactory

    from blake2sign_web.django import sign_url

    handler = django_handler()
    factory = RequestFactory()

    def request() -> object:
        response = handler.get_response(factory.get(sign_url("/link/", expires_in=60, single_use=single_use)))
        if response.status_code != 200:
            raise RuntimeError(f"unexpected response: {response.status_code}")
        return response

    return request


def django_configs() -> dict[str, Callable[[], object]]:
    sessions, links = PAIRS
    return {
        sessions.stateless: django_session_request(False),
        sessions.with_redis: django_session_request(True),
        links.stateless: django_link_request(False),
        links.with_redis: django_link_request(True),
    }


# --- Starlette ------------------------------------------------------------------------------------


def starlette_drivers(store: Any, loop: asyncio.AbstractEventLoop) -> dict[str, Callable[[], object]]:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SessionMiddleware, signed_url_required

    signer = URLSigner(SECRET, purpose="downloads")

    async def login(request: Request) -> PlainTextResponse:
        request.session.update(STARLETTE_LOGIN)
        return PlainTextResponse("logged in")

    async def read(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(request.session.get("user_id")))

    async def link(request: Request) -> PlainTextResponse:
        return PlainTextResponse("linked")

    def session_driver(revocation: Any) -> Callable[[], object]:
        options: dict[str, Any] = {"secret_key": SECRET}
        if revocation is not None:
            options["revocation"] = revocation
        app = Starlette(
            routes=[Route("/login", login), Route("/", read)], middleware=[Middleware(SessionMiddleware, **options)]
        )
        driver = Driver(app, loop)
        driver.prime("/login")
        if driver.cookie is None:
            raise RuntimeError("/login set no session cookie")
        return driver.runner()

    def link_driver(single_use: bool) -> Callable[[], object]:
        app = Starlette(routes=[Route("/link", signed_url_required(signer, single_use=store)(link))])
        driver = Driver(app, loop)

        def run() -> None:
            path, _, query = signer.sign("/link", expires_in=60, single_use=single_use).partition("?")
            driver.request(driver.scope(path, query.encode()))

        return run

    sessions, links = PAIRS
    return {
        sessions.stateless: session_driver(None),
        sessions.with_redis: session_driver(store),
        links.stateless: link_driver(False),
        links.with_redis: link_driver(True),
    }


# --- the part -------------------------------------------------------------------------------------


def summarise(times: dict[str, list[float]]) -> dict[str, Any]:
    """Each pair: both medians, and what Redis adds per round (median and quartiles), in microseconds."""
    rows = {}
    for pair in PAIRS:
        q = Quartiles.of(added(times, pair.with_redis, pair.stateless))
        rows[pair.key] = {
            "request": pair.request,
            "setting": pair.setting,
            "stateless_us_median": statistics.median(times[pair.stateless]) * 1e6,
            "with_redis_us_median": statistics.median(times[pair.with_redis]) * 1e6,
            "added_us_median": q.median * 1e6,
            "added_us_q1": q.q1 * 1e6,
            "added_us_q3": q.q3 * 1e6,
            "rounds_us": {
                "stateless": [t * 1e6 for t in times[pair.stateless]],
                "with_redis": [t * 1e6 for t in times[pair.with_redis]],
            },
        }
    return rows


def quartiles_us(times: list[float]) -> dict[str, float]:
    q = Quartiles.of(times)
    return {"median_us": q.median * 1e6, "q1_us": q.q1 * 1e6, "q3_us": q.q3 * 1e6}


def reference(url: str, rounds: int, block: float, tick: Callable[[], None]) -> dict[str, dict[str, float]]:
    """One raw round trip (sync and async), Django's ``get_many`` of the same keys, and the client it builds."""
    import redis
    import redis.asyncio
    from django.core.cache import caches

    keys = ["blake2sign-bench:a", "blake2sign-bench:b"]
    client = redis.Redis.from_url(url)
    pool = client.connection_pool
    cache = caches["redis"]
    loop = asyncio.new_event_loop()
    async_client = redis.asyncio.Redis.from_url(url)
    try:
        times = run_rounds(
            {
                "mget_sync": lambda: client.mget(keys),
                "mget_async": lambda: loop.run_until_complete(async_client.mget(keys)),
                "django_get_many": lambda: cache.get_many(keys),
                "redis_client": lambda: redis.Redis(connection_pool=pool),
            },
            rounds=rounds,
            block=block,
            tick=tick,
        )
        loop.run_until_complete(async_client.aclose())
    finally:
        loop.close()
        client.close()
    return {name: quartiles_us(times[name]) for name in REFERENCE}


def server_version(url: str) -> str:
    import redis

    with redis.Redis.from_url(url) as client:
        return str(client.info("server").get("redis_version", "?"))


def run(
    *,
    rounds: int = ROUNDS,
    block: float = BLOCK,
    redis: str | None = None,
    tick: Callable[[], None] = lambda: None,
    describe: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The part's results (docs/benchmarks/results.json, ``revocation_cost``): see report.py's schema."""
    import django
    import redis as redis_py
    import starlette

    from blake2sign_web.starlette.revocation import RedisStore

    describe("revocation-cost: starting redis-server" if redis is None else "revocation-cost: connecting to Redis")
    with redis_url(redis) as url:
        result: dict[str, Any] = {
            "settings": {
                "rounds": rounds,
                "block_s": block,
                "redis": "given (--redis)" if redis else "started on 127.0.0.1",
                "cores": os.cpu_count(),
                "versions": {
                    "python": platform.python_version(),
                    "Django": django.get_version(),
                    "starlette": starlette.__version__,
                    "redis-py": redis_py.__version__,
                    "redis-server": server_version(url),
                },
            },
            "results": {},
        }
        tick()
        with django_settings(url):
            describe("revocation-cost: Django")
            result["results"]["django"] = summarise(run_rounds(django_configs(), rounds=rounds, block=block, tick=tick))
            describe("revocation-cost: one raw round trip, for reference")
            result["reference"] = reference(url, rounds, block, tick)
        describe("revocation-cost: Starlette")
        loop = asyncio.new_event_loop()
        try:
            store = RedisStore(url, key_prefix="bench")
            try:
                times = run_rounds(starlette_drivers(store, loop), rounds=rounds, block=block, tick=tick)
            finally:
                loop.run_until_complete(store.aclose())
        finally:
            loop.close()
        result["results"]["starlette"] = summarise(times)
    return result
