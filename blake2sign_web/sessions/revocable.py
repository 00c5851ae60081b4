"""A session read and answered with revocation on, sans-IO: what the adapter asks its store, and what each answer does.

The adapter reads the cookie (``sessions.token``), asks its store what ``revocation_check`` names (the only I/O,
awaited or not) and hands the answer to ``checked``. Before its response writes the session, ``response_steps``
says whether the client's session ends (``SessionState.end``, then the store's record) and whether its user's
generation is signed in (``SessionState.known_generation``, else the store's record).

The whole of a request's part (``opening``, ``writing``, and the application's ``ending``, ``logging_out``) is
written once as plans that yield their store questions (``Ask``): a blocking adapter drives them with ``ask``
(``stores.plans.drive``), an asyncio one with ``aask`` (``stores.plans.adrive``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from inspect import iscoroutinefunction
from typing import Any, NamedTuple, TypeVar

from ..stores.base import StoreUnavailable
from ..stores.base import logger as revocation_logger
from ..stores.plans import Steps
from ..stores.revocation import current_session_fate
from .request import (
    RevocationSteps,
    checked_session,
    generation_to_sign,
    read_with_revocation,
    revocation_steps,
)
from .revocation import SessionState
from .state import Session
from .token import Presented, ReadToken, presented

StateT = TypeVar("StateT", bound=SessionState)
T = TypeVar("T")


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


class Ask(NamedTuple):
    """One question for the store, as a step of the plans below: its ``method`` (``is_revoked``,
    ``revoke_session``, ``user_generation``, ``log_out_everywhere``) and ``args``. The step is sent the answer,
    or the ``StoreUnavailable`` the store raised (``ask``, ``aask``)."""

    method: str
    args: tuple[Any, ...]


def ask(store: Any, question: Ask) -> Any:
    """A blocking store's answer to ``question``, or its failure."""
    try:
        return getattr(store, question.method)(*question.args)
    except StoreUnavailable as error:
        return error


async def aask(store: Any, question: Ask) -> Any:
    """An asyncio store's answer to ``question``, or its failure."""
    try:
        return await getattr(store, question.method)(*question.args)
    except StoreUnavailable as error:
        return error


def raised(answer: T) -> T:
    """``answer``, or the store's failure raised (a call the application made, which must not pass unnoticed)."""
    if isinstance(answer, StoreUnavailable):
        raise answer
    return answer


def opening(loader: Any, cookie: str | None, user_key: str, *, fails_open: bool, setting: str) -> Steps[Session]:
    """The session of ``cookie`` (``loader``: a ``SessionLoader``), checked against the store if it came with a
    valid cookie (``revocation_check``, ``checked``; its user by ``user_key``), its ``SessionState`` kept on it
    as ``session.revocation``."""
    read = None if cookie is None else loader.reader.read(cookie)
    session = loader.session_class() if read is None else loader.session(read, cookie)
    if (check := revocation_check(read, cookie, session)) is None:
        state = SessionState.of_client(None)
        session = read_with_revocation(session, state, False)
    else:
        user = dict.get(session, user_key)
        fresh = SessionState(check.session_id, True, user, check.generation or "")
        revoked = yield Ask("is_revoked", (check.session_id, user, check.issued_at, check.generation))
        unchecked = partial(SessionState.of_client, None)
        session, state = checked(
            session,
            fresh,
            revoked,
            fails_open=fails_open,
            setting=setting,
            cookie_name=loader.cookie.name,
            unchecked=unchecked,
        )
    session.revocation = state  # type: ignore[attr-defined]
    return session


def writing(
    session: Session, state: SessionState, user_key: str, cookie_name: str, lifetime: int, store: str = "Redis"
) -> Steps[bytes]:
    """What the response does first (``response_steps``): end the client's session (its records kept
    ``lifetime`` seconds), or sign in its user's generation (``session[user_key]``'s), read from the store if the
    user logged in during the request. The id the token carries."""
    steps = response_steps(session, state, cookie_name, store)
    if steps.end and (client := state.end()) is not None:  # the cookie's own id, also after keep() gave a new one
        failed = yield Ask("revoke_session", (client, lifetime))
        if isinstance(failed, StoreUnavailable):  # the response is under way: log it, the cookie is deleted anyway
            revocation_logger.error("Session could not be revoked: %s", failed)
    if steps.stamp and (user := dict.get(session, user_key)) is not None:
        known = state.known_generation(user)
        if known is None:
            read = yield Ask("user_generation", (user,))
            # Unread: none is signed, and the session is refused once its user has one.
            known = (
                state.generation_unread(user, read) if isinstance(read, StoreUnavailable) else state.took(user, read)
            )
        generation_to_sign(session, known)
    return state.session_id


def ending(session: Session, state: SessionState, lifetime: int) -> Steps[None]:
    """``revoke_session``: end the request's session now, on every server (StoreUnavailable raised if the store
    cannot); the session is emptied, its cookie deleted."""
    if (client := state.client_session()) is not None:
        raised((yield Ask("revoke_session", (client, lifetime))))
    state.ended()
    session.clear()


def logging_out(
    session: Session,
    state: SessionState,
    user_key: str,
    lifetime: int,
    user_id: object | None,
    keep_current: bool,
    where: str = "session",
) -> Steps[None]:
    """``log_out_everywhere``: end every session of ``user_id`` (default: ``session[user_key]``; ``where``: how
    the framework names the session, for the error) that exists now; a later login is not ended. The request's
    own session: ``revocation.current_session_fate`` (docs/revocation.md)."""
    owner = session.get(user_key)
    if user_id is None and owner is None:
        raise ValueError(f"no user id in {where}[{user_key!r}]: pass user_id")
    user_id = owner if user_id is None else user_id
    fate = current_session_fate(owner, user_id, keep_current)
    generation = raised((yield Ask("log_out_everywhere", (user_id, lifetime))))
    if fate == "keep":
        state.keep(user_id, generation)
        if owner is not None:
            session.mark_modified()  # re-signed with the new generation
    elif fate == "end":
        yield from ending(session, state, lifetime)


class StorePart(NamedTuple):
    """A store's part of a request, for an adapter that keeps the ``SessionState`` on its session
    (``session.revocation``): ``loading`` a cookie's session (``opening``), ``writing`` before its cookie is
    (``writing``: the id the token carries), and ``ask``: the store's answer (a coroutine for an asyncio store's).
    Without a store, ``loading`` asks nothing (``for_cookie``) and the others are None."""

    loading: Callable[[str | None], Steps[Session]]
    writing: Any  # Callable[[Session], Steps[bytes]], or None
    ask: Any  # Callable[[Ask], answer or Awaitable[answer]], or None

    @classmethod
    def of(cls, store: Any, loader: Any, lifetime: int, cookie_name: str, setting: str) -> StorePart:
        """The part of ``store`` (``setting``: how the adapter names its ``on_unavailable``) for sessions of
        ``loader``, ended for ``lifetime`` seconds; ``store.user_key`` names the session's user."""
        if store is None:
            return cls(partial(_loaded, loader), None, None)
        user_key = store.user_key

        def written(session: Any) -> Steps[bytes]:
            return writing(session, session.revocation, user_key, cookie_name, lifetime)

        loading = partial(opening, loader, user_key=user_key, fails_open=store.fails_open, setting=setting)
        return cls(loading, written, partial(aask if iscoroutinefunction(store.is_revoked) else ask, store))


def _loaded(loader: Any, cookie: str | None) -> Steps[Session]:
    """A plan that asks nothing: the cookie's session."""
    session: Session = loader.for_cookie(cookie)
    return session
    yield  # pragma: no cover - a plan is a generator
