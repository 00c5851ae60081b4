"""Server-side state for revocation and single-use links, without a framework: keys, lifetimes, decisions.

Signed cookies and links need no store, which is their point; this module is the small, optional exception.
The records (``once``, ``once-budget``, ``sid``, ``user``, ``group``), their values and TTLs and why those are
enough: docs/revocation.md, "What is stored". Every decision is made here, without I/O: which records to read
and write (``session_check``, ``ended_session``, ``user_generation_record``, ``link_use``), what the replies
mean, and what "log out everywhere" does to the session that asks (``current_session_fate``); the adapters do
the I/O. The records' names and values are in ``records``; store URLs, replicas and scripts in ``stores``.
"""

from __future__ import annotations

import contextlib
import datetime
import hmac
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..signing.serializer import CLOCK_SKEW
from ..signing.times import seconds as in_seconds
from .base import (
    CLUSTER_SCHEMES,
    CONSUME_FILE_LINK_SCRIPT,
    MAX_WAIT_REPLICAS,
    SENTINEL_SCHEMES,
    UNDO_FIRST_USE_SCRIPT,
    NotReplicated,
    StoreLocation,
    StoreUnavailable,
    check_wait_replicas,
    logger,
    parse_store_url,
    wait_milliseconds,
)
from .records import (
    CLOCK,
    GENERATION_BYTES,
    GENERATION_KEY,
    GENERATION_PREFIX,
    KEY_PREFIX,
    SESSION_ENDED,
    budget_key,
    check_group,
    check_key_prefix,
    client_digest,
    derived_session_id,
    earlier_not_before,
    earlier_session_record,
    generation_record,
    group_key,
    issued_now,
    missing_key_prefix,
    new_generation,
    new_session_id,
    parse_not_before,
    recorded_generation,
    same_client,
    session_key,
    session_keys,
    single_use_key,
    user_key,
    user_keys,
)

__all__ = [
    "CLOCK",
    "CLUSTER_SCHEMES",
    "CONSUME_FILE_LINK_SCRIPT",
    "DEFAULT_CLOCK_SKEW",
    "DEFAULT_TIMEOUT",
    "GENERATION_BYTES",
    "GENERATION_KEY",
    "GENERATION_PREFIX",
    "KEY_PREFIX",
    "MAX_CLOCK_SKEW",
    "MAX_WAIT_REPLICAS",
    "POLICIES",
    "RECORD_MARGIN",
    "SENTINEL_SCHEMES",
    "SESSION_ENDED",
    "UNDO_FIRST_USE_SCRIPT",
    "LinkAnswer",
    "LinkUse",
    "NotReplicated",
    "Policy",
    "Record",
    "SessionCheck",
    "StoreLocation",
    "StoreUnavailable",
    "budget_key",
    "check_clock_skew",
    "check_earlier_names_until",
    "check_expiry_within",
    "check_key_prefix",
    "check_policy",
    "check_timeout",
    "check_wait_replicas",
    "client_digest",
    "current_session_fate",
    "derived_session_id",
    "earlier_names_read",
    "ended_session",
    "generation_record",
    "group_key",
    "group_revocation",
    "is_revoked",
    "link_use",
    "missing_key_prefix",
    "new_generation",
    "new_session_id",
    "parse_not_before",
    "parse_store_url",
    "record_ttl",
    "recorded_generation",
    "same_client",
    "session_check",
    "session_key",
    "session_keys",
    "single_use_key",
    "single_use_ttl",
    "ttl_until",
    "user_generation_record",
    "user_key",
    "user_keys",
    "wait_milliseconds",
    "withdrawn",
]

