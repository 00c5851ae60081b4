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
"""

from __future__ import annotations

from typing import Final

#: A read re-issues an idle-timed session's cookie once more than this fraction of the idle timeout has
#: passed since the cookie was issued: users are logged out after 75-100% of the timeout without activity,
#: at the cost of at most one re-issue per quarter of it per active user. Both adapters use it.
IDLE_REFRESH_FRACTION: Final = 0.25
