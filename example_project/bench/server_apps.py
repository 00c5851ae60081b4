"""The applications the HTTP benchmark serves: one engine per server process, chosen by environment.

``BENCH_ENGINE`` names a row of ``request_cost.DJANGO_ENGINES`` or ``starlette_middlewares()``;
``BENCH_DB`` is the SQLite file the benchmark migrated; ``BENCH_SERVICES`` lists the optional
servers that answered ("redis,postgres"). For the investigation of the HTTP overhead
(``example_project.bench.gap``): ``BENCH_GC=off`` disables the garbage collector after start-up, and
``BENCH_SET_COOKIE`` makes the session-less app send that Set-Cookie header as is, and
``BENCH_APP_TIMER=1`` times the application itself (see ``AppTimer``). ``BENCH_MARKERS=1`` answers
``/__bench_start``, ``/__bench_zero`` and ``/__bench_dump`` with valgrind's client requests (see ``callgrind``).

    gunicorn example_project.bench.server_apps:django_app     (Django, WSGI)
    uvicorn example_project.bench.server_apps:starlette_app   (Starlette, ASGI)
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any

from . import request_cost


def _services() -> set[str]:
    return {name for name in os.environ.get("BENCH_SERVICES", "").split(",") if name}


def _gc() -> None:
    if os.environ.get("BENCH_GC") == "off":
        gc.collect()
        gc.freeze()
        gc.disable()


def _django() -> Any:
    request_cost.configure_django(Path(os.environ["BENCH_DB"]), _services(), migrate=False)
    spec = request_cost.DJANGO_ENGINES[os.environ["BENCH_ENGINE"]]
    request_cost.PLAIN_SET_COOKIE = os.environ.get("BENCH_SET_COOKIE")
    handler = request_cost.django_handler(spec)
    request_cost.use_stores(spec)
    _gc()
    app = AppTimer().wsgi(handler) if os.environ.get("BENCH_APP_TIMER") == "1" else handler
    return Markers().wsgi(app) if os.environ.get("BENCH_MARKERS") == "1" else app


def _nodelay_for_inherited_sockets() -> None:
    """uvicorn --workers N hands each worker the listening socket by file descriptor, rebuilt with
    ``proto=0``; asyncio sets TCP_NODELAY on accepted connections only when ``proto`` is TCP, so every
    response waited ~40 ms for a delayed ACK (Nagle), whatever the application did. Set it regardless."""
    import asyncio.base_events
    import socket

    def set_nodelay(sock: socket.socket) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    asyncio.base_events._set_nodelay = set_nodelay  # type: ignore[attr-defined]


def _starlette() -> Any:
    _nodelay_for_inherited_sockets()
    middleware = request_cost.starlette_middlewares(_services())[os.environ["BENCH_ENGINE"]]
    app = request_cost.starlette_app(middleware, os.environ.get("BENCH_SET_COOKIE"))
    _gc()
    app = AppTimer().asgi(app) if os.environ.get("BENCH_APP_TIMER") == "1" else app
    return Markers().asgi(app) if os.environ.get("BENCH_MARKERS") == "1" else app


def __getattr__(name: str) -> Any:
    """Build only the application asked for: a Starlette server never configures Django."""
    if name == "django_app":
        return _django()
    if name == "starlette_app":
        return _starlette()
    raise AttributeError(name)


class AppTimer:
    """With ``BENCH_APP_TIMER=1``: the CPU time the application itself spends per request.

    Thread CPU time from the server's call of the application to its return (for WSGI, through the
    response's iteration), so the server's own work (accepting, parsing the request, writing the
    socket) is left out. ``GET /__bench_stats`` answers "requests nanoseconds" and starts again.
    """

    STATS = "/__bench_stats"

    def __init__(self) -> None:
        self.count = 0
        self.nanoseconds = 0

    def take(self) -> bytes:
        text = f"{self.count} {self.nanoseconds}".encode()
        self.count = self.nanoseconds = 0
        return text

    def wsgi(self, app: Any) -> Any:
        def timed(environ: dict[str, Any], start_response: Any) -> Any:
            if environ.get("PATH_INFO") == self.STATS:
                start_response("200 OK", [("Content-Type", "text/plain")])
                return [self.take()]
            started = time.thread_time_ns()
            body = b"".join(app(environ, start_response))
            self.nanoseconds += time.thread_time_ns() - started
            self.count += 1
            return [body]

        return timed

    def asgi(self, app: Any) -> Any:
        async def timed(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            if scope["path"] == self.STATS:
                body = self.take()
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": body})
                return
            started = time.thread_time_ns()
            await app(scope, receive, send)
            self.nanoseconds += time.thread_time_ns() - started
            self.count += 1

        return timed


class Markers:
    """With ``BENCH_MARKERS=1``: callgrind's client requests: start instrumenting, zero the counters, dump them.

    Outside every middleware, so what lies between two marker requests is the worker serving the
    requests the client sent in between, and the two marker requests' own tails, alike for every engine.
    """

    START, ZERO, DUMP = "/__bench_start", "/__bench_zero", "/__bench_dump"

    def hit(self, path: str) -> bool:
        from . import callgrind

        if path == self.START:
            callgrind.start()
            return True
        if path == self.ZERO:
            callgrind.zero()
            return True
        if path == self.DUMP:
            callgrind.dump()
            return True
        return False

    def wsgi(self, app: Any) -> Any:
        def marked(environ: dict[str, Any], start_response: Any) -> Any:
            if self.hit(environ.get("PATH_INFO", "")):
                start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
                return [b"ok"]
            return app(environ, start_response)

        return marked

    def asgi(self, app: Any) -> Any:
        async def marked(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http" and self.hit(scope["path"]):
                await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
                await send({"type": "http.response.body", "body": b"ok"})
                return
            await app(scope, receive, send)

        return marked
