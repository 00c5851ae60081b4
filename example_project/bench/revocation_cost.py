"""What revocation and single-use links add to one request, against the stateless path: real Redis on loopback.

    python -m example_project.bench.revocation_cost [--rounds 21] [--block 0.05] [--quick] [--redis URL]

Without ``--redis`` a redis-server is started on a free 127.0.0.1 port (as the tests do).

- **Sessions, read-only**, on a logged-in session: the stateless engine/middleware, then
  the same with revocation on (one ``get_many`` / ``MGET`` per request).
- **Signed links**: a fresh ordinary link per request, then a fresh single-use link per
  request (one ``SET NX`` per request); both include signing the link, so the difference
  is the nonce and the store.

Django: Django's handler with a real middleware chain and RequestFactory requests, the
cache is Django's RedisCache. Starlette: the whole application awaited on one asyncio
event loop (``loop.run_until_complete``) so that redis.asyncio can do its I/O; the
baselines run the same way. Every configuration runs once per round, rounds interleaved;
what each adds over its stateless baseline is taken per round and summarised by median
and quartiles (see ``interleaved``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .asgi_driver import Driver
from .interleaved import Quartiles, added, run_rounds
from .request_cost import DJANGO_LOGIN, STARLETTE_LOGIN
from .timing import format_time, machine, progress

SECRET = "benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
OUR_DJANGO_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"


@contextmanager
def redis_url(given: str | None) -> Iterator[str]:
    if given:
        yield given
        return
    from tests.redis_server import RedisServer, find_redis_server

    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server found: pass --redis URL or install one (apt-get install redis-server)")
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


def configure_django(url: str) -> None:
    import django
    from django.conf import settings
    from django.urls import path

    from blake2sign_web.django import signed_url_required

    module = sys.modules[__name__]
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("read/", read_view),
        path("link/", signed_url_required(link_view)),
    ]
    redis_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }
    settings.configure(
        DEBUG=False,
        SECRET_KEY=SECRET,
        ALLOWED_HOSTS=["testserver"],
        USE_TZ=True,
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "blake2sign_web.django"],
        DATABASES={},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}, "redis": redis_cache},
        SESSION_ENGINE="blake2sign_web.django.sessions",
        SESSION_COOKIE_SECURE=True,
        MIDDLEWARE=[OUR_DJANGO_MIDDLEWARE],
        BLAKE2SIGN_WEB={"SIGNED_URLS": {"SINGLE_USE_CACHE": "redis"}},
    )
    django.setup()


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
        options["SESSIONS"] = {"REVOCATION_CACHE": "redis"}
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


# --- Starlette ------------------------------------------------------------------------------------


def starlette_drivers(url: str, loop: asyncio.AbstractEventLoop) -> dict[str, Callable[[], object]]:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SessionMiddleware, signed_url_required
    from blake2sign_web.starlette.revocation import RedisStore

    store = RedisStore(url)
    signer = URLSigner(SECRET, purpose="downloads")

    async def login(request: Request) -> PlainTextResponse:
        request.session.update(STARLETTE_LOGIN)
        return PlainTextResponse("logged in")

    async def read(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(request.session.get("user_id")))

    async def link(request: Request) -> PlainTextResponse:
        return PlainTextResponse("linked")

    def session_driver(revocation: RedisStore | None) -> Callable[[], object]:
        options: dict[str, Any] = {"secret_key": SECRET} if revocation is None else {
            "secret_key": SECRET, "revocation": revocation
        }  # fmt: skip
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

    return {
        "sessions: stateless": session_driver(None),
        "sessions: revocation on": session_driver(store),
        "links: ordinary": link_driver(False),
        "links: single-use": link_driver(True),
    }


# --- Report ---------------------------------------------------------------------------------------


def table(results: dict[str, list[float]], pairs: list[tuple[str, str]]) -> str:
    lines = [
        "| configuration | per request (median) | added over baseline (median) | added (q1-q3) |",
        "|---|---:|---:|---:|",
    ]
    for baseline, name in pairs:
        lines.append(f"| {baseline} | {format_time(statistics.median(results[baseline]))} | baseline | |")
        q = Quartiles.of(added(results, name, baseline))
        lines.append(
            f"| {name} | {format_time(statistics.median(results[name]))} | {format_time(q.median)} | "
            f"{format_time(q.q1)} - {format_time(q.q3)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (default 21)")
    parser.add_argument("--block", type=float, default=0.05, help="seconds per configuration per round")
    parser.add_argument("--quick", action="store_true", help="5 rounds of 0.01 s: a smoke run")
    parser.add_argument("--redis", help="redis:// URL of a server to use (default: start one)")
    args = parser.parse_args(argv)
    rounds, block = (5, 0.01) if args.quick else (args.rounds, args.block)

    import django
    import redis
    import redis.asyncio
    import starlette

    out = [
        f"Machine: {machine()}; Django {django.get_version()}, Starlette {starlette.__version__}, "
        f"redis-py {redis.__version__}.",
        "",
        f"{rounds} interleaved rounds of about {block * 1000:.0f} ms per configuration; Redis on 127.0.0.1.",
        "",
    ]
    with redis_url(args.redis) as url:
        progress("Django")
        configure_django(url)
        configs = {
            "Django sessions: stateless": django_session_request(False),
            "Django sessions: revocation on": django_session_request(True),
            "Django links: ordinary": django_link_request(False),
            "Django links: single-use": django_link_request(True),
        }
        results = run_rounds(configs, rounds=rounds, block=block)
        out += [
            "#### Django (read-only logged-in request; a fresh signed link per request)",
            "",
            table(
                results,
                [
                    ("Django sessions: stateless", "Django sessions: revocation on"),
                    ("Django links: ordinary", "Django links: single-use"),
                ],
            ),
            "",
        ]
        progress("One raw round trip, for reference")
        client = redis.Redis.from_url(url)
        loop = asyncio.new_event_loop()
        async_client = redis.asyncio.Redis.from_url(url)
        try:
            raw = run_rounds(
                {
                    "redis-py MGET (sync)": lambda: client.mget(["a", "b"]),
                    "redis.asyncio MGET": lambda: loop.run_until_complete(async_client.mget(["a", "b"])),
                },
                rounds=rounds,
                block=block,
            )
            loop.run_until_complete(async_client.aclose())
        finally:
            loop.close()
            client.close()
        out += [
            "One raw round trip (median): "
            + ", ".join(f"{name} {format_time(statistics.median(times))}" for name, times in raw.items())
            + ".",
            "",
        ]
        progress("Starlette")
        loop = asyncio.new_event_loop()
        try:
            configs = starlette_drivers(url, loop)
            results = run_rounds(configs, rounds=rounds, block=block)
        finally:
            loop.close()
        out += [
            "#### Starlette (read-only logged-in request; a fresh signed link per request)",
            "",
            table(
                results,
                [("sessions: stateless", "sessions: revocation on"), ("links: ordinary", "links: single-use")],
            ),
            "",
        ]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
