"""What sessions add to one request, in process, on a login-sized session: medians of interleaved rounds.

    python -m example_project.bench.request_cost [--rounds 21] [--block 0.2] [--quick] [--no-pin]

Two workloads, each on the session a logged-in user carries:

- **read-only**: the view reads the user id (the common request: no cookie is written);
- **read+write**: the view also writes a counter (the cookie is re-signed and sent).

Django: Django's WSGI handler with a real middleware chain, driven as a WSGI server drives it (a fresh
environ, the response iterated and closed, so that ``request_finished`` runs: ``wsgi_driver``).
Starlette: a whole Starlette application called as uvicorn calls it (``asgi_driver``), the cookie
the previous response set sent back. Every configuration runs once per round, rounds interleaved; the
cost each adds over the session-less baseline is taken per round, and ratios between
engines are per-round ratios summarised by median and quartiles (see ``interleaved``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .interleaved import Quartiles, cost_table, ratio, run_rounds, verdict
from .timing import machine, progress

DJANGO_SESSION_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
OUR_DJANGO_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
DJANGO_CHAIN = [
    "django.middleware.security.SecurityMiddleware",
    "{session}",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
#: What django.contrib.auth.login() stores (the hash is a 64-character SHA-256 HMAC in hex).
DJANGO_LOGIN = {
    "_auth_user_id": "1042",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c7a9e0b5d2c8f6a4e1b7d9c3f5a2e8b6d4c1a7f9e3b5d2c8a6f4e1b7d9c3f",
}
#: A Starlette/FastAPI login: user id, e-mail, name and a CSRF token.
STARLETTE_LOGIN = {
    "user_id": 1042,
    "email": "ada.lovelace@example.com",
    "name": "Ada Lovelace",
    "csrf": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
}
OUR_DJANGO_PER_REQUEST = "example_project.bench.per_request.DjangoSignerPerRequest"
DJANGO_PASS_THROUGH = "a middleware that does nothing"
STARLETTE_PASS_THROUGH = "an ASGI middleware that only wraps send"
DJANGO_COOKIE_PROBE = "no sessions, a session-sized Cookie header sent"
STARLETTE_COOKIE_PROBE = "no session middleware, a session-sized Cookie header sent"
#: Probes run only when asked for by name (``engines``): they are the breakdown's floor, not engines.
PROBES = {DJANGO_PASS_THROUGH, STARLETTE_PASS_THROUGH, DJANGO_COOKIE_PROBE, STARLETTE_COOKIE_PROBE}
#: Our middleware with its cookie's value given, not verified (probes.ready_value_session_middleware): the
#: deterministic breakdown subtracts it from ours. Served by the session routes, but no engine of its own.
STARLETTE_READY_VALUE = "blake2sign_web SessionMiddleware, the cookie's value given, not verified"
ABLATIONS = {STARLETTE_READY_VALUE}
#: Our Starlette middleware with encrypt=True: its cost beside the signed cookie's (needs cryptography).
STARLETTE_ENCRYPTED = "blake2sign_web, encrypt=True"
#: Our Django engine with ENCRYPT, under our middleware and Django's: counted by callgrind only.
DJANGO_ENCRYPTED = "ours + our middleware, ENCRYPT"
DJANGO_ENCRYPTED_UNDER_DJANGO = "ours + Django's middleware, ENCRYPT"
#: What the clock parts leave out unless named: the probes, the ablations, the rows only callgrind counts.
NOT_ENGINES = PROBES | ABLATIONS | {DJANGO_ENCRYPTED, DJANGO_ENCRYPTED_UNDER_DJANGO}
#: The cookie the Cookie-header probes send: as long as our login cookie's value (107 and 146 characters
#: when this was written), base64url characters; nothing reads it but the framework's cookie parsing.
PROBE_COOKIE_BYTES = {"django": 107, "starlette": 146}


def probe_cookie(framework: str) -> str:
    name = "sessionid" if framework == "django" else "session"
    return f"{name}=" + ("AbCdEfGhIjKlMnOpQrStUvWxYz-_0123456789" * 8)[: PROBE_COOKIE_BYTES[framework]]


#: The three kinds of request: one that never touches the session (an API route behind the
#: middleware), a read of the login-sized session, a read and a write of a counter.
WORKLOADS = ("api", "read", "write")


def server_path(framework: str, engine: str, workload: str) -> str:
    """The URL path of ``workload`` on a benchmark server: the session-less Django app serves reads and writes at
    /plain/ (the same dict work without a session); Django's paths end with a slash, Starlette's do not."""
    if framework == "django":
        if engine == DJANGO_BASELINE and workload != "api":
            return "/plain/"
        return f"/{workload}/"
    return f"/{workload}"


REDIS_URL = "redis://127.0.0.1:6379/15"
POSTGRES = {"host": "127.0.0.1", "port": 5432, "dbname": "test", "user": "postgres"}


@dataclass(frozen=True)
class DjangoEngine:
    """A session engine under a middleware; ``cache``/``database``: the aliases its sessions use."""

    engine: str | None
    middleware: str | None
    cache: str = "default"
    database: str = "default"
    needs: str | None = None  # "redis" or "postgres": run only when that server answers
    #: A probe: no session engine, but the client sends a session-sized Cookie header (what parsing it costs).
    probe_cookie: bool = False
    #: Our engine's BLAKE2SIGN_WEB["SESSIONS"] options for this row, as (name, value) pairs.
    options: tuple[tuple[str, Any], ...] = ()


DJANGO_ENGINES = {
    "no sessions": DjangoEngine(None, None),
    "Django signed_cookies": DjangoEngine("django.contrib.sessions.backends.signed_cookies", DJANGO_SESSION_MIDDLEWARE),
    "Django cache (locmem)": DjangoEngine("django.contrib.sessions.backends.cache", DJANGO_SESSION_MIDDLEWARE),
    "Django cache (Redis)": DjangoEngine(
        "django.contrib.sessions.backends.cache", DJANGO_SESSION_MIDDLEWARE, cache="redis", needs="redis"
    ),
    "Django db (SQLite file)": DjangoEngine("django.contrib.sessions.backends.db", DJANGO_SESSION_MIDDLEWARE),
    "Django db (PostgreSQL)": DjangoEngine(
        "django.contrib.sessions.backends.db", DJANGO_SESSION_MIDDLEWARE, database="pg", needs="postgres"
    ),
    "Django cached_db (locmem + SQLite)": DjangoEngine(
        "django.contrib.sessions.backends.cached_db", DJANGO_SESSION_MIDDLEWARE
    ),
    "ours + Django's middleware": DjangoEngine("blake2sign_web.django.sessions", DJANGO_SESSION_MIDDLEWARE),
    "ours + our middleware": DjangoEngine("blake2sign_web.django.sessions", OUR_DJANGO_MIDDLEWARE),
    "ours, signer built per request": DjangoEngine("blake2sign_web.django.sessions", OUR_DJANGO_PER_REQUEST),
    # What encrypting the cookie (AES-256-GCM, issue 21) costs per request beside signing it (callgrind only).
    DJANGO_ENCRYPTED: DjangoEngine(
        "blake2sign_web.django.sessions", OUR_DJANGO_MIDDLEWARE, options=(("ENCRYPT", True),)
    ),
    DJANGO_ENCRYPTED_UNDER_DJANGO: DjangoEngine(
        "blake2sign_web.django.sessions", DJANGO_SESSION_MIDDLEWARE, options=(("ENCRYPT", True),)
    ),
    # A probe, not an engine: what a middleware that does nothing costs (run when asked for by name).
    DJANGO_PASS_THROUGH: DjangoEngine(None, "example_project.bench.probes.PassThroughMiddleware"),
    DJANGO_COOKIE_PROBE: DjangoEngine(None, None, probe_cookie=True),
}
#: (workload, ours, theirs, target): the ratios the project promises.
DJANGO_TARGETS = [
    ("ours + our middleware", "Django signed_cookies", 0.45),
    ("ours + Django's middleware", "Django signed_cookies", 0.60),
    ("ours + our middleware", "Django db (SQLite file)", 0.10),
    ("ours + our middleware", "ours, signer built per request", 0.50),
]
STARLETTE_TARGETS = [
    ("blake2sign_web SessionMiddleware", "Starlette SessionMiddleware", 0.35),
    ("blake2sign_web, compression=None", "Starlette SessionMiddleware", 0.35),
    ("blake2sign_web SessionMiddleware", "blake2sign_web, signer built per request", 0.50),
]
#: Rows run on an event loop (their store waits on I/O) are measured against this baseline instead.
STARLETTE_LOOP_BASELINE = "no session middleware, event loop"
DJANGO_BASELINE = "no sessions"
STARLETTE_BASELINE = "no session middleware"
#: The engines run on real servers (callgrind's workers, the many-user load, the profile): each target's two
#: sides and the baseline.
SERVER_ENGINES: dict[str, list[str]] = {
    "django": [DJANGO_BASELINE, "Django signed_cookies", "ours + Django's middleware", "ours + our middleware"],
    "starlette": [STARLETTE_BASELINE, "Starlette SessionMiddleware", "blake2sign_web SessionMiddleware"],
}
#: The three kinds of request of the server workloads: one that never touches the session, a read, a read+write.
SERVER_KINDS = ("api", "read", "write")


# --- Django ---------------------------------------------------------------------------------------


def login_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    request.session.update(DJANGO_LOGIN)
    if "user" in request.GET:  # the many-user workload logs in 10,000 distinct users
        request.session["_auth_user_id"] = str(request.GET["user"])
    return HttpResponse("logged in")


def api_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse('{"ok": true}', content_type="application/json")


def read_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse(f"user {request.session.get('_auth_user_id')}")


def write_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    user_id = request.session.get("_auth_user_id")
    request.session["views"] = request.session.get("views", 0) + 1
    return HttpResponse(f"user {user_id}")


#: A Set-Cookie header the session-less views send as is: what the header alone costs a server.
PLAIN_SET_COOKIE: str | None = None


def plain_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    session = dict(DJANGO_LOGIN)  # the same dict work, so only the session machinery differs
    session["views"] = session.get("views", 0) + 1
    response = HttpResponse(f"user {session['_auth_user_id']}")
    if PLAIN_SET_COOKIE is not None:
        response.headers["Set-Cookie"] = PLAIN_SET_COOKIE
    return response


class SessionDatabaseRouter:
    """Sends the Session model to ``alias``: set per request, so SQLite and PostgreSQL rows share one process."""

    alias = "default"

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return self.alias if model._meta.app_label == "sessions" else None

    db_for_write = db_for_read

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return True


def answers(host: str, port: int) -> bool:
    """Whether something listens on host:port (a server worth trying)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def redis_available() -> bool:
    if not answers("127.0.0.1", 6379):
        return False
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_URL, socket_timeout=1).ping())
    except Exception:
        return False


