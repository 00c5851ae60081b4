"""Switch session middlewares while the app runs: each browser picks one with the form on every page.

The choice is a plain cookie (``example_engine``). One middleware stack per engine wraps the
same application, built once at start-up; each request goes through the one its browser
chose, so two browsers can compare two engines at once and nothing global changes.

Our middleware times itself (``server_timing=True``). Starlette's SessionMiddleware and
starsessions have no such option, so the example times them from outside with the same
header names: ``b2sw-load`` from entering the middleware to entering the application (read,
verify, decode), ``b2sw-save`` from the application starting its response to the middleware
passing it on (encode, sign, Set-Cookie).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from http.cookies import SimpleCookie
from time import perf_counter
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from blake2sign_web.starlette import SessionMiddleware

CHOICE_COOKIE = "example_engine"
SESSION_COOKIE = "session"
MAX_AGE = 14 * 24 * 3600
_MARKS = "example.session_timing"


@dataclass(frozen=True)
class Engine:
    label: str
    #: Its name in the request benchmark's results (docs/benchmarks/results.json).
    bench_key: str


ENGINES = {
    "ours": Engine("blake2sign_web SessionMiddleware", "blake2sign_web SessionMiddleware"),
    "starlette": Engine("Starlette SessionMiddleware (itsdangerous)", "Starlette SessionMiddleware"),
    "starsessions": Engine("starsessions, CookieStore", "starsessions CookieStore"),
}
DEFAULT = "ours"


def chosen(cookie_header: str | None) -> str:
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(cookie_header or "")
    except Exception:  # a malformed Cookie header: the default engine
        return DEFAULT
    morsel = cookies.get(CHOICE_COOKIE)
    return morsel.value if morsel is not None and morsel.value in ENGINES else DEFAULT


class TimeFromOutside:
    """Around a session middleware: adds Server-Timing from the marks ``MarkApplication`` leaves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        marks: dict[str, float] = {"start": perf_counter()}
        scope[_MARKS] = marks

        async def send_with_timing(message: Message) -> None:
            if message["type"] == "http.response.start" and "app" in marks:
                save_ms = (perf_counter() - marks["response"]) * 1000
                load_ms = (marks["app"] - marks["start"]) * 1000
                header = f"b2sw-load;dur={load_ms:.3f}, b2sw-save;dur={save_ms:.3f}".encode()
                message["headers"] = [*message.get("headers", ()), (b"server-timing", header)]
            await send(message)

        await self.app(scope, receive, send_with_timing)


class MarkApplication:
    """Inside a session middleware: notes when the application starts and when it starts its response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        marks = scope.get(_MARKS)
        if marks is None:
            await self.app(scope, receive, send)
            return
        marks["app"] = perf_counter()

        async def mark_response(message: Message) -> None:
            if message["type"] == "http.response.start":
                marks["response"] = perf_counter()
            await send(message)

        await self.app(scope, receive, mark_response)


def build_stacks(app: ASGIApp, secret_key: str) -> dict[str, ASGIApp]:
    """One ASGI stack per engine, around the same application."""
    from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware

    stacks: dict[str, ASGIApp] = {
        "ours": SessionMiddleware(app, secret_key, SESSION_COOKIE, MAX_AGE, server_timing=True),
        "starlette": TimeFromOutside(
            StarletteSessionMiddleware(MarkApplication(app), secret_key, SESSION_COOKIE, MAX_AGE)
        ),
    }
    try:
        import starsessions
    except ImportError:  # not installed: the choice is left out
        return stacks
    autoloaded = starsessions.SessionAutoloadMiddleware(MarkApplication(app))
    stacks["starsessions"] = TimeFromOutside(
        starsessions.SessionMiddleware(
            autoloaded,
            store=starsessions.CookieStore(secret_key),
            lifetime=MAX_AGE,
            cookie_name=SESSION_COOKIE,
            cookie_https_only=False,  # the example runs on http://127.0.0.1
        )
    )
    return stacks


class EngineSwitch:
    """The ASGI app uvicorn runs: each HTTP request goes to the stack of its browser's engine."""

    def __init__(self, app: ASGIApp, secret_key: str) -> None:
        self.app = app
        self.stacks = build_stacks(app, secret_key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        cookie = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"cookie"), None)
        name = chosen(cookie)
        scope["example.engine"] = name if name in self.stacks else DEFAULT
        await self.stacks[scope["example.engine"]](scope, receive, send)


def engine_of(scope: Any) -> str:
    return str(scope.get("example.engine", DEFAULT))


def secret_key() -> str:
    return os.environ.get("EXAMPLE_SECRET_KEY", "example-only-secret-key-do-not-use-in-production-0123456789")
