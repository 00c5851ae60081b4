"""Middlewares that do nothing but be there: the floor any session middleware pays for its layering.

The breakdown compares each session middleware with these: a pure ASGI middleware that wraps
``send`` (as every session middleware must, to add its headers) and passes every message on,
and a Django middleware that calls the next one and returns its response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class PassThroughASGI:
    """A pure ASGI middleware that wraps ``send`` and changes nothing."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(message: Any) -> None:
            await send(message)

        await self.app(scope, receive, send_wrapper)


class PassThroughMiddleware:
    """A Django middleware that calls the next one and returns its response."""

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        return self.get_response(request)