#: A store's answer for a grouped link: it may be used, it was used (single-use), its group was revoked after.
LinkAnswer = Literal["ok", "used", "withdrawn"]
#: What to do when the store cannot be reached in time.
Policy = Literal["closed", "open"]
POLICIES: Final = ("closed", "open")
#: Default seconds to wait for the store before applying the policy.
DEFAULT_TIMEOUT: Final = 0.5
#: Default seconds by which the clocks of the servers sharing the store may differ (see ``is_revoked``).
DEFAULT_CLOCK_SKEW: Final = 5.0
#: The largest clock-skew allowance accepted: beyond it, clocks need fixing, not a wider window.
MAX_CLOCK_SKEW: Final = 600
#: Seconds every record outlives what it guards, at least: a server whose clock runs behind the one that
#: wrote it still accepts the link or token that long. The core's own tolerance for clocks (tokens dated up
#: to this far ahead load) is the bound: a record costs a few bytes, a record gone too early is a bypass.
RECORD_MARGIN: Final = CLOCK_SKEW


def ttl_until(expires_at: float, now: float) -> int:
    """Whole seconds from ``now`` to ``expires_at``, rounded up, at least 1 (a store refuses 0)."""
    return max(1, math.ceil(expires_at - now))


def single_use_ttl(expires_at: float, skew: float = RECORD_MARGIN, *, clock: Callable[[], float] = CLOCK) -> int:
    """Seconds to keep a single-use record: until the link expires, by any clock up to ``skew`` behind ours
    (never less than ``RECORD_MARGIN``); ``clock``: the store's. Why: docs/revocation.md, "Lifetimes"."""
    return ttl_until(expires_at, clock()) + math.ceil(max(skew, RECORD_MARGIN))


def record_ttl(lifetime: int, skew: float = RECORD_MARGIN) -> int:
    """Seconds to keep a ``sid:`` or ``user:`` record, from when it is written: until every token it refuses has ended
    (``lifetime`` and ``skew``, never less than ``RECORD_MARGIN``, after now; docs/revocation.md, "Lifetimes")."""
    return max(1, lifetime) + math.ceil(skew) + math.ceil(max(skew, RECORD_MARGIN))


def check_expiry_within(seconds: float, lifetime: int, setting: str) -> None:
    """ValueError for a ``set_expiry()`` (``seconds`` from now) that would outlive ``lifetime``, the longest a record
    is kept (``record_ttl``); ``setting``: the lifetime's name in the user's framework."""
    if seconds > lifetime:
        raise ValueError(
            f"set_expiry() of {in_seconds(math.ceil(seconds))} is longer than {setting} ({in_seconds(lifetime)}), the "
            f"longest a session lives with revocation on (an ended session's record is kept that long): raise "
            f"{setting}, or choose a shorter expiry"
        )


def is_revoked(
    issued_at: int,
    *,
    session_id: bytes | None = None,
    generation: str | None = None,
    session_records: Sequence[object | None] = (),
    user_records: Sequence[str | bytes | int | None] = (),
    skew: float = DEFAULT_CLOCK_SKEW,
    prefixed: bool = False,
    clock: Callable[[], float] = CLOCK,
) -> bool:
    """Whether a verified session must be refused, given its records as read (``session_keys``, ``user_keys``: the
    first of each under the current name): ended by its id, or its user's generation is not the one it carries
    (``generation``; None: a migrated cookie, refused if signed by the record's time plus ``skew``). A record time
    later than now (``clock``) plus ``skew`` is ignored, and logged. The rules: docs/revocation.md, "Which sessions
    a record refuses"."""
    return _refused(issued_at, session_id, generation, session_records, user_records, skew, prefixed, clock)


