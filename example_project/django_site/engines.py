"""Switch session engines while the site runs: each browser picks one with the form on every page.

The choice is a plain cookie (``example_engine``), read before anything touches the session:
one middleware instance per engine is built at start-up, and each request goes through the
one its browser chose. Nothing is global, so two browsers can compare two engines at once and
the choice survives a restart. Switching flushes the session (logs you out): a session
written by one engine means nothing to another.

Django's engines run under this project's middleware too (it is a drop-in), so that every
engine's load and save show up in Server-Timing; "ours, Django's middleware" sends none
(only our middleware writes the header).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from example_project import costs

CHOICE_COOKIE = "example_engine"
OURS = "blake2sign_web.django.sessions"
OUR_MIDDLEWARE = "blake2sign_web.django.middleware.SessionMiddleware"
DJANGO_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"


@dataclass(frozen=True)
class Engine:
    label: str
    engine: str
    middleware: str
    #: Its name in the request benchmark's results (docs/benchmarks/results.json).
    bench_key: str


ENGINES = {
    "ours": Engine("blake2sign_web, our middleware", OURS, OUR_MIDDLEWARE, "ours + our middleware"),
    "ours-django-middleware": Engine(
        "blake2sign_web, Django's middleware", OURS, DJANGO_MIDDLEWARE, "ours + Django's middleware"
    ),
    "signed_cookies": Engine(
        "Django signed_cookies",
        "django.contrib.sessions.backends.signed_cookies",
        OUR_MIDDLEWARE,
        "Django signed_cookies",
    ),
    "cache": Engine(
        "Django cache (locmem)", "django.contrib.sessions.backends.cache", OUR_MIDDLEWARE, "Django cache (locmem)"
    ),
    "db": Engine(
        "Django db (SQLite)", "django.contrib.sessions.backends.db", OUR_MIDDLEWARE, "Django db (SQLite file)"
    ),
}
DEFAULT = "ours"


def chosen(request: HttpRequest) -> str:
    name = request.COOKIES.get(CHOICE_COOKIE, DEFAULT)
    return name if name in ENGINES else DEFAULT


class SwitchableSessionMiddleware:
    """The session middleware of the engine this browser chose (sync: the example runs under WSGI)."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        from django.utils.module_loading import import_string

        self.choices: dict[str, Any] = {}
        for name, choice in ENGINES.items():
            middleware = import_string(choice.middleware)(get_response)
            middleware.SessionStore = import_module(choice.engine).SessionStore
            if hasattr(middleware, "store_in_cookie"):
                middleware.store_in_cookie = choice.engine == OURS
            self.choices[name] = middleware

    def __call__(self, request: HttpRequest) -> Any:
        return self.choices[chosen(request)](request)


@require_POST
def switch_engine(request: HttpRequest) -> HttpResponse:
    """Set the engine cookie, end the current session (it means nothing to the next engine), go back."""
    name = request.POST.get("engine", DEFAULT)
    if name not in ENGINES:
        name = DEFAULT
    request.session.flush()
    back = request.POST.get("next", "/")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = "/"
    response = HttpResponseRedirect(back)
    response.set_cookie(CHOICE_COOKIE, name, max_age=365 * 24 * 3600, samesite="Lax", httponly=True)
    from django.contrib import messages

    messages.info(request, f"Sessions now use: {ENGINES[name].label}. Switching engines logged you out.")
    return response


def session_facts(request: HttpRequest) -> dict[str, Any]:
    """Template context: the engine in use, the session cookie's size, and the benchmark's figures."""
    name = chosen(request)
    cookie = request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")
    measured = costs.measured("django")
    return {
        "engines": ENGINES,
        "engine_name": name,
        "engine": ENGINES[name],
        "cookie_name": settings.SESSION_COOKIE_NAME,
        "cookie_size": len(settings.SESSION_COOKIE_NAME) + 1 + len(cookie) if cookie else 0,
        "server_timing": ENGINES[name].middleware == OUR_MIDDLEWARE,
        "measured": sorted(measured.items()),
        "bench_hint": costs.HINT,
    }
