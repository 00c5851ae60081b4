"""Redis for Flask: ended sessions and "log out everywhere", through a blocking redis-py client (docs/flask.md)."""

from __future__ import annotations

import sys
from typing import Any

import flask

from ..sessions.revocable import ending, logging_out
from ..stores import redis_stores as redis_store
from ..stores.plans import drive
from ..stores.revocation import StoreUnavailable

__all__ = ["RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


class UserKey:
    """A store with ``user_key``: the session key of the logged-in user (Flask-Login's ``_user_id`` by default)."""

    def __init__(self, client: Any, *, user_key: str = "_user_id", **options: Any) -> None:
        super().__init__(client, **options)  # type: ignore[call-arg]
        self.user_key = user_key


class RedisStore(UserKey, redis_store.RedisStore):
    """The core's blocking ``RedisStore`` (a redis-py client or a store URL, and its options), with ``user_key``."""


def _configuration(session: Any) -> Any:
    if session.configuration is None or session.configuration.store is None:
        raise RuntimeError("no session revocation: set app.config['BLAKE2SIGN_WEB']['REVOCATION'] = RedisStore(...)")
    return session.configuration


def ending_of(session: Any) -> tuple[Any, Any]:
    """``revoke_session``'s plan (``sessions.revocable.ending``) for ``session``, and its store's ``ask``."""
    configuration = _configuration(session)
    return ending(session, session.revocation, configuration.lifetime), configuration.ask


def logging_out_of(session: Any, user_id: object | None, keep_current: bool) -> tuple[Any, Any]:
    """``log_out_everywhere``'s plan (``sessions.revocable.logging_out``) for ``session``, and its store's ``ask``."""
    c = _configuration(session)
    return logging_out(session, session.revocation, c.store.user_key, c.lifetime, user_id, keep_current), c.ask


def _flask_session(helper: str) -> Any:
    """The Flask request's session; outside one, a RuntimeError naming Quart's helper when a Quart view called it."""
    if not flask.has_request_context():
        quart = sys.modules.get("quart")
        if quart is not None and (quart.has_request_context() or quart.has_websocket_context()):
            raise RuntimeError(
                f"blake2sign_web.flask.revocation.{helper}() is Flask's (blocking); in a Quart view, "
                f"await blake2sign_web.flask.quart.{helper}()"
            )
    return flask.session._get_current_object()  # type: ignore[attr-defined]


def revoke_session() -> None:
    """End the request's session now, on every server (``session.clear()`` does it when the response is made):
    StoreUnavailable is raised here if Redis is down. The session is emptied, its cookie deleted."""
    drive(*ending_of(_flask_session("revoke_session")))


def log_out_everywhere(user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the session's user) that exists now; a later login is not
    ended. The request's own session: ``revocation.current_session_fate`` (docs/revocation.md)."""
    drive(*logging_out_of(_flask_session("log_out_everywhere"), user_id, keep_current))
