"""What sessions add to one request, in process, on a login-sized session: medians of interleaved rounds.

    python -m example_project.benchmarks.request_cost [--rounds 21] [--block 0.2] [--quick] [--no-pin]

Two workloads, each on the session a logged-in user carries:

- **read-only**: the view reads the user id (the common request: no cookie is written);
- **read+write**: the view also writes a counter (the cookie is re-signed and sent).

Django: Django's handler with a real middleware chain, a request from RequestFactory, the
Set-Cookie lines formatted as the WSGI handler formats them. Starlette: a whole Starlette
application called directly (``await app(scope, receive, send)``), the cookie the previous
response set sent back. Every configuration runs once per round, rounds interleaved; the
cost each adds over the session-less baseline is taken per round, and ratios between
engines are per-round ratios summarised by median and quartiles (see ``interleaved``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
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
DJANGO_ENGINES = {
    "no sessions": (None, None),
    "Django signed_cookies": ("django.contrib.sessions.backends.signed_cookies", DJANGO_SESSION_MIDDLEWARE),
    "Django cache (locmem)": ("django.contrib.sessions.backends.cache", DJANGO_SESSION_MIDDLEWARE),
    "Django db (SQLite file)": ("django.contrib.sessions.backends.db", DJANGO_SESSION_MIDDLEWARE),
    "ours + Django's middleware": ("blake2sign_web.django.sessions", DJANGO_SESSION_MIDDLEWARE),
    "ours + our middleware": ("blake2sign_web.django.sessions", OUR_DJANGO_MIDDLEWARE),
}
#: (workload, ours, theirs, target): the ratios the project promises.
DJANGO_TARGETS = [
    ("ours + our middleware", "Django signed_cookies", 0.45),
    ("ours + Django's middleware", "Django signed_cookies", 0.60),
    ("ours + our middleware", "Django db (SQLite file)", 0.10),
]
STARLETTE_TARGETS = [
    ("blake2sign_web SessionMiddleware", "Starlette SessionMiddleware", 0.35),
    ("blake2sign_web, compression=None", "Starlette SessionMiddleware", 0.35),
]


# --- Django ---------------------------------------------------------------------------------------


def read_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse(f"user {request.session.get('_auth_user_id')}")


def write_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    user_id = request.session.get("_auth_user_id")
    request.session["views"] = request.session.get("views", 0) + 1
    return HttpResponse(f"user {user_id}")


def plain_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    session = dict(DJANGO_LOGIN)  # the same dict work, so only the session machinery differs
    session["views"] = session.get("views", 0) + 1
    return HttpResponse(f"user {session['_auth_user_id']}")


def configure_django(database: Path) -> None:
    import django
    from django.conf import settings
    from django.urls import path

    module = sys.modules[__name__]
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("read/", read_view),
        path("write/", write_view),
        path("plain/", plain_view),
    ]
    settings.configure(
        DEBUG=False,
        SECRET_KEY="benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        ALLOWED_HOSTS=["testserver"],
        USE_TZ=True,
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "django.contrib.sessions",
            "blake2sign_web.django",
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(database)}},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
        SESSION_COOKIE_SECURE=True,
        MIDDLEWARE=[],
    )
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, run_syncdb=True)


def django_request(
    engine: str | None, middleware: str | None, workload: str
) -> tuple[Callable[[], object], int | None]:
    """A zero-argument request through its own loaded handler, and the logged-in cookie's value length."""
    from django.conf import settings
    from django.core.handlers.base import BaseHandler
    from django.test import RequestFactory, override_settings
    from django.utils.module_loading import import_string

    chain = [m.format(session=middleware) for m in DJANGO_CHAIN if middleware or m != "{session}"]
    with override_settings(MIDDLEWARE=chain, SESSION_ENGINE=engine or settings.SESSION_ENGINE):
        handler = BaseHandler()
        handler.load_middleware()
    factory = RequestFactory()
    cookie = None
    path = "/plain/"
    if engine is not None:
        store = import_string(engine + ".SessionStore")()
        store.update(DJANGO_LOGIN)
        store.save()
        cookie = store.session_key
        path = f"/{workload}/"
    headers = {"HTTP_COOKIE": f"sessionid={cookie}"} if cookie else {}
    expect_cookie = engine is not None and workload == "write"

    def request() -> object:
        response = handler.get_response(factory.get(path, **headers))
        if response.status_code != 200 or bool(response.cookies) != expect_cookie:
            raise RuntimeError(f"unexpected response: {response.status_code}, cookies {list(response.cookies)}")
        return [c.output(header="") for c in response.cookies.values()]

    request()
    return request, None if cookie is None else len(cookie)