def postgres_available() -> bool:
    if not answers("127.0.0.1", 5432):
        return False
    try:
        import psycopg

        with psycopg.connect(**POSTGRES, connect_timeout=2) as connection:  # type: ignore[arg-type]
            connection.execute("select 1")
        return True
    except Exception:
        return False


def available_services() -> set[str]:
    """Which optional servers answer: "redis", "postgres"."""
    return {name for name, check in (("redis", redis_available), ("postgres", postgres_available)) if check()}


def django_settings(database: Path, services: set[str]) -> dict[str, Any]:
    caches: dict[str, Any] = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    databases: dict[str, Any] = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(database)}}
    if "redis" in services:
        caches["redis"] = {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "blake2sign-bench",
        }
    if "postgres" in services:
        databases["pg"] = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": POSTGRES["dbname"],
            "USER": POSTGRES["user"],
            "HOST": POSTGRES["host"],
            "PORT": str(POSTGRES["port"]),
            "CONN_MAX_AGE": None,
        }
    return {
        "DEBUG": False,
        "SECRET_KEY": "benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "ALLOWED_HOSTS": ["testserver", "127.0.0.1", "localhost"],
        "USE_TZ": True,
        "ROOT_URLCONF": __name__,
        "INSTALLED_APPS": [
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "django.contrib.sessions",
            "blake2sign_web.django",
        ],
        "DATABASES": databases,
        "DATABASE_ROUTERS": [f"{__name__}.SessionDatabaseRouter"],
        "CACHES": caches,
        "SESSION_COOKIE_SECURE": True,
        "MIDDLEWARE": [],
    }


