"""Redis for Flask: ended sessions and "log out everywhere" (``revoke_session``, ``log_out_everywhere``), through
a blocking redis-py client: ``app.config["BLAKE2SIGN_WEB"]["REVOCATION"] = RedisStore(url, key_prefix=...)``.
The plans and what a session read or written does with them are the core's (``store_plans``,
``revocable_session``); this module sends the plans and keeps the request's ``SessionState`` on its session.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import flask

from .. import revocation
from ..redis_commands import send_sync
from ..revocable_session import checked, response_steps, revocation_check
from ..revocation import DEFAULT_CLOCK_SKEW, DEFAULT_TIMEOUT, Policy, StoreUnavailable
from ..session_request import generation_to_sign, read_with_revocation
from ..session_revocation import SessionState
from ..session_state import Session
from ..store_plans import Plan, Replicas, StorePlans, T, drive, unavailable_on_error
from ..stores import logger, parse_store_url, redis_client

__all__ = ["RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


class RedisStore:
    """The records of ``blake2sign_web.revocation`` in Redis, through a blocking redis-py client (or a store URL:
    ``redis://``, ``redis+cluster://``, ``redis+sentinel://``). ``user_key``: the session key of the logged-in
    user (Flask-Login's ``_user_id`` by default). The other arguments are Starlette's ``RedisStore``'s."""

    def __init__(
        self,
        client: Any,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_unavailable: Policy = "closed",
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        key_prefix: str = "",
        wait_replicas: int = 0,
        user_key: str = "_user_id",
    ) -> None:
        self.timeout = revocation.check_timeout(timeout, "RedisStore timeout")
        self.on_unavailable = revocation.check_policy(on_unavailable, "RedisStore on_unavailable")
        self.clock_skew = revocation.check_clock_skew(clock_skew, "RedisStore clock_skew")
        self.key_prefix = revocation.check_key_prefix(key_prefix, "RedisStore key_prefix")
        wait_replicas = revocation.check_wait_replicas(wait_replicas, "RedisStore wait_replicas")
        self._replicas = Replicas(wait_replicas, self.timeout)
        self._plans = StorePlans(self.key_prefix, self.clock_skew, self._replicas, revocation.CLOCK)
        if isinstance(client, str):
            sockets = {"socket_timeout": self.timeout, "socket_connect_timeout": self.timeout}
            client = redis_client(parse_store_url(client), sockets, asynchronous=False)
        from redis.cluster import RedisCluster

        self.client, self.is_cluster, self.user_key = client, isinstance(client, RedisCluster), user_key
        self.fails_open = self.on_unavailable == "open"

    def revoke_session(self, session_id: bytes, lifetime: int) -> None:
        self._run(self._plans.end_session(session_id, lifetime))

    def log_out_everywhere(self, user_id: object, lifetime: int) -> str:
        return self._run(self._plans.log_out_everywhere(user_id, lifetime))

    def user_generation(self, user_id: object) -> str:
        return self._run(self._plans.user_generation(user_id))

    def is_revoked(self, session_id: bytes | None, user_id: object, issued_at: int, generation: str | None) -> bool:
        """Whether a verified session was ended: one ``MGET`` of the records the core names."""
        check = revocation.session_check(session_id, user_id, issued_at, generation, self.key_prefix, self.clock_skew)
        if check is None:
            return False
        with unavailable_on_error("check a session", "Redis"):
            values = self.client.mget_nonatomic(check.keys) if self.is_cluster else self.client.mget(check.keys)
        return check.revoked(values)

    def _run(self, plan: Plan[T]) -> T:
        with unavailable_on_error(plan.action, "Redis"):
            return drive(plan.steps, partial(send_sync, self.client, self.is_cluster, self._replicas, time.sleep))


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
