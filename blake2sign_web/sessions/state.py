"""A session as a dict: what it holds, whether it was read or changed, and the times its token carries.

The framework-neutral half of ``request.session`` (tower-sessions' ``session.rs``): a ``dict`` that
records whether it was read (``accessed``: the response varies on Cookie) and changed (``modified``: the
response re-issues the cookie), and Django's expiry API (``set_expiry`` and the three accessors) over the
lifetime rules of ``blake2sign_web.sessions.expiry``. ``written`` says what a write signs beside the data
(``[session, meta]``: its set_expiry() ``e``/``t`` and first-write time ``c``) and ``restore`` reads it
back. An adapter makes a subclass per configuration that sets the class attributes below.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from .expiry import SessionEnd, check_expiry, date_after, session_end, written_end


class Written(NamedTuple):
    """What a write of a session signs: the token's value, its own expiry (seconds), the cookie's Max-Age."""

    value: Any
    expires_in: int | None
    cookie_max_age: int | None


class Session(dict[str, Any]):
    """``request.session``: a dict that records whether it was read (``mark_accessed``: the response varies on
    Cookie) and whether it changed (the response re-issues the cookie), as Starlette 1.x's own Session."""

    accessed: bool = False
    modified: bool = False
    #: The middleware's max_age: what ``get_expiry_age`` gives without ``set_expiry`` (set per middleware).
    default_age: int | None = 14 * 24 * 60 * 60
    #: How the user's framework names ``default_age``, for messages.
    age_name: str = "max_age"
    #: With revocation: max_age, the longest set_expiry() may ask for (an ended session's record lives that long).
    longest_expiry: int | None = None
    #: The middleware's idle_timeout and absolute_timeout, which bound the expiry accessors (set per middleware).
    idle_timeout: int | None = None
    absolute_timeout: int | None = None
    #: ``set_expiry``'s value as kept: None (the middleware's max_age), seconds (0: until the browser
    #: closes) or the Unix second a fixed expiry (a datetime or timedelta) ends. Carried in the token.
    _expiry: int | float | None = None
    _expiry_fixed: bool = False
    #: With absolute_timeout: the Unix second the session first got data (carried in the token).
    _created_at: int | None = None
    #: Read from a cookie past idle_timeout or absolute_timeout: the response deletes it.
    _timed_out: bool = False
    #: Emptied by clear() during the request (revocation ends the old session then).
    cleared: bool = False
    #: The client sent no session (no cookie, or one that did not hold a session): emptying it deletes nothing.
    loaded_empty: bool = True
    #: The client's cookie was refused (bad, expired, not a session): with chunks, the response deletes the set.
    refused: bool = False
    #: Refused, with chunking off, as the first cookie of a set written while it was on: its chunks, to delete.
    leftovers: list[str] | None = None

    def mark_accessed(self) -> None:
        self.accessed = True

    def mark_modified(self) -> None:
        self.accessed = self.modified = True

    def __setitem__(self, key: str, value: Any) -> None:
        self.accessed = self.modified = True
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        self.accessed = self.modified = True
        dict.__delitem__(self, key)

    def clear(self) -> None:
        self.accessed = self.modified = self.cleared = True
        if self._expiry is not None:  # as in Django, where the expiry is a key of the session
            self._expiry, self._expiry_fixed = None, False
        dict.clear(self)

    def set_expiry(self, value: int | timedelta | datetime | None) -> None:
        """Django's ``set_expiry``: when this session ends, signed into its token (a copied cookie ends too).

        An int: that many seconds after each write of the session (0: when the browser closes, the
        cookie getting no Max-Age, while the middleware's max_age still bounds the token); a
        ``timedelta``: that long from now; an aware ``datetime``: then; None: back to the middleware's
        ``max_age``. An expiry already past ends the session when the response is sent. Marks the
        session modified, so the response carries the new cookie.
        """
        fixed = False
        if value is None:
            seconds: int | float | None = None
        elif isinstance(value, bool) or not isinstance(value, (int, timedelta, datetime)):
            raise TypeError(
                "set_expiry() takes seconds (an int), a timedelta, an aware datetime or None; "
                f"got {type(value).__name__}"
            )
        elif isinstance(value, int):
            seconds = value
        else:
            if isinstance(value, timedelta):
                value = date_after(value)
            elif value.tzinfo is None or value.utcoffset() is None:
                raise ValueError(
                    "set_expiry() needs an aware datetime (with a tzinfo), e.g. datetime.now(timezone.utc)"
                )
            seconds, fixed = value.timestamp(), True
        check_expiry(
            value,
            longest=self.longest_expiry,
            longest_name=self.age_name,
            default=f"set_expiry(None) for {self.age_name}",
        )
        self._expiry, self._expiry_fixed = seconds, fixed
        self.accessed = self.modified = True

    def get_expiry_age(self) -> int | None:
        """Django's ``get_expiry_age``: seconds the session lasts from now if written now; the cookie's Max-Age.

        The earliest of ``set_expiry``'s end (else ``max_age``), ``idle_timeout`` and what is left of
        ``absolute_timeout`` (``blake2sign_web.sessions.expiry``). For a browser-session cookie (``set_expiry(0)``,
        ``max_age=None``), which has no Max-Age, the server's limit; None when there is none.
        """
        return self._end().age

    def get_expiry_date(self) -> datetime | None:
        """Django's ``get_expiry_date``: when the session ends if written now (aware, UTC); None without a limit."""
        at = self._end().at
        return None if at is None else datetime.fromtimestamp(at, timezone.utc)

    def get_expire_at_browser_close(self) -> bool:
        """Django's: whether the cookie has no Max-Age (``set_expiry(0)``, or ``max_age=None`` without an expiry)."""
        return self._end().browser_session

    def _end(self) -> SessionEnd:
        """When this session ends if written now: the accessors' answer (``blake2sign_web.sessions.expiry``)."""
        fixed, expiry = self._expiry_fixed, self._expiry
        return session_end(
            None,  # now, by the core's clock
            default_age=self.default_age,
            browser_session_default=self.default_age is None,
            expiry=None if fixed else expiry,
            expiry_at=int(expiry) if fixed and expiry is not None else None,  # the token carries whole seconds
            idle_timeout=self.idle_timeout,
            absolute_timeout=self.absolute_timeout,
            # From the session's first write with data (now, at its whole second, for a new or emptied one).
            started=None if self.cleared else self._created_at,
            start_whole_second=True,
        )

    def written(self) -> Written | None:
        """What a write of this session now signs, beside its data; None: it has ended (set_expiry() in the
        past, or its absolute timeout reached)."""
        meta: dict[str, int | float] = {}
        expiry, fixed = self._expiry, self._expiry_fixed
        if expiry is not None:
            if fixed:
                meta["t"] = int(expiry)
            else:
                meta["e"] = expiry
        end = written_end(
            default_age=self.default_age,
            browser_session_default=self.default_age is None,
            expiry=None if fixed else expiry,
            expiry_at=int(expiry) if fixed and expiry is not None else None,
            idle_timeout=self.idle_timeout,
            absolute_timeout=self.absolute_timeout,
            started=None if self.cleared else self._created_at,  # emptied during this request: afresh
        )
        if end is None:
            return None
        if end.started is not None:
            meta["c"] = end.started  # from the session's first write with data
        return Written([self, meta] if meta else self, end.expires_in, end.cookie_max_age)

    def restore(self, meta: dict[str, Any]) -> None:
        """Put back what ``written`` signed beside the data: its set_expiry() and first-write time."""
        if type(fixed := meta.get("t")) is int:
            self._expiry, self._expiry_fixed = fixed, True
        elif type(seconds := meta.get("e")) is int:
            self._expiry = seconds
        if type(created := meta.get("c")) is int:
            self._created_at = created

    def pop(self, key: str, *args: Any) -> Any:
        if dict.__contains__(self, key):
            self.accessed = self.modified = True
        return dict.pop(self, key, *args)

    def popitem(self) -> tuple[str, Any]:
        item = dict.popitem(self)
        self.accessed = self.modified = True
        return item

    def setdefault(self, key: str, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self.accessed = self.modified = True
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.accessed = self.modified = True
        dict.update(self, *args, **kwargs)

    def __ior__(self, other: Any, /) -> Session:  # type: ignore[override,misc]
        self.accessed = self.modified = True
        return dict.__ior__(self, other)


class ReadTrackingSession(Session):
    """A Session whose reads mark it accessed, for a framework that marks nothing on use (Starlette before 1.0)."""

    def __getitem__(self, key: str) -> Any:
        self.accessed = True
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self.accessed = True
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self.accessed = True
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self.accessed = True
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.accessed = True
        return dict.__len__(self)

    def keys(self) -> Any:
        self.accessed = True
        return dict.keys(self)

    def values(self) -> Any:
        self.accessed = True
        return dict.values(self)

    def items(self) -> Any:
        self.accessed = True
        return dict.items(self)

    def pop(self, key: str, *args: Any) -> Any:
        self.accessed = True
        return super().pop(key, *args)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.accessed = True
        return super().setdefault(key, default)
