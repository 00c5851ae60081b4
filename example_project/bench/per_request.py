"""Our session middlewares with a signer built on every request instead of the cached one.

The seeds' lesson, at request level: building a ``SerializerSigner`` (key derivation,
option checks) on every request is what the cache saves. These subclasses record the
exact arguments the middleware gives the signer cache at start-up, then construct fresh
signers with them before each request, so nothing else differs from the cached rows.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from blake2sign_web import SerializerSigner
from blake2sign_web.django import conf as django_conf
from blake2sign_web.django.middleware import SessionMiddleware as OurDjangoMiddleware
from blake2sign_web.sessions import token as session_token
from blake2sign_web.starlette import sessions as starlette_sessions

Call = tuple[Any, dict[str, Any]]


@contextmanager
def recording_signers(module: Any) -> Iterator[list[Call]]:
    """Within the block, every ``module.get_signer(secret, **options)`` call is recorded."""
    real = module.get_signer
    calls: list[Call] = []

    def recording(secret: Any, **options: Any) -> SerializerSigner:
        calls.append((secret, options))
        return real(secret, **options)  # type: ignore[no-any-return]

    module.get_signer = recording
    try:
        yield calls
    finally:
        module.get_signer = real


class DjangoSignerPerRequest(OurDjangoMiddleware):
    """Our Django middleware, its engine's signers rebuilt before every request."""

    def __init__(self, get_response: Callable[..., Any]) -> None:
        super().__init__(get_response)
        with recording_signers(session_token) as calls:
            django_conf.reset()
            django_conf.session_config()
        self._calls = calls

    def __call__(self, request: Any) -> Any:
        (reader_secret, reader), (writer_secret, writer), _unbounded = self._calls  # session_signers: 3
        config = django_conf.session_config()
        signer = SerializerSigner(reader_secret, **reader)
        token_reader = copy.copy(config.reader)  # the configuration's reader, verifying with the new signer
        token_reader.signer = signer
        django_conf._config = dataclasses.replace(
            config, signer=signer, writer=SerializerSigner(writer_secret, **writer), reader=token_reader
        )
        return super().__call__(request)


class StarletteSignerPerRequest(starlette_sessions.SessionMiddleware):
    """Our Starlette middleware, its signers rebuilt before every request."""

    def __init__(self, app: Any, **options: Any) -> None:
        with recording_signers(session_token) as calls:
            super().__init__(app, **options)
        if len(calls) != 3:  # session_token.session_signers: reader, writer, unbounded
            raise RuntimeError(f"the middleware built {len(calls)} signers; this probe knows 3")
        self._calls = calls

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        reader, writer, unbounded = (SerializerSigner(secret, **options) for secret, options in self._calls)
        self.signer, self._writer, self._unbounded = reader, writer, unbounded
        self._session_writer.writer = writer
        self._reader.signer, self._reader.unbounded = reader, unbounded
        await super().__call__(scope, receive, send)
