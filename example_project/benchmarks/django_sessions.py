"""Per-request cost of Django session engines, in one process, through the real middleware chain.

Each configuration serves the same GET through Django's handler (request built by
RequestFactory, the middleware chain, URL resolution, a view that reads the user id
and writes a counter into a login-sized session, and the Set-Cookie lines formatted
as the WSGI handler formats them). The table reports the cost per request, the cost
each engine adds over the same request without sessions, and the logged-in cookie.

Run from the repository root::

    python -m example_project.benchmarks.django_sessions
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import django
from django.conf import settings

from .timing import Timing, format_time, machine, measure, progress, table

SESSION_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"
OUR_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
CHAIN = [
    "django.middleware.security.SecurityMiddleware",
    "{session}",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
#: What django.contrib.auth.login() stores for a user (the hash is a 64-char SHA-256 HMAC hex).
LOGIN_SESSION = {
    "_auth_user_id": "1042",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c7a9e0b5d2c8f6a4e1b7d9c3f5a2e8b6d4c1a7f9e3b5d2c8a6f4e1b7d9c3f",
}
#: (row name, SESSION_ENGINE, session middleware or None for the session-less baseline)
CONFIGURATIONS = [
    ("no sessions", None, None),
    ("Django signed_cookies", "django.contrib.sessions.backends.signed_cookies", SESSION_MIDDLEWARE),
    ("Django cache (locmem)", "django.contrib.sessions.backends.cache", SESSION_MIDDLEWARE),
    ("Django db (SQLite file)", "django.contrib.sessions.backends.db", SESSION_MIDDLEWARE),
    ("ours + Django's middleware", "blake2sign_web.django.sessions", SESSION_MIDDLEWARE),
    ("ours + our middleware", "blake2sign_web.django.sessions", OUR_MIDDLEWARE),
]


def session_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    user_id = request.session.get("_auth_user_id")
    request.session["views"] = request.session.get("views", 0) + 1
    return HttpResponse(f"user {user_id}")


def plain_view(request):  # type: ignore[no-untyped-def]
    from django.http import HttpResponse

    return HttpResponse("user None")


def configure(database: Path) -> None:
    from django.urls import path

    urlpatterns = [path("session/", session_view), path("plain/", plain_view)]
    sys.modules[__name__].urlpatterns = urlpatterns  # type: ignore[attr-defined]
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


def build(engine: str | None, middleware: str | None) -> tuple[Callable[[], object], int | None]:
    """A zero-argument request through a freshly loaded chain, and the logged-in cookie's value length."""
    from django.core.handlers.base import BaseHandler
    from django.test import RequestFactory, override_settings
    from django.utils.module_loading import import_string

    chain = [m.format(session=middleware) for m in CHAIN if middleware or m != "{session}"]
    overrides = override_settings(MIDDLEWARE=chain, SESSION_ENGINE=engine or settings.SESSION_ENGINE)
    overrides.enable()
    handler = BaseHandler()
    handler.load_middleware()
    factory = RequestFactory()
    cookie = None
    path = "/plain/"
    if engine is not None:
        store = import_string(engine + ".SessionStore")()
        store.update(LOGIN_SESSION)
        store.save()
        cookie = store.session_key
        path = "/session/"
    headers = {"HTTP_COOKIE": f"{settings.SESSION_COOKIE_NAME}={cookie}"} if cookie else {}

    def request() -> object:
        response = handler.get_response(factory.get(path, **headers))
        assert response.status_code == 200, response.status_code
        return [c.output(header="") for c in response.cookies.values()]

    request()
    return request, None if cookie is None else len(cookie)


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        configure(Path(directory) / "sessions.sqlite3")
        from django.core.management import call_command

        call_command("migrate", verbosity=0, run_syncdb=True)
        progress(f"Django {django.get_version()}, {machine()}")
        rows: list[Timing] = []
        for name, engine, middleware in CONFIGURATIONS:
            request, size = build(engine, middleware)
            rows.append(measure(name, request, size=size))
    print(table("Django: one GET reading and writing a login-sized session", rows, "no sessions"))
    base = rows[0].best
    print("| | added over no sessions | vs ours + our middleware | cookie value |")
    print("|---|---:|---:|---:|")
    ours = rows[-1].best - base
    for row in rows[1:]:
        added = row.best - base
        size = f"{row.size} chars" if row.size is not None else ""
        print(f"| {row.name} | {format_time(added)} | {added / ours:.1f}x | {size} |")
    print()
    print(f"Machine: {machine()}; Django {django.get_version()}.")


if __name__ == "__main__":
    main()
