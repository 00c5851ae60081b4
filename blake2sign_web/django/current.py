"""The session of the request being served, for ``log_out_everywhere()`` to keep it.

``SessionStore`` registers itself here when revocation is on and ``revocation.py`` asks for it: both import
this module, which imports neither. A WSGI worker serves its requests in one context, so what a request sets
is cleared when it ends (``request_finished``), by a receiver connected only when a session is first set.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

from django.core.signals import request_finished


class KeepsThroughLogOut(Protocol):
    """What ``log_out_everywhere()`` needs of the current session (``SessionStore``)."""

    def keep_through_log_out(self, user_id: str, generation: str) -> None: ...


Reference = Callable[[], KeepsThroughLogOut | None]


class _CurrentSession:
    """A ``ContextVar`` of the current session's weak reference that, when first set, has it cleared at the
    end of every request."""

    def __init__(self) -> None:
        self._variable: ContextVar[Reference | None] = ContextVar("blake2sign_web_current_session", default=None)
        self._clears = False

    def set(self, reference: Reference | None) -> None:
        self._variable.set(reference)
        if not self._clears:
            # A module-level function: no weak reference to resolve on every request. Idempotent by its uid.
            request_finished.connect(forget_current_session, weak=False, dispatch_uid=_RECEIVER_UID)
            self._clears = True

    def get(self) -> Reference | None:
        return self._variable.get()

    def clear(self) -> None:
        self._variable.set(None)


_RECEIVER_UID = "blake2sign_web.django.current.forget_current_session"

#: The SessionStore of the request being served (the last one made in this context), for log_out_everywhere():
#: ``SessionStore.__init__`` sets a weak reference to itself (never keeping it alive), inline, as it did.
CURRENT_SESSION = _CurrentSession()


def current_session() -> KeepsThroughLogOut | None:
    """The session of the request being served, if a request is being served."""
    reference = CURRENT_SESSION.get()
    return None if reference is None else reference()


def forget_current_session(**kwargs: Any) -> None:
    """``request_finished``'s receiver, connected when a session is first set (``CURRENT_SESSION.set``)."""
    CURRENT_SESSION.clear()