def configure_django(database: Path, services: set[str] = frozenset(), *, migrate: bool = True) -> None:  # type: ignore[assignment]
    import django
    from django.conf import settings
    from django.urls import path

    module = sys.modules[__name__]
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("login/", login_view),
        path("read/", read_view),
        path("write/", write_view),
        path("plain/", plain_view),
        path("api/", api_view),
    ]
    settings.configure(**django_settings(database, services))
    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0, run_syncdb=True)
        if "postgres" in services:
            call_command("migrate", "sessions", database="pg", verbosity=0)


def django_handler(spec: DjangoEngine) -> Any:
    """A loaded handler with the standard chain around ``spec``'s session middleware."""
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import override_settings

    chain = [m.format(session=spec.middleware) for m in DJANGO_CHAIN if spec.middleware or m != "{session}"]
    with override_settings(
        MIDDLEWARE=chain, SESSION_ENGINE=spec.engine or settings.SESSION_ENGINE, SESSION_CACHE_ALIAS=spec.cache
    ):
        handler = WSGIHandler()
    return handler


_options: tuple[tuple[str, Any], ...] = ()
#: ``request_finished``'s receivers per configuration, as a server serving that configuration alone has them.
_finished_receivers: dict[DjangoEngine, list[Any]] = {}
#: The signal's own list, which connecting a receiver appends to: put back while a configuration is built.
_all_finished_receivers: list[Any] | None = None


