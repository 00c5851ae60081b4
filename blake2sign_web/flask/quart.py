"""Quart sessions: ``QuartSessions``, the Flask adapter's configuration on Quart's async ``SessionInterface``."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import flask
import quart
from flask.sessions import SessionMixin
from quart.sessions import SessionInterface

from ..sessions.state import ReadTrackingSession
from ..stores.plans import adrive
from ..stores.redis_stores import AsyncRedisStore
from .revocation import UserKey, ending_of, logging_out_of
from .sessions import WATCHED, Configurations, SessionParts, Watched, check_app

if TYPE_CHECKING:
    from quart import Quart


class WatchedQuartConfig(Watched, quart.Config):
    """Quart's ``Config``, watched (``blake2sign_web.flask.sessions.Watched``)."""

    __slots__ = ()


WATCHED[quart.Config] = WatchedQuartConfig


class QuartSession(ReadTrackingSession, SessionParts, SessionMixin):
    """``quart.session``: ``FlaskSession``'s contract, its reads marking it accessed."""


class QuartSessions(SessionInterface):
    """This project's signed-cookie sessions for a Quart app: ``QuartSessions(app)``, or ``init_app(app)``."""

    def __init__(self, app: Quart | None = None) -> None:
        self.configurations = Configurations(QuartSession, asynchronous=True)
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Quart) -> None:
        """Make this ``app``'s session interface, its configuration checked now."""
        check_app(app, asynchronous=True)
        app.session_interface = self  # type: ignore[assignment]  # Quart annotates its own class
        self.configurations.of(app)

    async def open_session(self, app: Quart, request: Any) -> SessionMixin | None:
        configuration = self.configurations.of(app)
        if configuration is None:
            return None
        # Every Cookie header: Quart's test client sends one per cookie, as HTTP/2 clients do (request.cookies too).
        # The ASGI scope's raw ones, not request.headers (text, title-cased: a copy per request).
        raw: bytes | None = None
        for name, value in request.scope["headers"]:
            if name == b"cookie":
                raw = value if raw is None else raw + b"; " + value
        if configuration.lazy:  # verified and decoded when first used (``lazy_session``, without its call)
            if raw is None:
                return configuration.session_class()  # type: ignore[return-value]
            session = configuration.lazy_class()
            session.source = (raw, configuration.loader)
            return session  # type: ignore[return-value]
        header = None if raw is None else raw.decode("latin-1")
        token, *chunks = configuration.token(header, lambda: request.cookies)
        if configuration.store is None:  # nothing to await: no plan driven
            return configuration.opened(configuration.loader.for_cookie(token), *chunks)  # type: ignore[return-value]
        return configuration.opened(await adrive(configuration.loading(token), configuration.ask), *chunks)  # type: ignore[return-value]

    def is_null_session(self, obj: object) -> bool:
        """``FlaskSessions.is_null_session``: a session never used is not saved (no ``ensure_async``, no await)."""
        try:
            return obj.nothing_to_save  # type: ignore[attr-defined,no-any-return]
        except AttributeError:  # not a session of this interface's
            return super().is_null_session(obj)

    async def save_session(self, app: Quart, session: SessionMixin | None, response: Any) -> None:
        if session is None:  # opening it failed (a bad setting, already raised): no second error
            return
        if response is None:  # a websocket: no cookie can be set (Quart's own interface says the same)
            if session.modified:  # on app.logger, as Quart's own interface says it
                app.logger.error("Session modified during websocket handling: the changes are lost (no cookie to set)")
            return
        configuration = session.configuration or self.configurations.of(app)  # type: ignore[attr-defined]
        if configuration is None:
            return
        if configuration.store is None:
            configuration.save(session, response)
            return
        permanent = configuration.refreshed(session)  # before the store's part, which signs what is written
        written = configuration.cookies(
            session, permanent, await adrive(configuration.writing(session), configuration.ask)
        )
        configuration.save(session, response, written)


class RedisStore(UserKey, AsyncRedisStore):
    """The core's ``AsyncRedisStore`` (``blake2sign_web.stores.redis_stores``), with ``user_key`` as Flask's."""


def _quart_session(helper: str) -> Any:
    """The Quart request's (or websocket's) session; a RuntimeError at once outside Quart (from a Flask view the
    coroutine would never run, and the user would stay logged in)."""
    if quart.has_request_context() or quart.has_websocket_context():
        return quart.session._get_current_object()  # type: ignore[attr-defined]
    if flask.has_request_context():
        raise RuntimeError(
            f"blake2sign_web.flask.quart.{helper}() is Quart's, awaited in a Quart view; in a Flask view, call "
            f"blake2sign_web.flask.revocation.{helper}() (not awaited)"
        )
    raise RuntimeError(f"{helper}() ends the request's session: await it in a Quart view")


def revoke_session() -> Coroutine[Any, Any, None]:
    """``flask.revocation.revoke_session``, awaited; not a coroutine function, so outside Quart it raises at once."""
    return adrive(*ending_of(_quart_session("revoke_session")))


def log_out_everywhere(user_id: object | None = None, *, keep_current: bool = False) -> Coroutine[Any, Any, None]:
    """``blake2sign_web.flask.revocation.log_out_everywhere``, awaited (and, as ``revoke_session``, checked at once)."""
    return adrive(*logging_out_of(_quart_session("log_out_everywhere"), user_id, keep_current))
