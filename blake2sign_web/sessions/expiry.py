"""When a session written now ends, what its cookie says about it, and when a read re-issues it: one rule for
both session adapters, which pass their own settings and the names their users know them by (no framework
here; the clock is read here, ``now=None``, never in an adapter).

A session ends at the earliest of its own expiry (``set_expiry``; else the default age), the idle timeout
after this write and the absolute timeout after it began. The cookie's ``Max-Age`` (rounded up) says so, except
for a browser-session cookie, which has none: the server still refuses its token at that end, and
``get_expiry_age()`` is that end either way (Django's meaning). A read re-issues the cookie only once
``IDLE_REFRESH_FRACTION`` of the idle timeout has passed since its issue (why 0.25: docs/architecture.md,
"Idle timeouts").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, Final, NamedTuple

from ..exceptions import SignatureExpired
from ..signing.formats import TIMESTAMP_LIMIT
from ..signing.times import seconds
from ..signing.times import seconds as in_seconds

#: Tokens carry 32-bit Unix times: no session can end at or after this second (2106-02-07 06:28:16 UTC).
EXPIRY_LIMIT: Final = TIMESTAMP_LIMIT
LAST_EXPIRY: Final = datetime.fromtimestamp(EXPIRY_LIMIT - 1, timezone.utc)


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
    now: float | None,
    *,
    default_age: int | None,
    browser_session_default: bool,
    expiry: float | None = None,
    expiry_at: float | None = None,
    idle_timeout: int | None = None,
    absolute_timeout: int | None = None,
    started: float | None = None,
    start_whole_second: bool = False,
) -> SessionEnd:
    """When a session written at ``now`` ends (see the module's docstring).

    ``expiry``: ``set_expiry``'s seconds after each write (0: a browser-session cookie); ``expiry_at``: its
    fixed end, a Unix time (a ``datetime`` or ``timedelta`` given to it); neither: the default. ``started``:
    when the session began, for ``absolute_timeout`` (None: now, a session that begins with this write; with
    ``start_whole_second``, the whole second of now, which its token will carry: Starlette's accessors).
    ``now``: None for the wall clock's. Seconds are kept relative to ``now`` until the one rounding, so
    whole seconds come back exact.
    """
    if expiry is not None and expiry_at is not None:
        raise ValueError("session_end() takes expiry or expiry_at, not both")
    if now is None:
        now = time.time()
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
        if started is None and start_whole_second:
            started = int(now)
        left = absolute_timeout if started is None else started + absolute_timeout - now
        seconds = left if seconds is None else min(seconds, left)
    if seconds is None:
        return SessionEnd(None, None, browser_session)
    return SessionEnd(math.ceil(seconds), now + seconds, browser_session)


class WrittenEnd(NamedTuple):
    """What a session written now carries about its end: the token's own expiry, its start, the cookie's Max-Age."""

    #: Seconds from now to the token's own expiry (``set_expiry`` or ``absolute_timeout``); None: it has none.
    expires_in: int | None
    #: With ``absolute_timeout``: when the session began, whole Unix seconds (signed into the token); else None.
    started: int | None
    #: The cookie's ``Max-Age`` (``SessionEnd.max_age``): None for a browser-session cookie or without a limit.
    cookie_max_age: int | None


def written_end(
    *,
    default_age: int | None,
    browser_session_default: bool,
    expiry: float | None = None,
    expiry_at: int | None = None,
    idle_timeout: int | None = None,
    absolute_timeout: int | None = None,
    started: int | None = None,
) -> WrittenEnd | None:
    """The end of a session written now (Starlette's middleware signs it beside the session); None: it has ended.

    The token's own expiry is the earliest of ``set_expiry``'s (seconds after now, 0 none; or ``expiry_at``,
    whole seconds) and ``absolute_timeout`` after ``started`` (None: a session that begins now, at its whole
    second); the idle timeout and the default age are not in it (the signer's max_age bounds the token).
    Past: None, a session written with ``set_expiry()`` in the past or past its absolute timeout.
    """
    now = time.time()
    ends: float | None = expiry_at
    if expiry_at is None and expiry:
        ends = now + expiry
    start = None
    if absolute_timeout is not None:
        start = int(now) if started is None else started
        limit = start + absolute_timeout
        ends = limit if ends is None else min(ends, limit)
    expires_in = None
    if ends is not None:
        if ends <= now:
            return None
        expires_in = math.ceil(ends - now)
    end = session_end(
        now,
        default_age=default_age,
        browser_session_default=browser_session_default,
        expiry=None if expiry_at is not None else expiry,
        expiry_at=expiry_at,
        idle_timeout=idle_timeout,
        absolute_timeout=absolute_timeout,
        started=start,
    )
    return WrittenEnd(expires_in, start, end.max_age)


class StoredExpiry(NamedTuple):
    """A session's own expiry as Django keeps it (``session["_session_expiry"]``), read: ``stored_expiry``."""

    #: Seconds after each write (0: a browser-session cookie); None: the default age, or a fixed end.
    seconds: float | None
    #: A fixed end (``set_expiry()`` of a datetime or timedelta); naive: local time (``USE_TZ = False``).
    date: datetime | None
    #: ``date`` as a Unix time (``session_end``'s ``expiry_at``); None without one.
    at: float | None

    def left(self) -> float | None:
        """Seconds left from now (<= 0 once past) for a token's own expiry; None: the default age or browser-close
        (the token then has no expiry of its own)."""
        if self.at is not None:
            return seconds_until(self.at)
        return self.seconds or None


#: No expiry of its own: the default age (the usual case, read on every write).
NO_EXPIRY: Final = StoredExpiry(None, None, None)


def stored_expiry(value: Any) -> StoredExpiry:
    """``session["_session_expiry"]`` read: None, seconds, a datetime, or the ISO text Django's JSON keeps it as."""
    if value is None:
        return NO_EXPIRY
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, datetime):
        return StoredExpiry(None, value, value.timestamp())
    return StoredExpiry(value, None, None)


def data_written(
    data: dict[str, Any],
    started: int | None,
    *,
    absolute_timeout: int | None,
    started_key: str,
    check: Callable[[float], None],
) -> tuple[dict[str, Any], float | None, int | None]:
    """What a write of a session in Django's layout signs: its data, the token's own expiry (seconds), its start.

    That layout keeps set_expiry() in the data (``_session_expiry``) and, with ``absolute_timeout``, the
    session's start under ``started_key`` (``started`` None: a session that begins now). ``check`` refuses an
    expiry no token can carry (set as ``session["_session_expiry"]``, not through set_expiry()). A set_expiry()
    in the past has ended the session: an empty one is written, as a store's expired row reads as nothing.
    """
    value = data.get("_session_expiry")
    left = None if value is None else stored_expiry(value).left()  # None: the default age, or browser-close
    if left is not None:
        check(left)
        if left <= 0:
            return {}, None, started
        left = float(left)
    if absolute_timeout is not None and data:  # a new session, or a new key (login): its clock starts now
        started = session_start(started)
        data = {**data, started_key: started}
    return data, left, started


def stored_end(
    now: float | None,
    value: Any,
    *,
    default_age: int | None,
    browser_session_default: bool,
    idle_timeout: int | None,
    absolute_timeout: int | None,
    started: int | None,
) -> SessionEnd:
    """``session_end`` of a session whose own expiry ``value`` is kept as Django keeps it (``stored_expiry``)."""
    expiry = NO_EXPIRY if value is None else stored_expiry(value)  # the usual None without a call
    return session_end(
        now,
        default_age=default_age,
        browser_session_default=browser_session_default,
        expiry=expiry.seconds,  # None: the default age; 0: a browser-close cookie
        expiry_at=expiry.at,  # a naive date is local time, as Django's timezone.now() is with USE_TZ = False
        idle_timeout=idle_timeout,
        absolute_timeout=absolute_timeout,
        started=started,
    )


def expiry_date(end: SessionEnd, now: datetime, value: Any) -> datetime:
    """Django's ``get_expiry_date()``: when the session ``end``s, a date in ``now``'s kind (aware or naive).

    ``value``: the expiry as Django keeps it (``stored_expiry``); a ``set_expiry()`` date that no timeout cuts
    short is returned as given, as Django returns it.
    """
    expiry = NO_EXPIRY if value is None else stored_expiry(value)
    if expiry.date is not None and end.at == expiry.at:
        return expiry.date
    return now + timedelta(seconds=(end.at or 0) - now.timestamp())


def date_after(delta: timedelta) -> datetime:
    """The aware (UTC) datetime ``delta`` from now: a ``set_expiry()`` timedelta as the fixed end it stands for."""
    return datetime.now(timezone.utc) + delta


def seconds_until(moment: float) -> float:
    """Seconds from now until the Unix time ``moment`` (negative once past)."""
    return moment - time.time()


def now_datetime(aware: bool) -> datetime:
    """Now as Django's ``timezone.now()`` gives it: aware in UTC, or naive local time (``USE_TZ = False``)."""
    return datetime.now(timezone.utc if aware else None)


def longest_expiry(default_age: int | None, revocation: bool) -> int | None:
    """The longest ``set_expiry()`` may ask for: with revocation on, the default age (an ended session's record is
    kept that long, and a token that lived longer would come back after it); else no bound (None)."""
    return default_age if revocation else None


def check_expiry(value: Any, *, longest: int | None = None, longest_name: str = "", default: str = "") -> None:
    """ValueError for a ``set_expiry()`` value no session token can hold, both adapters' one rule: it must end before
    ``EXPIRY_LIMIT`` (tokens carry 32-bit times; a naive ``datetime`` is local time), and with revocation on within
    ``longest`` (named ``longest_name``), which an ended session's record lasts. ``default``: the user's way back
    to the default expiry, for the message."""
    now = time.time()
    if isinstance(value, datetime):
        ends = value.timestamp()
        seconds = ends - now
    elif isinstance(value, timedelta) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        seconds = value.total_seconds() if isinstance(value, timedelta) else value
        ends = now + seconds
    else:
        return
    if not ends < EXPIRY_LIMIT:
        raise ValueError(
            f"set_expiry({value!r}) ends past {LAST_EXPIRY:%Y-%m-%d %H:%M:%S} UTC, the last second a "
            f"session token can carry: choose an earlier expiry, or {default}"
        )
    if longest is not None and seconds > longest:
        raise ValueError(
            f"set_expiry() of {in_seconds(math.ceil(seconds))} is longer than {longest_name} "
            f"({in_seconds(longest)}), the longest a session lives with revocation on (an ended session's record is "
            f"kept that long): raise {longest_name}, or choose a shorter expiry"
        )


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
    """SessionTimedOut past ``idle`` (an age, as the signer's max_age) or at ``absolute`` (``absolute_reached``),
    Django's engine; else whether a read should re-issue the cookie. ``issued_at``: when the cookie was signed;
    ``started``: when the session began (None: not checked); ``idle_name``, ``absolute_name``: for the message."""
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
    """Whether a session begun at ``started`` has reached its absolute timeout, both adapters' one rule: at the
    moment ``started + absolute``, as a token at its own expiry and as ``written_end`` finds it."""
    return absolute is not None and now - started >= absolute


def idle_past(issued_at: int, idle: int | None) -> bool:
    """Whether a token signed at ``issued_at`` is past the idle timeout ``idle`` (None: never)."""
    return idle is not None and time.time() - issued_at > idle


def session_start(started: int | None) -> int:
    """When a session saved now began, for the absolute timeout: ``started``, or now (whole seconds) for a new one."""
    return int(time.time()) if started is None else started
