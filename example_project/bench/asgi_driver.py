"""Drive a Starlette application with direct ASGI calls, no event loop and no network, as uvicorn calls it.

Nothing in a session request waits on I/O, so one ``coroutine.send(None)`` runs it to the
end: what is timed is the application and its middleware, not an event loop or a socket.
What the application sees is what uvicorn gives it (``httptools_impl``): a fresh scope per
request with uvicorn's keys (``asgi``'s ``spec_version``, a copy of the lifespan ``state``),
run in a copy of the context, as the task uvicorn makes for each request runs.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message


class Driver:
    """One request through ``app``, driven without an event loop: nothing in it waits on I/O."""

    def __init__(self, app: ASGIApp, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.app = app
        #: An event loop for applications that do wait on I/O (a Redis store); None: drive directly.
        self.loop = loop
        self.cookie: bytes | None = None
        self.set_cookie: bytes | None = None

    def scope(self, path: str = "/", query: bytes = b"") -> dict[str, Any]:
        headers = [(b"host", b"testserver"), (b"user-agent", b"bench")]
        if self.cookie is not None:
            headers.append((b"cookie", self.cookie))
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": query,
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
            "state": {},
        }

    async def _receive(self) -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def _send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            if message["status"] != 200:
                raise RuntimeError(f"unexpected response: {message}")
            for name, value in message["headers"]:
                if name == b"set-cookie":
                    self.set_cookie = value

    def request(self, scope: dict[str, Any]) -> None:
        if self.loop is not None:
            self.loop.run_until_complete(self.app(scope, self._receive, self._send))
            return
        coroutine = self.app(scope, self._receive, self._send)
        try:
            # A task runs in a copy of the context it was made in: what one request sets ends with it.
            contextvars.copy_context().run(coroutine.send, None)
        except StopIteration:
            return
        coroutine.close()
        raise RuntimeError("the request suspended: it cannot be driven without an event loop")

    def prime(self, path: str = "/") -> None:
        """Make one request to get a session cookie, then send that cookie on every later request."""
        self.request(self.scope(path))
        if self.set_cookie is not None:
            self.cookie = self.set_cookie.split(b";", 1)[0]

    def runner(self) -> Callable[[], None]:
        scope = self.scope()

        def run() -> None:
            self.request({**scope, "state": {}})  # a fresh scope each time, as a server gives

        return run
