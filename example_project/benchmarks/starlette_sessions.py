"""Starlette request cost: no session middleware, Starlette's SessionMiddleware, ours.

    python -m example_project.benchmarks.starlette_sessions [--quick]

Direct ASGI calls, no network: each request is one ``await app(scope, receive, send)``
on a full Starlette application (its ServerErrorMiddleware, ExceptionMiddleware and
router included), carrying the session cookie the previous response set. The view reads
and writes a small session (a user id, a CSRF token, a counter). The baseline app has no
session middleware and a view that does the same work on a plain dict. Reported: time per
request, the cost each middleware adds over the baseline, ours' added cost as a share of
Starlette's (the target is at most 35%), and the cookie sizes each writes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message

from blake2sign_web.starlette import SessionMiddleware

from .timing import Timing, format_time, machine, measure, progress, table

SECRET = "benchmark-secret-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ"
TARGET = 0.35
SMALL_SESSION = {"user_id": 12345, "csrf": "9f86d081884c7d659a2feaa0c55ad015", "count": 0}
TYPICAL_SESSION = {
    "user_id": 12345,
    "csrf": "9f86d081884c7d659a2feaa0c55ad015",
    "theme": "dark",
    "locale": "en-GB",
    "cart": [{"sku": f"SKU-{i:04d}", "qty": 1 + i % 3, "price": "19.99"} for i in range(5)],
    "flash": ["Your basket was updated."],
}


async def with_session(request: Request) -> PlainTextResponse:
    session = request.session
    if "user_id" not in session:
        session.update(request.app.state.seed)
    session["count"] = session.get("count", 0) + 1
    return PlainTextResponse(str(session["user_id"]))


async def without_session(request: Request) -> PlainTextResponse:
    session = dict(SMALL_SESSION)  # the same dict work, so only the middleware differs
    session["count"] = session.get("count", 0) + 1
    return PlainTextResponse(str(session["user_id"]))


def build(middleware: list[Middleware], seed: dict[str, Any] = SMALL_SESSION) -> Starlette:
    view = with_session if middleware else without_session
    app = Starlette(routes=[Route("/", view)], middleware=middleware)
    app.state.seed = seed
    return app


class Driver:
    """One request through ``app``, driven without an event loop: nothing in it waits on I/O."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.cookie: bytes | None = None
        self.set_cookie: bytes | None = None

    def scope(self) -> dict[str, Any]:
        headers = [(b"host", b"testserver"), (b"user-agent", b"bench")]
        if self.cookie is not None:
            headers.append((b"cookie", self.cookie))
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/",
            "raw_path": b"/",
            "root_path": "",
            "query_string": b"",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }

    async def _receive(self) -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def _send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            assert message["status"] == 200, message
            for name, value in message["headers"]:
                if name == b"set-cookie":
                    self.set_cookie = value

    def request(self, scope: dict[str, Any]) -> None:
        coroutine = self.app(scope, self._receive, self._send)
        try:
            coroutine.send(None)
        except StopIteration:
            return
        coroutine.close()
        raise RuntimeError("the request suspended: it cannot be driven without an event loop")

    def prime(self) -> None:
        """Make one request to get a session cookie, then send that cookie on every later request."""
        self.request(self.scope())
        if self.set_cookie is not None:
            self.cookie = self.set_cookie.split(b";", 1)[0]

    def runner(self) -> Callable[[], None]:
        scope = self.scope()

        def run() -> None:
            self.request(dict(scope))  # a fresh scope each time, as a server gives

        return run


def cookie_sizes(seed: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(name, value bytes, Set-Cookie bytes) for each middleware writing ``seed``."""
    rows = []
    for name, middleware in middlewares().items():
        if not middleware:
            continue
        driver = Driver(build(middleware, seed))
        driver.request(driver.scope())
        assert driver.set_cookie is not None
        value = driver.set_cookie.split(b";", 1)[0].split(b"=", 1)[1]
        rows.append((name, len(value), len(driver.set_cookie)))
    return rows


def middlewares() -> dict[str, list[Middleware]]:
    return {
        "no session middleware": [],
        "Starlette SessionMiddleware": [Middleware(StarletteSessionMiddleware, secret_key=SECRET)],
        "blake2sign_web SessionMiddleware": [Middleware(SessionMiddleware, secret_key=SECRET)],
        "blake2sign_web, blake3": [Middleware(SessionMiddleware, secret_key=SECRET, hasher="blake3")],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats (a smoke run)")
    args = parser.parse_args(argv)
    repeat, target = (3, 0.05) if args.quick else (9, 0.3)

    progress(f"Starlette sessions benchmark on {machine()}")
    rows: list[Timing] = []
    for name, middleware in middlewares().items():
        driver = Driver(build(middleware))
        driver.prime()
        rows.append(measure(name, driver.runner(), repeat=repeat, target=target))

    baseline, starlette, ours = rows[0], rows[1], rows[2]
    print(f"## Starlette request cost ({machine()})\n")
    print(table("One GET that reads and writes a small session, direct ASGI call", rows, baseline.name))
    print("| | added over baseline (best) | added (median) | share of Starlette's added cost |")
    print("|---|---:|---:|---:|")
    for row in rows[1:]:
        added, added_median = row.best - baseline.best, row.median - baseline.median
        share = added / (starlette.best - baseline.best)
        print(f"| {row.name} | {format_time(added)} | {format_time(added_median)} | {share:.0%} |")
    share = (ours.best - baseline.best) / (starlette.best - baseline.best)
    verdict = "meets" if share <= TARGET else "MISSES"
    print(f"\nOurs adds {share:.0%} of what Starlette's SessionMiddleware adds: {verdict} the {TARGET:.0%} target.\n")

    print("### Cookie sizes\n")
    print("| session | middleware | cookie value | whole Set-Cookie |")
    print("|---|---|---:|---:|")
    for label, seed in (("small (3 keys)", SMALL_SESSION), ("typical (user, CSRF, 5-line cart)", TYPICAL_SESSION)):
        for name, value_size, header_size in cookie_sizes(seed):
            print(f"| {label} | {name} | {value_size} B | {header_size} B |")
    print()
    return 0 if share <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