def use_stores(spec: DjangoEngine) -> None:
    """Point the session cache and database at ``spec``'s, our engine's options and the ``request_finished``
    receivers of ``spec``'s own server (cheap: three assignments and a comparison per request; a change of
    options, between blocks, resolves our engine's configuration again)."""
    from django.conf import settings
    from django.core.signals import request_finished

    global _options
    settings.SESSION_CACHE_ALIAS = spec.cache
    SessionDatabaseRouter.alias = spec.database
    receivers = _finished_receivers.get(spec)
    if receivers is not None:
        request_finished.receivers = receivers
    if spec.options != _options:
        from blake2sign_web.django import conf

        settings.BLAKE2SIGN_WEB = {"SESSIONS": dict(spec.options)}
        conf.reset()
        _options = spec.options


def own_receivers(spec: DjangoEngine) -> list[Any]:
    """``request_finished``'s receivers as a server of ``spec`` alone has them: one process builds every
    configuration, and once our engine is imported its receivers would run after every other engine's
    requests too (and their cost would vanish from ours, counted above a baseline that pays it)."""
    from django.core.signals import request_finished

    if spec.engine is not None and spec.engine.startswith("blake2sign_web."):
        return list(request_finished.receivers)
    kept = []
    for receiver in request_finished.receivers:
        function = receiver[1]() if isinstance(receiver[1], weakref.ReferenceType) else receiver[1]
        if not getattr(function, "__module__", "").startswith("blake2sign_web."):
            kept.append(receiver)
    return kept