def _refused(
    issued_at: int,
    session_id: bytes | None,
    generation: str | None,
    session_records: Sequence[object | None],
    user_records: Sequence[str | bytes | int | None],
    skew: float,
    prefixed: bool,
    clock: Callable[[], float],
) -> bool:
    """``is_revoked``, its arguments by position (every verified session with revocation on comes here)."""
    if session_records and (
        session_records[0] is not None or any(earlier_session_record(r) for r in session_records[1:])
    ):
        return True
    for position, record in enumerate(user_records):
        if record is None or (position and not earlier_not_before(record, previous=prefixed and position == 1)):
            continue
        text = record.decode("ascii", "replace") if isinstance(record, bytes) else str(record)
        if text.startswith(GENERATION_PREFIX):
            current, _, written = text[len(GENERATION_PREFIX) :].partition(":")
            if generation is None:  # a migrated cookie: by the clock
                if not written.isascii() or not written.isdigit():
                    return True
                if issued_at <= int(written) + skew and not _from_the_future(int(written), skew, clock):
                    return True
            elif not hmac.compare_digest(current.encode("ascii", "replace"), generation.encode("ascii", "replace")):
                return True
            continue
        cut_off = parse_not_before(text)
        if cut_off is None:  # not written by us: refuse rather than guess
            return True
        cutoff, kept = cut_off
        if kept is not None and session_id == kept:
            continue
        if issued_at <= cutoff + skew and not _from_the_future(cutoff, skew, clock):
            return True
    return False


def _from_the_future(seconds: int, skew: float, clock: Callable[[], float]) -> bool:
    """Whether a record's time is later than now plus ``skew``: logged (its time, never the key nor the session)."""
    ahead = seconds - clock()
    if ahead <= skew:
        return False
    logger.warning(
        "Ignored a user's revocation record dated %d s ahead of this server's clock (more than the clock skew, "
        "%g s): no server of this application wrote it. Find it with redis-cli --scan --pattern "
        "'blake2sign_web:*user:*' and delete it, or fix the clock of the server that wrote it",
        ahead,
        skew,
    )
    return True


