"""Idle timeouts, as both session adapters keep them: when a read re-issues the cookie. No framework here.

A signed cookie carries the time it was issued; with an idle timeout (Django's ``"IDLE_TIMEOUT"``, Starlette's
``idle_timeout=``) a session whose cookie was issued longer ago than that is refused. A request that uses the
session restarts the time only by re-issuing the cookie, and re-issuing on every read would make every read
a write (a Set-Cookie and a signature on each response). So a read re-issues the cookie only once more than
``IDLE_REFRESH_FRACTION`` of the idle timeout has passed since it was issued.

With fraction ``f`` and idle timeout ``idle``, a user's last request before they stop came at most
``f * idle`` after the cookie's last issue (a later one would have re-issued it), and the session ends
``idle`` after that issue: an active user is logged out after between ``(1 - f) * idle`` and ``idle`` of
inactivity. ``f = 0.25`` keeps that within 75-100% of the configured timeout (11.25 to 15 minutes of a
15-minute one), for at most one re-issue per ``idle / 4`` per active user: four Set-Cookie headers per idle
timeout at most, against one per request. A larger fraction writes less but logs users out early (``0.5``:
after as little as half the timeout, 7.5 minutes of 15); a smaller one is closer to the timeout but writes
more.

The checks below read the clock here, in the core, so that no adapter does; each adapter passes its
options and the names its users know them by.
"""

from __future__ import annotations

import time
from typing import Final

from .exceptions import SignatureExpired
from .tokens import seconds

#: A read re-issues an idle-timed session's cookie once more than this fraction of the idle timeout has
#: passed since the cookie was issued: users are logged out after 75-100% of the timeout without activity,
#: at the cost of at most one re-issue per quarter of it per active user. Both adapters use it.
IDLE_REFRESH_FRACTION: Final = 0.25


class SessionTimedOut(SignatureExpired):
    """A verified session past its idle or absolute timeout: read as empty, as an expired one."""


def check_timeouts(
    issued_at: int | None,
    started: int | None,
    idle: int | None,
    absolute: int | None,
    *,
    idle_name: str,
    absolute_name: str,
) -> bool:
    """SessionTimedOut past ``idle`` or ``absolute`` (Django's engine); else whether a read should re-issue the cookie.

    ``issued_at``: when the cookie was signed; ``started``: when the session began (None: unknown, not checked).
    Past the idle timeout means
    more than it (an age, as the signer's max_age); the absolute one is reached at its moment
    (``absolute_reached``). ``idle_name`` and ``absolute_name`` name the settings in the message.
    """
    now = time.time()
    if idle is not None and issued_at is not None and now - issued_at > idle:
        raise SessionTimedOut(
            f"session not read for more than {idle_name} ({seconds(idle)})", expired_at=issued_at + idle
        )
    if absolute is not None and started is not None and absolute_reached(now, started, absolute):
        raise SessionTimedOut(
            f"session began more than {absolute_name} ({seconds(absolute)}) ago", expired_at=started + absolute
        )
    return idle is not None and issued_at is not None and now - issued_at > idle * IDLE_REFRESH_FRACTION


#: ``read_timeouts``' answers.
VALID, TIMED_OUT, REFRESH = 0, 1, 2


def read_timeouts(issued_at: int | None, started: int | None, absolute: int | None, refresh_after: float | None) -> int:
    """A verified session read now (Starlette's middleware): TIMED_OUT, REFRESH (re-issue it) or VALID.

    TIMED_OUT: ``absolute_reached``; REFRESH: more than ``refresh_after`` seconds since
    ``issued_at`` (None: no token, or nothing to refresh). The idle timeout itself is the signer's max_age.
    """
    now = time.time()
    if started is not None and absolute_reached(now, started, absolute):
        return TIMED_OUT
    if refresh_after is not None and issued_at is not None and now - issued_at > refresh_after:
        return REFRESH
    return VALID


def absolute_reached(now: float, started: int, absolute: int | None) -> bool:
    """Whether a session begun at ``started`` has reached its absolute timeout: both adapters' one rule.

    The absolute timeout is a moment, ``started + absolute``, and the session has ended at it, as a token
    has at its own expiry (the signer's ``now >= expires_at``) and as a write at that moment finds it ended
    (``expiry.written_end``): Starlette's rule, which Django's engine (``> absolute``) now follows too.
    """
    return absolute is not None and now - started >= absolute


def idle_past(issued_at: int, idle: int | None) -> bool:
    """Whether a token signed at ``issued_at`` is past the idle timeout ``idle`` (None: never)."""
    return idle is not None and time.time() - issued_at > idle


def session_start(started: int | None) -> int:
    """When a session saved now began, for the absolute timeout: ``started``, or now (whole seconds) for a new one."""
    return int(time.time()) if started is None else started
