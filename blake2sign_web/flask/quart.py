"""Quart sessions: ``QuartSessions``, the Flask adapter's configuration on Quart's async ``SessionInterface``.

Loading and saving a signed cookie do no I/O, so the coroutines never leave the event loop. Quart does not mark
a session read through ``quart.session``, so its session marks reads itself (for Vary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask.sessions import SessionMixin
from quart.sessions import SessionInterface

from ..session_state import ReadTrackingSession
from .sessions import Configurations, SessionParts, logger

if TYPE_CHECKING:
    from quart import Quart


class QuartSession(ReadTrackingSession, SessionParts, SessionMixin):
    """``quart.session``: ``FlaskSession``'s contract, its reads marking it accessed."""


class QuartSessions(SessionInterface):
    """This project's signed-cookie sessions for a Quart app: ``QuartSessions(app)``, or ``init_app(app)``."""

    def __init__(self, app: Quart | None = None) -> None:
        self.configurations = Configurations(QuartSession, revocable=False)
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