def django_request(spec: DjangoEngine, workload: str) -> tuple[Callable[[], object], int | None]:
    """A zero-argument request through its own loaded handler, driven as a WSGI server drives it (the response
    iterated and closed, so that ``request_finished`` runs), and the logged-in cookie's value length."""
    from .wsgi_driver import WSGIDriver

    global _all_finished_receivers
    from django.core.signals import request_finished

    if _all_finished_receivers is None:
        _all_finished_receivers = request_finished.receivers
    request_finished.receivers = _all_finished_receivers
    driver = WSGIDriver(django_handler(spec))  # loads the engine, which may connect receivers
    _finished_receivers[spec] = own_receivers(spec)
    use_stores(spec)
    cookie = None
    path = "/api/" if workload == "api" else "/plain/"
    if spec.engine is not None:
        driver.request(driver.environ("/login/"))
        for set_cookie in driver.set_cookies():
            name, _, value = set_cookie.strip().split(";", 1)[0].partition("=")
            if name == "sessionid":
                cookie = value
        if cookie is None:
            raise RuntimeError(f"logging in set no session cookie: {driver.status}, {driver.set_cookies()}")
        path = f"/{workload}/"
    headers = {"HTTP_COOKIE": f"sessionid={cookie}"} if cookie else {}
    if spec.probe_cookie:
        headers = {"HTTP_COOKIE": probe_cookie("django")}
    environ = driver.environ(path, headers=headers)
    expect_cookie = spec.engine is not None and workload == "write"

    def request() -> object:
        use_stores(spec)
        driver.request(environ)
        if driver.status != "200 OK" or any(name == "Set-Cookie" for name, _ in driver.headers) != expect_cookie:
            raise RuntimeError(f"unexpected response: {driver.status}, cookies {driver.set_cookies()}")
        return None

    request()
    return request, None if cookie is None else len(cookie)


# --- Starlette ------------------------------------------------------------------------------------


STARLETTE_SECRET = "benchmark-secret-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ"


def starlette_middlewares(services: set[str] = frozenset()) -> dict[str, list[Any]]:  # type: ignore[assignment]
    """Each configuration's middleware list; starsessions' Redis store only when Redis answers."""
    from starlette.middleware import Middleware
    from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware

    from blake2sign_web.starlette import SessionMiddleware

    from .per_request import StarletteSignerPerRequest
    from .probes import PassThroughASGI, ready_value_session_middleware

    secret = STARLETTE_SECRET
    configs: dict[str, list[Any]] = {
        STARLETTE_BASELINE: [],
        "Starlette SessionMiddleware": [Middleware(StarletteSessionMiddleware, secret_key=secret)],
        "blake2sign_web SessionMiddleware": [Middleware(SessionMiddleware, secret_key=secret)],
        # What compressing the cookie (half its size) costs per request: the same without it.
        "blake2sign_web, compression=None": [Middleware(SessionMiddleware, secret_key=secret, compression=None)],
        # What encrypting the cookie (AES-256-GCM, issue 21) costs per request beside signing it.
        STARLETTE_ENCRYPTED: [Middleware(SessionMiddleware, secret_key=secret, encrypt=True)],
        "blake2sign_web, signer built per request": [Middleware(StarletteSignerPerRequest, secret_key=secret)],
        STARLETTE_PASS_THROUGH: [Middleware(PassThroughASGI)],
        STARLETTE_READY_VALUE: [Middleware(ready_value_session_middleware, secret_key=secret)],
        STARLETTE_COOKIE_PROBE: [],
    }
    try:
        import starsessions
    except ImportError:
        return configs
    two_weeks = 14 * 24 * 3600
    configs["starsessions CookieStore"] = [
        Middleware(starsessions.SessionMiddleware, store=starsessions.CookieStore(secret), lifetime=two_weeks),
        Middleware(starsessions.SessionAutoloadMiddleware),
    ]
    if "redis" in services:
        from starsessions.stores.redis import RedisStore

        configs["starsessions RedisStore"] = [
            Middleware(starsessions.SessionMiddleware, store=RedisStore(REDIS_URL), lifetime=two_weeks),
            Middleware(starsessions.SessionAutoloadMiddleware),
        ]
        configs[STARLETTE_LOOP_BASELINE] = []
    return configs


