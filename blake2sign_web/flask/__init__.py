"""Flask integration: signed-cookie sessions on the session core (``FlaskSessions``)."""

from __future__ import annotations

from .sessions import FlaskSessions, SessionCookieTooLarge

__all__ = ["FlaskSessions", "SessionCookieTooLarge"]
