"""Quart sessions on the session core: ``QuartSessions``, the Flask adapter's configuration on Quart's async contract.

Quart reads the same config keys as Flask (``SESSION_COOKIE_*``, ``PERMANENT_SESSION_LIFETIME``...) and its
session is Flask's ``SessionMixin``: the configuration, the reading and the writing are ``sessions``' (the
core's rules, through it). Loading and saving a signed cookie do no I/O, so the coroutines do not leave the event
loop. Quart does not mark a session read through ``quart.session``, so its session marks reads itself (Vary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask.sessions import SessionMixin
from quart.sessions import SessionInterface

from ..session_state import ReadTrackingSession
from .sessions import Configurations, FlaskSession, logger

if TYPE_CHECKING:
    from quart import Quart


class QuartSession(ReadTrackingSession, SessionMixin):
    """``quart.session``: ``FlaskSession``'s contract, its reads marking it accessed."""

    sent_chunks = FlaskSession.sent_chunks
    incomplete = FlaskSession.incomplete
    pending = FlaskSession.pending
    configuration = FlaskSession.configuration


class QuartSessions(SessionInterface):
    """This project's signed-cookie sessions for a Quart app: ``QuartSessions(app)``, or ``init_app(app)``."""

    def __init__(self, app: Quart | None = None) -> None:
        self.configurations = Configurations(QuartSession)
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Quart) -> None:
        """Make this ``app``'s session interface, its configuration checked now."""
        app.session_interface = self  # type: ignore[assignment]  # Quart annotates its own class
        self.configurations.of(app)

    async def open_session(self, app: Quart, request: Any) -> SessionMixin | None:
        configuration = self.configurations.of(app)
        if configuration is None:
            return None
        return configuration.open(request.headers.get("Cookie"), lambda: request.cookies)  # type: ignore[return-value]

    async def save_session(self, app: Quart, session: SessionMixin, response: Any) -> None:
        if response is None:  # a websocket: no cookie can be set (Quart's own interface says the same)
            if session.modified:
                logger.error("Session modified during websocket handling: the changes are lost (no cookie to set)")
            return
        self.configurations.save(app, session, response)