# --- Starlette ------------------------------------------------------------------------------------


def starlette_apps() -> dict[str, Any]:
    from starlette.middleware import Middleware
    from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware

    from blake2sign_web.starlette import SessionMiddleware

    secret = "benchmark-secret-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ"
    return {
        "no session middleware": [],
        "Starlette SessionMiddleware": [Middleware(StarletteSessionMiddleware, secret_key=secret)],
        "blake2sign_web SessionMiddleware": [Middleware(SessionMiddleware, secret_key=secret)],
        # What compressing the cookie (half its size) costs per request: the same without it.
        "blake2sign_web, compression=None": [Middleware(SessionMiddleware, secret_key=secret, compression=None)],
    }


def starlette_request(middleware: list[Any], workload: str) -> tuple[Callable[[], object], int | None]:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from .asgi_driver import Driver

    async def login(request: Request) -> PlainTextResponse:
        request.session.update(STARLETTE_LOGIN)
        return PlainTextResponse("logged in")

    async def read(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(request.session.get("user_id")))

    async def write(request: Request) -> PlainTextResponse:
        session = request.session
        session["count"] = session.get("count", 0) + 1
        return PlainTextResponse(str(session.get("user_id")))

    async def plain(request: Request) -> PlainTextResponse:
        session = dict(STARLETTE_LOGIN)
        session["count"] = session.get("count", 0) + 1
        return PlainTextResponse(str(session["user_id"]))

    routes = [Route("/login", login), Route("/", read if workload == "read" else write)]
    if not middleware:
        routes = [Route("/", plain)]
    driver = Driver(Starlette(routes=routes, middleware=middleware))
    size = None
    if middleware:
        scope = driver.scope()
        scope.update(path="/login", raw_path=b"/login")
        driver.request(scope)
        assert driver.set_cookie is not None
        driver.cookie = driver.set_cookie.split(b";", 1)[0]
        size = len(driver.cookie.split(b"=", 1)[1])
    return driver.runner(), size


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

    import django
    import starlette

    out = [f"Machine: {machine()}; Django {django.get_version()}, Starlette {starlette.__version__}.", ""]
    pin_note = f", pinned to CPU {pinned}" if pinned is not None else ""
    out.append(f"{rounds} interleaved rounds of about {block * 1000:.0f} ms per configuration{pin_note}.")
    out.append("")
    with tempfile.TemporaryDirectory() as directory:
        if args.only != "starlette":
            configure_django(Path(directory) / "sessions.sqlite3")
            for workload in ("read", "write"):
                progress(f"Django, {workload}")
                configs, sizes = {}, {}
                for name, (engine, middleware) in DJANGO_ENGINES.items():
                    configs[name], sizes[name] = django_request(engine, middleware, workload)
                results = run_rounds(configs, rounds=rounds, block=block)
                label = "read-only" if workload == "read" else "read+write"
                text, _ = report(f"Django, {label}, login-sized session", results, "no sessions", sizes, DJANGO_TARGETS)
                out.append(text)
        if args.only != "django":
            for workload in ("read", "write"):
                progress(f"Starlette, {workload}")
                configs, sizes = {}, {}
                for name, middleware in starlette_apps().items():
                    configs[name], sizes[name] = starlette_request(middleware, workload)
                results = run_rounds(configs, rounds=rounds, block=block)
                label = "read-only" if workload == "read" else "read+write"
                text, _ = report(
                    f"Starlette, {label}, login-sized session",
                    results,
                    "no session middleware",
                    sizes,
                    STARLETTE_TARGETS,
                )
                out.append(text)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
