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


class ReadyValueSigner:
    """Stands in for a session middleware's signer: ``loads`` gives a copy of the value the first token held,
    verifying and decoding nothing after that first call. Everything else is the real signer's."""

    def __init__(self, signer: Any) -> None:
        self.signer = signer
        self.value: dict[str, Any] | None = None

    def loads(self, token: Any, **options: Any) -> Any:
        if self.value is None:
            self.value = self.signer.loads(token, **options)
        return dict(self.value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.signer, name)


def ready_value_session_middleware(app: Any, **options: Any) -> Any:
    """Our Starlette session middleware, its cookie's value given instead of verified and decoded: subtracted from
    the real one, what verifying and decoding costs a request (this probe pays one call and a dict copy for it)."""
    from blake2sign_web.starlette import SessionMiddleware

    middleware = SessionMiddleware(app, **options)
    middleware.signer = ReadyValueSigner(middleware.signer)  # type: ignore[assignment]
    return middleware
