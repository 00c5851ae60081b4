"""Redis for Flask: ended sessions and "log out everywhere" (``revoke_session``, ``log_out_everywhere``), through
a blocking redis-py client: ``app.config["BLAKE2SIGN_WEB"]["REVOCATION"] = RedisStore(url, key_prefix=...)``.
The plans and what a session read or written does with them are the core's (``store_plans``,
``revocable_session``); this module sends the plans and keeps the request's ``SessionState`` on its session.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import flask

from .. import redis_store, revocation
from ..revocable_session import checked, response_steps, revocation_check
from ..revocation import StoreUnavailable
from ..session_request import generation_to_sign, read_with_revocation
from ..session_revocation import SessionState
from ..session_state import Session
from ..stores import logger

__all__ = ["RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


class RedisStore(redis_store.RedisStore):
    """The core's blocking ``RedisStore`` (``blake2sign_web.redis_store``: a redis-py client or a store URL, and
    its options), with ``user_key``: the session key of the logged-in user (Flask-Login's ``_user_id``)."""

    def __init__(self, client: Any, *, user_key: str = "_user_id", **options: Any) -> None:
        super().__init__(client, **options)
        self.user_key = user_key


def opened(store: RedisStore, loader: Any, cookie: str | None) -> Session:
    """The session of ``cookie`` checked against the store (``revocable_session``), its state kept on it."""
    read = None if cookie is None else loader.reader.read(cookie)
    session = loader.session_class() if read is None else loader.session(read, cookie)
    if (check := revocation_check(read, cookie, session)) is None:
        state = SessionState.of_client(None)
        session = read_with_revocation(session, state, False)
    else:
        user = dict.get(session, store.user_key)
        fresh = SessionState(check.session_id, True, user, check.generation or "")
        try:
            revoked: bool | StoreUnavailable = store.is_revoked(
                check.session_id, user, check.issued_at, check.generation
            )
        except StoreUnavailable as error:
            revoked = error
        unchecked = partial(SessionState.of_client, None)
        setting, name = "RedisStore on_unavailable", loader.cookie.name
        session, state = checked(
            session, fresh, revoked, fails_open=store.fails_open, setting=setting, cookie_name=name, unchecked=unchecked
        )
    session.revocation = state  # type: ignore[attr-defined]
    return session


def before_write(session: Any, store: RedisStore, lifetime: int, cookie_name: str) -> bytes:
    """What the response does first (``response_steps``): end the client's session, or sign in its user's
    generation; the id the token carries."""
    state: SessionState = session.revocation
    steps = response_steps(session, state, cookie_name, "Redis")
    if steps.end and (client := state.end()) is not None:
        try:
            store.revoke_session(client, lifetime)
        except StoreUnavailable as error:  # the cookie is deleted anyway
            logger.error("Session could not be revoked: %s", error)
    if steps.stamp and (user := dict.get(session, store.user_key)) is not None:
        generation_to_sign(session, state.generation_to_sign(user, store.user_generation))
    return state.session_id


def _revocable() -> tuple[Any, SessionState, RedisStore, int]:
    session: Any = flask.session
    configuration = session.configuration
    if configuration is None or configuration.store is None:
        raise RuntimeError("no session revocation: set app.config['BLAKE2SIGN_WEB']['REVOCATION'] = RedisStore(...)")
    return session, session.revocation, configuration.store, configuration.lifetime


def revoke_session() -> None:
    """End the request's session now, on every server (``session.clear()`` does it when the response is made):
    StoreUnavailable is raised here if Redis is down. The session is emptied, its cookie deleted."""
    session, state, store, lifetime = _revocable()
    if (client := state.client_session()) is not None:
        store.revoke_session(client, lifetime)
    state.ended()
    session.clear()


def log_out_everywhere(user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the session's user) that exists now; a later login is not
    ended. The request's own session: ``revocation.current_session_fate`` (docs/revocation.md)."""
    session, state, store, lifetime = _revocable()
    owner = session.get(store.user_key)
    if user_id is None and owner is None:
        raise ValueError(f"no user id in session[{store.user_key!r}]: pass user_id")
    user_id = owner if user_id is None else user_id
    fate = revocation.current_session_fate(owner, user_id, keep_current)
    generation = store.log_out_everywhere(user_id, lifetime)
    if fate == "keep":
        state.keep(user_id, generation)
        if owner is not None:
            session.modified = True  # re-signed with the new generation
    elif fate == "end":
        revoke_session()
