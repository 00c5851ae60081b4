"""What revocation knows of the request's session, whatever the framework (``SessionState``).

One request's session, with revocation on: the id its next token carries, whether the client's
cookie is still to be ended when the session is emptied, and the generation ("log out
everywhere") it signs for its user. The rules for them are here, once; the adapters keep one
per request (Starlette's ``SessionToken``) and do the store's I/O they call for.
"""

from __future__ import annotations

from .records import new_session_id


class SessionState:
    """The request's session as revocation sees it; ``came``: a valid cookie came with the request."""

    __slots__ = ("generation", "revoke_on_clear", "session_id", "unchecked", "user")

    def __init__(self, session_id: bytes, came: bool, user: object | None = None, generation: str = "") -> None:
        #: The id written into the next cookie; a new one after the session is ended.
        self.session_id = session_id
        #: Whether the client's cookie (its session, ``session_id``) is still to be ended when the session is emptied.
        self.revoke_on_clear = came
        #: The user the session was read with (None: anonymous), and the generation it carried then: a
        #: session written for another user logged in during the request, and reads that user's generation.
        self.user = user
        self.generation = generation
        #: The client's session was read as empty because the store was down ("closed"): its cookie must
        #: stay as it is (the session comes back with the store), unless the request clears the session.
        self.unchecked = False

    def known_generation(self, user: object) -> str | None:
        """The generation to sign into a session of ``user`` when known (read with the session, or kept by
        "log out everywhere"); None: the user logged in during the request, read its record (``took``)."""
        return self.generation if self.user is not None and str(self.user) == str(user) else None

    def took(self, user: object, generation: str) -> str:
        """``user``'s generation as its record gave it ("" if the store could not say: none is signed, and the
        session is refused once its user has one, never kept wrongly)."""
        self.user, self.generation = user, generation
        return generation

    def keep(self, user_id: object, generation: str) -> None:
        """Kept through "log out everywhere": a new id, and the user's new generation, for the next token."""
        self.session_id = new_session_id()
        self.user, self.generation = user_id, generation

    def ended(self) -> None:
        """The client's session was ended (its record written, if it had one): the next token is a new session's."""
        self.revoke_on_clear = False
        self.session_id = new_session_id()
        self.user, self.generation = None, ""
