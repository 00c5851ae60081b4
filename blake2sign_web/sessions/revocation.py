"""What revocation knows of the request's session, whatever the framework (``SessionState``).

One request's session, with revocation on: the id its next token carries, whether the client's
cookie is still to be ended when the session is emptied, and the generation ("log out
everywhere") it signs for its user. The rules for them are here, once; the adapters keep one
per request (Starlette's ``SessionToken``, Django's ``SessionStore``) and do the store's I/O they call for.
What a request does when the store cannot be read (``store_down_accepted``) and when a user's generation
cannot (``SessionState.generation_unread``) is decided and logged here too, on the ``blake2sign_web.revocation``
logger, in the words of the user's framework (the setting's name, passed in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..stores.base import StoreUnavailable
from ..stores.base import logger as revocation_logger
from ..stores.records import GENERATION_KEY, new_session_id


def store_down_accepted(error: StoreUnavailable, *, fails_open: bool, setting: str) -> bool:
    """Whether a verified session whose revocation the store could not check is accepted: the policy ``setting``
    set to "open" (else it reads as empty, its cookie kept: ``SessionState.unchecked``); the failure is logged
    either way (docs/revocation.md, "When Redis is unreachable")."""
    if fails_open:
        revocation_logger.error("Session accepted unchecked (%s='open'): %s.", setting, error)
        return True
    revocation_logger.error("Session read as empty: its revocation cannot be checked: %s.", error)
    return False


class SessionState:
    """The request's session as revocation sees it; ``came``: a valid cookie came with the request."""

    __slots__ = ("generation", "presented_id", "revoke_on_clear", "session_id", "unchecked", "user")

    def __init__(self, session_id: bytes, came: bool, user: object | None = None, generation: str = "") -> None:
        #: The id written into the next cookie; a new one after the session is ended.
        self.session_id = session_id
        #: The id of the client's session (None: no valid cookie came), which ``keep`` does not change.
        self.presented_id = session_id if came else None
        #: Whether the client's cookie (its session, ``session_id``) is still to be ended when the session is emptied.
        self.revoke_on_clear = came
        #: The user the session was read with (None: anonymous), and the generation it carried then: a
        #: session written for another user logged in during the request, and reads that user's generation.
        self.user = user
        self.generation = generation
        #: The client's session was read as empty because the store was down ("closed"): its cookie must
        #: stay as it is (the session comes back with the store), unless the request clears the session.
        self.unchecked = False

    @classmethod
    def of_client(cls, session_id: bytes | None) -> SessionState:
        """The state of the client's session ``session_id``; None: no valid cookie came (a new session's id)."""
        return cls(session_id or new_session_id(), session_id is not None)

    def store_down(self, error: StoreUnavailable, *, fails_open: bool, setting: str) -> bool:
        """The store could not say whether the client's session was ended: True, it is read unchecked
        (``store_down_accepted``); False, read as empty and ``unchecked`` (its cookie kept, never overwritten:
        the session comes back with the store; emptying it still ends it)."""
        if store_down_accepted(error, fails_open=fails_open, setting=setting):
            return True
        self.unchecked = True
        return False

    def known_generation(self, user: object) -> str | None:
        """The generation to sign into a session of ``user`` when known (read with the session, or kept by
        "log out everywhere"); None: the user logged in during the request, read its record (``took``)."""
        return self.generation if self.user is not None and str(self.user) == str(user) else None

    def generation_to_sign(self, user: object, read: Callable[[object], str]) -> str:
        """The generation to sign into a session of ``user``: ``known_generation``, else the one ``read`` gives
        (the store's record, read once: when the session is first signed for that user)."""
        known = self.known_generation(user)
        if known is not None:
            return known
        try:
            return self.took(user, read(user))
        except StoreUnavailable as error:
            return self.generation_unread(user, error)

    def signed_data(self, data: dict[str, Any], user: object, read: Callable[[object], str]) -> dict[str, Any]:
        """``data`` as a write signs it for ``user`` (None: anonymous): with its generation (``GENERATION_KEY``,
        ``generation_to_sign``) when the user has one."""
        if user is not None and (generation := self.generation_to_sign(user, read)):
            return {**data, GENERATION_KEY: generation}
        return data

    def generation_unread(self, user: object, error: StoreUnavailable) -> str:
        """The store could not give ``user``'s generation: none is signed (logged), and it is not asked again."""
        revocation_logger.error("Session's generation could not be read, none is signed: %s.", error)
        return self.took(user, "")

    def took(self, user: object, generation: str) -> str:
        """``user``'s generation as its record gave it ("" if the store could not say: none is signed, and the
        session is refused once its user has one, never kept wrongly)."""
        self.user, self.generation = user, generation
        return generation

    def keep(self, user_id: object, generation: str) -> None:
        """Kept through "log out everywhere": a new id, and the user's new generation, for the next token."""
        self.session_id = new_session_id()
        self.user, self.generation = user_id, generation

    def client_session(self) -> bytes | None:
        """The id of the client's session while it is still to be ended when the session is emptied: the one its
        cookie carries, also after ``keep`` gave the next token a new id (its copies then end with it)."""
        return self.presented_id if self.revoke_on_clear else None

    def refused(self, cookie_name: str) -> None:
        """The client's session was found ended (logged): its cookie is refused, the next token a new session's."""
        revocation_logger.info("Session cookie %r refused: the session was ended", cookie_name)
        self.ended()

    def end(self) -> bytes | None:
        """The session is emptied (cleared, or a new key): the id of the client's session to end now
        (``client_session``, None: none); the next token is a new session's (``ended``), written even if the
        client's could not be checked."""
        client_session = self.client_session()
        self.ended()
        self.unchecked = False
        return client_session

    def ended(self) -> None:
        """The client's session was ended (its record written, if it had one): the next token is a new session's."""
        self.revoke_on_clear = False
        self.session_id = new_session_id()
        self.user, self.generation = None, ""
