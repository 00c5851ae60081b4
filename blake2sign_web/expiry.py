"""When a session written now ends, and what its cookie says about it: one rule for both session adapters.

Django's ``SessionStore`` and Starlette's ``request.session`` answer ``get_expiry_age()``,
``get_expiry_date()`` and ``get_expire_at_browser_close()``, and their middlewares write the cookie's
``Max-Age``; all of it comes from ``session_end`` so that the accessors say what the cookie says, in both
frameworks. No framework here: each adapter passes its own settings.

A session written now ends at the earliest of:

- its own expiry (``set_expiry``): seconds after this write, or a fixed moment; else the default age
  (Django's ``SESSION_COOKIE_AGE``, Starlette's ``max_age``; ``None``: no limit). ``set_expiry(0)`` keeps
  the default age, for the token;
- the idle timeout after this write;
- the absolute timeout after the session began.

The cookie's ``Max-Age`` is the seconds until then (rounded up, as the token's own expiry is), except for a
browser-session cookie (``set_expiry(0)``, or without an expiry of its own when the configuration asks
for one: ``SESSION_EXPIRE_AT_BROWSER_CLOSE = True``, ``max_age=None``), which has no ``Max-Age``; the
server still refuses its token at that end. ``get_expiry_age()`` is that end in seconds either way
(Django's meaning: for a browser-session cookie it is the server's limit, not the browser's).
"""

from __future__ import annotations

import math
from typing import NamedTuple


class SessionEnd(NamedTuple):
    """When a session written now ends, and whether its cookie is a browser-session cookie."""

    #: Seconds from now until the server refuses the session (``get_expiry_age()``); None: no limit.
    #: Zero or less: the session has ended.
    age: int | None
    #: The Unix time the server refuses the session (``get_expiry_date()``); None: no limit.
    at: float | None
    #: The cookie has no ``Max-Age``: the browser forgets it when it closes (``get_expire_at_browser_close()``).
    browser_session: bool

    @property
    def max_age(self) -> int | None:
        """The cookie's ``Max-Age`` attribute: ``age``, or None (no attribute) for a browser-session cookie."""
        return None if self.browser_session else self.age


def session_end(
    now: float,
    *,
    default_age: int | None,
    browser_session_default: bool,
    expiry: float | None = None,
    expiry_at: float | None = None,
    idle_timeout: int | None = None,
    absolute_timeout: int | None = None,
    started: float | None = None,
) -> SessionEnd:
    """When a session written at ``now`` ends (see the module's docstring).

    ``expiry``: ``set_expiry``'s seconds after each write (0: a browser-session cookie); ``expiry_at``: its
    fixed end, a Unix time (a ``datetime`` or ``timedelta`` given to it); neither: the default. ``started``:
    when the session began, for ``absolute_timeout`` (None: now, a session that begins with this write).
    Seconds are kept relative to ``now`` until the one rounding, so whole seconds come back exact.
    """
    if expiry is not None and expiry_at is not None:
        raise ValueError("session_end() takes expiry or expiry_at, not both")
    browser_session = browser_session_default
    seconds: float | None = default_age
    if expiry_at is not None:
        browser_session, seconds = False, expiry_at - now
    elif expiry is not None:
        browser_session = expiry == 0
        if expiry:
            seconds = expiry
    if idle_timeout is not None:
        seconds = idle_timeout if seconds is None else min(seconds, idle_timeout)
    if absolute_timeout is not None:
        left = absolute_timeout if started is None else started + absolute_timeout - now
        seconds = left if seconds is None else min(seconds, left)
    if seconds is None:
        return SessionEnd(None, None, browser_session)
    return SessionEnd(math.ceil(seconds), now + seconds, browser_session)