def needs_event_loop(name: str) -> bool:
    return "Redis" in name or name == STARLETTE_LOOP_BASELINE


def starlette_baseline(name: str) -> str:
    return STARLETTE_LOOP_BASELINE if needs_event_loop(name) else STARLETTE_BASELINE


def starlette_app(middleware: list[Any], set_cookie: str | None = None, *, session: bool = True) -> Any:
    """One application serving /login, /read and /write (the session-less one: the same dict work).

    ``set_cookie``: a Set-Cookie header the session-less app sends as is (what the header alone costs);
    ``session=False``: the session-less routes behind ``middleware`` (a probe that is no session middleware).
    """
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def login(request: Request) -> PlainTextResponse:
        request.session.update(STARLETTE_LOGIN)
        user = request.query_params.get("user")
        if user is not None:  # the many-user workload logs in 10,000 distinct users
            request.session.update(user_id=int(user), email=f"user{user}@example.com", name=f"User {user}")
        return PlainTextResponse("logged in")

    async def read(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(request.session.get("user_id")))

    async def api(request: Request) -> PlainTextResponse:
        return PlainTextResponse('{"ok": true}', media_type="application/json")

    async def write(request: Request) -> PlainTextResponse:
        session = request.session
        session["count"] = session.get("count", 0) + 1
        return PlainTextResponse(str(session.get("user_id")))

    extra = {"set-cookie": set_cookie} if set_cookie is not None else None

    async def plain(request: Request) -> PlainTextResponse:
        session = dict(STARLETTE_LOGIN)
        session["count"] = session.get("count", 0) + 1
        return PlainTextResponse(str(session["user_id"]), headers=extra)

    if not middleware or not session:  # no session: the same work without one (a probe keeps its middleware)
        plain_routes = [Route("/read", plain), Route("/write", plain), Route("/login", plain), Route("/api", api)]
        return Starlette(routes=plain_routes, middleware=middleware)
    routes = [Route("/login", login), Route("/read", read), Route("/write", write), Route("/api", api)]
    return Starlette(routes=routes, middleware=middleware)


_loop: asyncio.AbstractEventLoop | None = None


def event_loop() -> asyncio.AbstractEventLoop:
    """One loop for every request that waits on I/O (a Redis connection belongs to its loop)."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    return _loop


def starlette_request(name: str, middleware: list[Any], workload: str) -> tuple[Callable[[], object], int | None]:
    from .asgi_driver import Driver

    session = bool(middleware) and name not in PROBES
    driver = Driver(starlette_app(middleware, session=session), loop=event_loop() if needs_event_loop(name) else None)
    size = None
    if session:
        scope = driver.scope()
        scope.update(path="/login", raw_path=b"/login")
        driver.request(scope)
        if driver.set_cookie is None:
            raise RuntimeError(f"{name}: logging in set no cookie")
        driver.cookie = driver.set_cookie.split(b";", 1)[0]
        size = len(driver.cookie.split(b"=", 1)[1])
    if name == STARLETTE_COOKIE_PROBE:
        driver.cookie = probe_cookie("starlette").encode()
    scope = driver.scope()
    scope.update(path=f"/{workload}", raw_path=f"/{workload}".encode())

    def run() -> None:
        driver.request({**scope, "state": {}})  # a fresh scope each time, as uvicorn gives (a copy of its state)

    run()
    return run, size


# --- Report ---------------------------------------------------------------------------------------


def report(
    title: str,
    results: dict[str, list[float]],
    baseline: str,
    sizes: dict[str, int | None],
    targets: list[tuple[str, str, float]],
) -> tuple[str, list[tuple[str, Quartiles, float, str]]]:
    lines = [f"#### {title}", "", cost_table(results, baseline, sizes), ""]
    verdicts = []
    if targets:
        lines += ["| ratio of added cost | median | q1-q3 | target | verdict |", "|---|---:|---:|---:|---|"]
        for ours, theirs, target in targets:
            q = ratio(results, ours, theirs, baseline)
            decided = verdict(q, target)
            verdicts.append((f"{ours} / {theirs}", q, target, decided))
            lines.append(f"| {ours} / {theirs} | {q.median:.2f} | {q.q1:.2f}-{q.q3:.2f} | {target:.2f} | {decided} |")
        lines.append("")
    return "\n".join(lines), verdicts


def pin_to_one_cpu() -> int | None:
    """Keep the process on the last CPU: a process moved between cores measures its caches, not its code."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def django_configs(
    workload: str, services: set[str], engines: set[str] | None = None
) -> tuple[dict[str, Callable[[], object]], dict[str, int | None]]:
    configs, sizes = {}, {}
    for name, spec in DJANGO_ENGINES.items():
        wanted = (
            name == DJANGO_BASELINE or (engines is None and name not in NOT_ENGINES) or (engines and name in engines)
        )
        if wanted and (spec.needs is None or spec.needs in services):
            configs[name], sizes[name] = django_request(spec, workload)
    return configs, sizes


