"""A session read and answered with revocation on, sans-IO: what the adapter asks its store, and what each answer does.

The adapter reads the cookie (``session_token``), asks its store what ``revocation_check`` names (the only I/O,
awaited or not) and hands the answer to ``checked``. Before its response writes the session, ``response_steps``
says whether the client's session ends (``SessionState.end``, then the store's record) and whether its user's
generation is signed in (``SessionState.known_generation``, else the store's record); ``before_write`` does
both with an asyncio store's calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .session_request import RevocationSteps, checked_session, generation_to_sign, revocation_steps
from .session_revocation import SessionState
from .session_state import Session
from .session_token import Presented, ReadToken, presented
from .stores import StoreUnavailable
from .stores import logger as revocation_logger

StateT = TypeVar("StateT", bound=SessionState)


def revocation_check(read: ReadToken | None, cookie: str | None, session: Session) -> Presented | None:
    """What the store is asked of the cookie read as ``session`` (``presented``, which takes the signed generation
    out of it); None: no valid cookie came, nothing to ask (the session is a new one)."""
    if read is None or cookie is None or (read.token is None and read.migrated_at is None):
        return None
    return presented(read.token, read.migrated_at, cookie, session)


def checked(
    session: Session,
    state: StateT,
    revoked: bool | StoreUnavailable,
    *,
    fails_open: bool,
    setting: str,
    cookie_name: str,
    unchecked: Callable[[], StateT],
) -> tuple[Session, StateT]:
    """``checked_session`` for the store's answer ``revoked``; an ended session's refusal logged by cookie name."""
    if revoked is True:
        revocation_logger.info("Session cookie %r refused: the session was ended", cookie_name)
    return checked_session(session, state, revoked, fails_open=fails_open, setting=setting, unchecked=unchecked)


def client_state(read: ReadToken | None, cookie: str | None) -> SessionState:
    """The session as revocation sees it when nothing read it yet: the cookie's own id when it verified (``read``
    with data), else none (no valid cookie: no session to end)."""
    if read is None or read.data is None or cookie is None:
        return SessionState.of_client(None)
    return SessionState.of_client(presented(read.token, read.migrated_at, cookie, read.data).session_id)


def checked_read(
    read: ReadToken,
    cookie: str,
    data: dict[str, Any],
    user_key: str,
    is_revoked: Callable[[Presented, object], bool],
    *,
    fails_open: bool,
    setting: str,
    cookie_name: str,
) -> tuple[bool, SessionState, bool]:
    """A verified cookie's session ``data`` read with revocation on, for a blocking store: what the store is asked
    (``presented``, which takes the signed generation out of ``data``; the user by ``user_key``), its answer
    (``is_revoked``; StoreUnavailable when it cannot say) and ``checked``. Whether ``data`` is kept (else the
    session reads as empty), the session's state (the cookie's; ``unchecked`` when read as empty with the store
    down, its cookie kept), and whether the store had it ended (its cookie is to be deleted)."""
    client = presented(read.token, read.migrated_at, cookie, data)
    user = data.get(user_key)
    state = SessionState(client.session_id, True, user, client.generation or "")
    try:
        revoked: bool | StoreUnavailable = is_revoked(client, user)
    except StoreUnavailable as error:
        revoked = error
    session = Session(data)
    kept, _ = checked(
        session,
        state,
        revoked,
        fails_open=fails_open,
        setting=setting,
        cookie_name=cookie_name,
        unchecked=lambda: state,  # the client's session, its cookie kept: emptying it still ends it
    )
    return kept is session, state, revoked is True


def response_steps(session: Session, state: SessionState, cookie_name: str, store: str) -> RevocationSteps:
    """``revocation_steps``; a session read as empty because the ``store`` was down is not written (logged)."""
    steps = revocation_steps(session, state)
    if steps.discard:
        revocation_logger.warning(
            "Session %r not saved: it was read as empty because %s was down; the cookie is kept", cookie_name, store
        )
        session.modified = False
    return steps


async def before_write(
    session: Session,
    state: SessionState,
    user_key: str,
    cookie_name: str,
    end: Callable[[bytes], Awaitable[None]],
    generation_of: Callable[[object], Awaitable[str]],
    store: str = "Redis",
) -> None:
    """``response_steps`` with an asyncio store: ``end`` the client's session (its id), or sign in its user's
    generation (``session[user_key]``'s), read by ``generation_of`` if the user logged in during the request."""
    steps = response_steps(session, state, cookie_name, store)
    if steps.end and (client := state.end()) is not None:  # the cookie's own id, also after keep() gave a new one
        try:
            await end(client)
        except StoreUnavailable as error:  # the response is under way: log it, the cookie is deleted anyway
            revocation_logger.error("Session could not be revoked: %s", error)
    if steps.stamp and (user := dict.get(session, user_key)) is not None:
        known = state.known_generation(user)
        try:
            generation = known if known is not None else state.took(user, await generation_of(user))
        except StoreUnavailable as error:  # none is signed: the session is refused once its user has one
            generation = state.generation_unread(user, error)
        generation_to_sign(session, generation)
