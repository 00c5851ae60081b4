"""The session of the request being served, for ``log_out_everywhere()`` to keep it.

``SessionStore`` (``sessions.py``) registers itself here when revocation is on; ``revocation.py`` asks for
it. Both import this module, which imports neither: the session engine and the revocation records stay
in one direction (``sessions`` uses ``revocation``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol


class KeepsThroughLogOut(Protocol):
    """What ``log_out_everywhere()`` needs of the current session (``SessionStore``)."""

    def keep_through_log_out(self, user_id: str, generation: str) -> None: ...


#: The SessionStore of the request being served (the last one made in this context), for log_out_everywhere():
#: ``SessionStore.__init__`` sets a weak reference to itself (never keeping it alive), inline, as it did.
CURRENT_SESSION: ContextVar[Callable[[], KeepsThroughLogOut | None] | None] = ContextVar(
    "blake2sign_web_current_session", default=None
)


def current_session() -> KeepsThroughLogOut | None:
    """The session of the request being served, if a request is being served."""
    reference = CURRENT_SESSION.get()
    return None if reference is None else reference()


def forget_current_session(**kwargs: Any) -> None:
    """``request_finished``'s receiver, connected by ``sessions.py`` (the engine that sets the session)."""
    CURRENT_SESSION.set(None)