def starlette_configs(
    workload: str, services: set[str], engines: set[str] | None = None
) -> tuple[dict[str, Callable[[], object]], dict[str, int | None]]:
    configs, sizes = {}, {}
    for name, middleware in starlette_middlewares(services).items():
        wanted = (engines is None and name not in NOT_ENGINES) or (engines is not None and name in engines)
        if name in (STARLETTE_BASELINE, STARLETTE_LOOP_BASELINE) or wanted:
            configs[name], sizes[name] = starlette_request(name, middleware, workload)
    if STARLETTE_LOOP_BASELINE in configs and not any(
        needs_event_loop(n) for n in configs if n != STARLETTE_LOOP_BASELINE
    ):
        del configs[STARLETTE_LOOP_BASELINE]
    return configs, sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds per table (default 21)")
    parser.add_argument("--block", type=float, default=0.2, help="seconds per configuration per round")
    parser.add_argument("--quick", action="store_true", help="5 rounds of 0.01 s: a smoke run, no verdicts to quote")
    parser.add_argument("--only", choices=["django", "starlette"], help="one framework only")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU")
    args = parser.parse_args(argv)
    pinned = None if args.no_pin else pin_to_one_cpu()
    rounds, block = (5, 0.01) if args.quick else (args.rounds, args.block)
    services = available_services()

    import django
    import starlette

    out = [f"Machine: {machine()}; Django {django.get_version()}, Starlette {starlette.__version__}.", ""]
    pin_note = f", pinned to CPU {pinned}" if pinned is not None else ""
    out.append(f"{rounds} interleaved rounds of about {block * 1000:.0f} ms per configuration{pin_note}.")
    out.append("")
    frameworks = {
        "Django": (django_configs, DJANGO_BASELINE, DJANGO_TARGETS),
        "Starlette": (starlette_configs, STARLETTE_BASELINE, STARLETTE_TARGETS),
    }
    with tempfile.TemporaryDirectory() as directory:
        for title, (configs_for, baseline, targets) in frameworks.items():
            if args.only not in (None, title.lower()):  # --only the other framework
                continue
            if title == "Django":
                configure_django(Path(directory) / "sessions.sqlite3", services)
            for workload in ("read", "write"):
                progress(f"{title}, {workload}")
                configs, sizes = configs_for(workload, services)
                results = run_rounds(configs, rounds=rounds, block=block)
                label = "read-only" if workload == "read" else "read+write"
                text, _ = report(f"{title}, {label}, login-sized session", results, baseline, sizes, targets)
                out.append(text)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