def check_earlier_names_until(value: object, name: str) -> float | None:
    """The end of the migration window in which records under earlier names are read (``session_keys``,
    ``user_keys``), as Unix seconds; None (the default): never read. ``value``: a ``datetime.date`` (read
    through that day, UTC), a timezone-aware ``datetime.datetime``, the same in ISO 8601 text, or None."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):  # not ISO 8601: refused below, as given
            value = (datetime.date if len(value) == 10 else datetime.datetime).fromisoformat(value)
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.timestamp()
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return datetime.datetime.combine(value, datetime.time(), datetime.timezone.utc).timestamp() + 86400
    if value is None:
        return None
    raise ValueError(
        f"{name} must be None (records under the names of earlier releases are not read) or the date until which "
        f"they are read while upgrading (a datetime.date, a datetime with a timezone, or 'YYYY-MM-DD'); got {value!r}"
    )


def earlier_names_read(until: float | None, clock: Callable[[], float] = CLOCK) -> bool:
    """Whether records under earlier names are read now: before ``until`` (``check_earlier_names_until``), while an
    upgrade needs them (docs/revocation.md, "Names, and the names of earlier releases")."""
    return until is not None and clock() < until


def check_policy(value: object, name: str) -> Policy:
    if value not in POLICIES:
        raise ValueError(f"{name} must be 'closed' (refuse when the store is down) or 'open'; got {value!r}")
    return value


def check_clock_skew(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_CLOCK_SKEW:
        raise ValueError(
            f"{name} must be a number of seconds from 0 to {MAX_CLOCK_SKEW} (how far the clocks of the servers "
            f"sharing the store may differ); got {value!r}"
        )
    return float(value)


def check_timeout(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 60:
        raise ValueError(f"{name} must be a number of seconds greater than 0 and at most 60; got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Record:
    """A record to write: ``SET key value EX ttl`` (in a Django cache, ``set(key, value, timeout=ttl)``)."""

    key: str
    value: str
    ttl: int


def ended_session(session_id: bytes, lifetime: int, prefix: str = "", skew: float = RECORD_MARGIN) -> Record:
    """The ``sid:`` record that ends one session everywhere; ``lifetime``: the longest any token of it lives (kept
    that long from now, plus the clocks' margins: ``record_ttl``)."""
    return Record(session_key(session_id, prefix), SESSION_ENDED, record_ttl(lifetime, skew))


def user_generation_record(
    user_id: object,
    generation: str,
    lifetime: int,
    prefix: str = "",
    skew: float = DEFAULT_CLOCK_SKEW,
    *,
    clock: Callable[[], float] = CLOCK,
) -> Record:
    """The ``user:`` record of "log out everywhere": ``generation`` (``new_generation()``), dated by ``clock``, kept
    as long as a ``sid:`` record."""
    value = generation_record(generation, clock=clock)
    return Record(user_key(user_id, prefix), value, record_ttl(lifetime, skew))


def group_revocation(
    group: str, lifetime: object, prefix: str = "", skew: float = RECORD_MARGIN, *, clock: Callable[[], float] = CLOCK
) -> Record:
    """The ``group:`` record that withdraws every link of ``group`` issued until now (by ``clock``, in Unix
    microseconds, as links carry it: ``links.groups``); ``lifetime``: the longest any link of it still out lives
    (seconds), kept that long plus the clocks' margins (``record_ttl``). ValueError for a bad group or lifetime."""
    if isinstance(lifetime, bool) or not isinstance(lifetime, int) or lifetime < 1:
        raise ValueError(
            f"lifetime must be a positive int: the seconds the longest-lived link of the group still out has left "
            f"(the revocation is kept that long); got {lifetime!r}"
        )
    return Record(group_key(check_group(group), prefix), str(issued_now(clock)), record_ttl(lifetime, skew))


def withdrawn(issued_us: int, record: str | bytes | int | None, skew: float) -> bool:
    """Whether a grouped link issued at ``issued_us`` (Unix microseconds, by its signing server's clock) is refused
    by its group's record as read (None: never revoked; its time by the revoking server's clock): issued at or
    before the revocation plus ``skew`` seconds, how far those clocks may differ (so links re-issued within it are
    refused too), or a record not written by us (refuse, not guess)."""
    if record is None:
        return False
    text = record.decode("ascii", "replace") if isinstance(record, bytes) else str(record)
    return not (text.isascii() and text.isdigit()) or issued_us <= int(text) + round(skew * 1_000_000)


@dataclass(slots=True)  # not frozen: a frozen one's __init__ adds about 9 k instructions to every check
class SessionCheck:
    """Whether a verified session was ended, as a question to a store: read every name of ``keys`` at once
    (one ``MGET``, or a cache's ``get_many``), then ``revoked(values)`` decides."""

    keys: list[str]
    #: How many of ``keys`` (the first) are the session's own records; the others are its user's.
    session_count: int
    issued_at: int
    session_id: bytes | None
    generation: str | None
    skew: float
    prefixed: bool
    clock: Callable[[], float] = CLOCK

    def revoked(self, values: Sequence[Any]) -> bool:
        """The decision (``is_revoked``), from the values of ``keys`` in their order, None for a missing one."""
        count = self.session_count
        return _refused(
            self.issued_at,
            self.session_id,
            self.generation,
            values[:count],
            values[count:],
            self.skew,
            self.prefixed,
            self.clock,
        )


def session_check(
    session_id: bytes | None,
    user_id: object | None,
    issued_at: int,
    generation: str | None = "",
    prefix: str = "",
    skew: float = DEFAULT_CLOCK_SKEW,
    earlier_until: float | None = None,
    clock: Callable[[], float] = CLOCK,
) -> SessionCheck | None:
    """What to read to know whether a verified session was ended (``is_revoked``); None: nothing to read.
    ``generation``: the session's (``GENERATION_KEY``), "" for none, None for a migrated cookie; ``earlier_until``:
    the end of the window in which earlier names are read too (``earlier_names_read``); ``clock``: the store's."""
    earlier = earlier_until is not None and earlier_names_read(earlier_until, clock)
    own = [] if session_id is None else session_keys(session_id, prefix, earlier)
    users = [] if user_id is None else user_keys(user_id, prefix, earlier)
    if not own and not users:
        return None
    return SessionCheck(own + users, len(own), issued_at, session_id, generation, skew, bool(prefix), clock)


@dataclass(frozen=True, slots=True)
class LinkUse:
    """One use of a single-use link, as a question to a store (``link_use``): one command, one reply."""

    key: str
    #: The byte budget of a file link's continuations (``budget_key``), in ``key``'s cluster slot.
    budget: str
    #: What the ``once`` record keeps of the client (``client_digest``).
    digest: str
    ttl: int
    file_size: int | None
    #: What this request would fetch as a continuation (``continuation_cost``); None: it cannot continue.
    continuation: int | None

    def command(self, key: str | None = None, budget: str | None = None, value: Any = None) -> tuple[Any, ...]:
        """The command that uses the link: ``SET NX``, or for a file link the script (first use or continuation);
        ``key``, ``budget``, ``value``: as the store holds them, when it changes them (a Django cache)."""
        key, budget = key or self.key, budget or self.budget
        value = self.digest if value is None else value
        if self.file_size is None:
            return ("SET", key, value, "EX", self.ttl, "NX")
        cost = -1 if self.continuation is None else self.continuation
        return ("EVAL", CONSUME_FILE_LINK_SCRIPT, 2, key, budget, value, self.ttl, self.file_size, cost)

    def undo_command(self, key: str | None = None, budget: str | None = None, value: Any = None) -> tuple[Any, ...]:
        """What undoes a first use that its replicas did not acknowledge (only if it is still this client's)."""
        value = self.digest if value is None else value
        return ("EVAL", UNDO_FIRST_USE_SCRIPT, 2, key or self.key, budget or self.budget, value)

    def first_use(self, reply: Any) -> bool:
        """Whether ``command``'s reply is the link's first use (not a continuation, not a refusal)."""
        return bool(reply) and (self.file_size is None or reply == 2)

    def allowed_continuation(self, recorded: str | bytes | None) -> int | None:
        """Without the script (a cache's own operations): what a continuation of the used link may fetch, given
        the link's record; None if it may not (not a continuation, or another client used the link)."""
        if self.continuation is None or recorded is None:
            return None
        if isinstance(recorded, str):
            recorded = recorded.encode("ascii", "replace")
        return self.continuation if hmac.compare_digest(recorded, self.digest.encode("ascii")) else None


def link_use(
    nonce: str,
    expires_at: float,
    client: str,
    *,
    file_size: int | None = None,
    continuation: int | None = None,
    skew: float = RECORD_MARGIN,
    clock: Callable[[], float] = CLOCK,
    stored_name: Callable[[str], str] | None = None,
) -> LinkUse:
    """A use of a single-use link: its records, kept until the link expires plus ``skew`` (``single_use_ttl``).
    ``file_size``: the file's, the budget of its continuations; ``stored_name``: how the store names a key, when
    not as given (a Django cache's ``make_key``), for the budget's hash tag (``budget_key``)."""
    key = single_use_key(nonce)
    budget = budget_key(nonce, None if stored_name is None else stored_name(key))
    ttl = single_use_ttl(expires_at, skew, clock=clock)
    return LinkUse(key, budget, client_digest(client), ttl, file_size, continuation)


def current_session_fate(owner: object | None, user_id: object, keep_current: bool) -> Literal["keep", "end", "leave"]:
    """What "log out everywhere" of ``user_id`` does to the session of the request that asks (``owner``: its user):
    "end", "keep" (``keep_current``: re-signed with the new generation and a new id) or "leave" (another user's).
    The cases: docs/revocation.md, "Which sessions a record refuses"."""
    if owner is not None and str(owner) == str(user_id):
        return "keep" if keep_current else "end"
    return "keep" if owner is None and keep_current else "leave"
