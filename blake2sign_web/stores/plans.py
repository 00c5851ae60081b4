"""What the stores of revocation and single-use records send, and what the replies mean: plans, without I/O.

A plan's steps are a generator: it yields a ``Step`` (one command on one key), is sent the reply, and returns
the outcome, or raises (``NotReplicated``: fewer replicas than ``wait_replicas`` acknowledged a write). The
adapters drive it (``drive`` with a blocking client, ``adrive`` with ``redis.asyncio``, both sending through
``stores.commands``) and only do the I/O: which commands, in which order, how a write is checked for its
replicas and undone, and what a store's failure means, are decided here.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Generic, NamedTuple, Protocol, TypeVar

from .base import (
    INCR_EXISTING_SCRIPT,
    UNDO_FIRST_USE_SCRIPT,
    StoreLocation,
    StoreUnavailable,
    check_wait_replicas,
    not_replicated,
    redis_client,
)
from .revocation import (
    CLOCK,
    DEFAULT_CLOCK_SKEW,
    DEFAULT_TIMEOUT,
    LinkAnswer,
    LinkUse,
    Record,
    check_timeout,
    ended_session,
    group_key,
    group_revocation,
    link_use,
    new_generation,
    recorded_generation,
    user_generation_record,
    user_key,
    withdrawn,
)

T = TypeVar("T")


class Step(NamedTuple):
    """One command for the node serving ``key``; ``write``: a write, whose reply is (reply, replicas that
    acknowledged it: ``stores.commands.write_sync``/``write_async``), else the command's reply alone."""

    key: str
    command: tuple[Any, ...]
    write: bool = False


class Batch(NamedTuple):
    """Steps sent in one round trip (one pipeline; on a cluster, one request per node): their replies, in order."""

    steps: tuple[Step, ...]


Steps = Generator[Any, Any, T]  # yields a Step or a Batch


class Plan(Generic[T]):
    """One operation on a store: what it does (``action``, in the words of its failures) and its ``steps``."""

    __slots__ = ("action", "steps")

    def __init__(self, action: str, steps: Steps[T]) -> None:
        self.action, self.steps = action, steps


def drive(steps: Steps[T], send: Callable[[Step], Any]) -> T:
    """Run a plan's ``steps`` with a blocking ``send``: its outcome."""
    reply = None
    try:
        while True:
            reply = send(steps.send(reply))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(steps: Steps[T], send: Callable[[Step], Awaitable[Any]]) -> T:
    """Run a plan's ``steps`` with an async ``send``: its outcome."""
    reply = None
    try:
        while True:
            reply = await send(steps.send(reply))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Replicas:
    """How many replicas must acknowledge each write (``wait_replicas``) within half of the store's ``timeout``."""

    wanted: int = 0
    timeout: float = DEFAULT_TIMEOUT

    def check(self, action: str, acknowledged: int) -> None:
        if acknowledged < self.wanted:
            raise not_replicated(action, acknowledged, self.wanted, self.timeout)

    @classmethod
    def checked(cls, wanted: object, timeout: float, name: str) -> Replicas:
        """The replica waits a store's ``wait_replicas`` (``name``, its setting) asks for, within its ``timeout``:
        ValueError if it is not a number of replicas (``stores.check_wait_replicas``)."""
        return cls(check_wait_replicas(wanted, name), timeout)


@dataclass(frozen=True, slots=True)
class StorePlans:
    """The plans of one store, with its settings: key ``prefix``, clocks' allowance (``skew``), replica waits
    and the ``clock`` that dates records."""

    prefix: str = ""
    skew: float = DEFAULT_CLOCK_SKEW
    replicas: Replicas = Replicas()
    clock: Callable[[], float] = CLOCK

    def use_link(
        self, nonce: str, expires_at: int, client: str, file_size: int | None, continuation: int | None
    ) -> Plan[bool]:
        """Use up a single-use link (``revocation.link_use``): True for its first use, and for the same client's
        continuations of a file."""
        use = link_use(
            nonce, expires_at, client, file_size=file_size, continuation=continuation, skew=self.skew, clock=self.clock
        )
        return Plan("consume a single-use link", use_steps(use, self.replicas))

    def check_link(
        self,
        nonce: str | None,
        expires_at: int,
        client: str,
        file_size: int | None,
        continuation: int | None,
        group: str,
        issued_us: int,
    ) -> Plan[LinkAnswer]:
        """A grouped link's check: its group's record read, and a single-use link (``nonce``) used up with it in
        the same round trip (``group_steps``)."""
        use = None
        if nonce is not None:
            use = link_use(
                nonce,
                expires_at,
                client,
                file_size=file_size,
                continuation=continuation,
                skew=self.skew,
                clock=self.clock,
            )
        key = group_key(group, self.prefix)
        return Plan("check a link group", group_steps(key, issued_us, use, self.replicas, skew=self.skew))

    def revoke_link_group(self, group: str, lifetime: int) -> Plan[None]:
        """Withdraw every link of ``group`` issued until now; ``lifetime``: the longest any of them still lives."""
        record = group_revocation(group, lifetime, self.prefix, self.skew, clock=self.clock)
        return Plan("revoke a link group", _write(record, "revoke a link group", self.replicas))

    def end_session(self, session_id: bytes, lifetime: int) -> Plan[None]:
        """End one session (by its id); ``lifetime``: the longest any token of it lives."""
        record = ended_session(session_id, lifetime, self.prefix, self.skew)
        return Plan("revoke a session", _write(record, "revoke a session", self.replicas))

    def log_out_everywhere(self, user_id: object, lifetime: int) -> Plan[str]:
        """Give ``user_id`` a new generation (returned): every session stamped with another one is refused."""
        return Plan("log a user out everywhere", self._new_generation(user_id, lifetime))

    def _new_generation(self, user_id: object, lifetime: int) -> Steps[str]:
        generation = new_generation()
        record = user_generation_record(user_id, generation, lifetime, self.prefix, self.skew, clock=self.clock)
        yield from _write(record, "log a user out everywhere", self.replicas)
        return generation

    def user_generation(self, user_id: object) -> Plan[str]:
        """The generation a session logging in as ``user_id`` carries: its user's record's, "" if none."""
        return Plan("read a user's generation", _read_generation(user_key(user_id, self.prefix)))


def _write(record: Record, action: str, replicas: Replicas) -> Steps[None]:
    _, acknowledged = yield Step(record.key, ("SET", record.key, record.value, "EX", record.ttl), True)
    replicas.check(action, acknowledged)


def _read_generation(key: str) -> Steps[str]:
    return recorded_generation((yield Step(key, ("GET", key))))


def use_steps(use: LinkUse, replicas: Replicas, key: str = "", budget: str = "", value: Any = None) -> Steps[bool]:
    """A single-use link's use in one command (``LinkUse.command``). A first use its replicas do not acknowledge
    is undone, then refused (``NotReplicated``): the link stays usable, and was not used. ``key``, ``budget``,
    ``value``: as the store holds them (a Django cache adds its prefix and serializes)."""
    key = key or use.key
    outcome, acknowledged = yield Step(key, use.command(key, budget, value), True)
    if outcome and acknowledged < replicas.wanted:
        yield from _unreplicated(use, replicas, outcome, acknowledged, key, budget, value)
    return bool(outcome)


def _unreplicated(
    use: LinkUse, replicas: Replicas, outcome: Any, acknowledged: int, key: str, budget: str, value: Any
) -> Steps[None]:
    """A use that fewer replicas than wanted acknowledged: a first use is undone, then NotReplicated."""
    if use.first_use(outcome):
        yield Step(key, use.undo_command(key, budget, value))
    replicas.check("use a single-use link", acknowledged)


def group_steps(
    group: str,
    issued_us: int,
    use: LinkUse | None,
    replicas: Replicas,
    key: str = "",
    budget: str = "",
    value: Any = None,
    *,
    skew: float,
) -> Steps[LinkAnswer]:
    """A grouped link's check: GET of its group's record (``group``: its name in the store), and for a single-use
    link (``use``) its use (``use_steps``) in the same round trip; ``skew``: how far the servers' clocks may differ
    (``revocation.withdrawn``). Withdrawn wins over used; a withdrawn link that was used up here stays used (it is
    refused for good either way)."""
    read = Step(group, ("GET", group))
    if use is None:
        record = yield read
        return "withdrawn" if withdrawn(issued_us, record, skew) else "ok"
    key = key or use.key
    record, (outcome, acknowledged) = yield Batch((read, Step(key, use.command(key, budget, value), True)))
    if outcome and acknowledged < replicas.wanted:
        yield from _unreplicated(use, replicas, outcome, acknowledged, key, budget, value)
    if withdrawn(issued_us, record, skew):
        return "withdrawn"
    return "ok" if outcome else "used"


# A Django cache backend on Redis (``RedisStoreCache``): its writes, with RedisCache's meaning of a timeout.


def cache_set(name: str, value: Any, seconds: int | None, replicas: Replicas) -> Steps[None]:
    """``set``: 0 seconds deletes, None never expires."""
    if seconds == 0:
        yield Step(name, ("DEL", name))
        return
    _, acknowledged = yield Step(name, ("SET", name, value, *_expiry(seconds)), True)
    replicas.check("write a record", acknowledged)


def cache_add(name: str, value: Any, seconds: int | None, replicas: Replicas) -> Steps[bool]:
    """``add`` (SET NX): whether it was added; one its replicas do not acknowledge is undone, then refused."""
    if seconds == 0:
        return bool((yield Step(name, ("SET", name, value, "NX"))) and (yield Step(name, ("DEL", name))))
    added, acknowledged = yield Step(name, ("SET", name, value, *_expiry(seconds), "NX"), True)
    if added and acknowledged < replicas.wanted:
        yield Step(name, ("EVAL", UNDO_FIRST_USE_SCRIPT, 2, name, name, value))
        replicas.check("add a record", acknowledged)
    return bool(added)


def cache_incr(name: str, delta: int, replicas: Replicas) -> Steps[int | None]:
    """``incr`` that never creates the key: None if it does not exist (Django's caches raise ValueError)."""
    value, acknowledged = yield Step(name, ("EVAL", INCR_EXISTING_SCRIPT, 1, name, delta), True)
    if value is None:
        return None
    replicas.check("count down a budget", acknowledged)
    return int(value)


def cache_touch(name: str, seconds: int | None) -> Steps[Any]:
    """``touch``: a new expiry (None: never expires)."""
    return (yield Step(name, ("PERSIST", name) if seconds is None else ("EXPIRE", name, seconds)))


def _expiry(seconds: int | None) -> tuple[Any, ...]:
    return () if seconds is None else ("EX", seconds)


def cache_options(options: dict[str, Any], owner: str) -> tuple[Replicas, dict[str, Any]]:
    """A cache backend's ``OPTIONS``: its replica waits, and the redis-py client's options (socket timeouts
    0.5 s by default; the rest as given)."""
    options = dict(options)
    timeout = check_timeout(options.pop("socket_timeout", DEFAULT_TIMEOUT), f"{owner} OPTIONS['socket_timeout']")
    connect = check_timeout(
        options.pop("socket_connect_timeout", timeout), f"{owner} OPTIONS['socket_connect_timeout']"
    )
    replicas = Replicas.checked(options.pop("wait_replicas", 0), timeout, f"{owner} OPTIONS['wait_replicas']")
    return replicas, {"socket_timeout": timeout, "socket_connect_timeout": connect, **options}


class CacheLike(Protocol):
    """The atomic operations of a cache (Django's ``BaseCache``) that ``consume_in_cache`` uses."""

    def add(self, key: str, value: Any, timeout: int) -> bool: ...
    def set(self, key: str, value: Any, timeout: int) -> None: ...
    def get(self, key: str) -> Any: ...
    def decr(self, key: str, delta: int) -> int: ...
    def delete(self, key: str) -> Any: ...


def consume_in_cache(cache: CacheLike, use: LinkUse) -> bool:
    """``use_link`` with a cache's own atomic operations (``add``, ``decr``), for a cache without the script."""
    if cache.add(use.key, use.digest, timeout=use.ttl):
        if use.file_size is not None:
            cache.set(use.budget, use.file_size, timeout=use.ttl)
        return True
    cost = use.allowed_continuation(cache.get(use.key))
    if cost is None:
        return False
    try:
        left = cache.decr(use.budget, cost)  # atomic in Redis (DECRBY) and in the local-memory cache
    except ValueError:  # no budget: the first use was not of a file, or it expired
        return False
    if left < 0:
        # Spent (or a budget that expired between the backend's check and its DECRBY, left without a TTL).
        cache.delete(use.budget)
        return False
    return True


def use_in_cache(cache: CacheLike, use: LinkUse) -> bool:
    """A single-use link's use in a cache: a file link's in one script where the cache has one (``use_file_link``,
    Django's ``RedisStoreCache``; None: its two records cannot share a cluster slot), else ``consume_in_cache``."""
    script = getattr(cache, "use_file_link", None)
    with unavailable_on_error("consume a single-use link"):
        if script is not None and use.file_size is not None and (outcome := script(use)) is not None:
            return bool(outcome)
        return consume_in_cache(cache, use)


def check_in_cache(cache: CacheLike, group: str, issued_us: int, use: LinkUse | None, skew: float) -> LinkAnswer:
    """A grouped link's check in a cache (``group``: its record's key): in one round trip where the cache can
    (``check_link``, ``RedisStoreCache``), else its record read (``withdrawn``), then the link used up."""
    one_trip = getattr(cache, "check_link", None)
    with unavailable_on_error("check a link group"):
        if one_trip is not None and (outcome := one_trip(group, issued_us, use, skew)) is not None:
            answer: LinkAnswer = outcome
            return answer
        record = cache.get(group)
    if withdrawn(issued_us, record, skew):
        return "withdrawn"
    return "ok" if use is None or use_in_cache(cache, use) else "used"


@contextmanager
def unavailable_on_error(action: str, store: str = "the cache", *, keep: bool = False) -> Iterator[None]:
    """Whatever ``store`` raises (each backend has its own errors) becomes StoreUnavailable; ``keep``: a
    StoreUnavailable raised inside (a plan's ``NotReplicated``) is raised as it is, its words kept."""
    try:
        yield
    except Exception as error:
        if keep and isinstance(error, StoreUnavailable):
            raise
        raise StoreUnavailable(f"{store} failed to {action}: {type(error).__name__}") from None


_CLIENTS: dict[tuple[Any, ...], Any] = {}
_CLIENTS_LOCK: Final = threading.Lock()


def shared_client(location: StoreLocation, options: dict[str, Any]) -> Any:
    """The process's blocking redis-py client for ``location`` and ``options``, made on first use and shared by
    the threads (redis-py's clients are thread-safe): a cluster client learns the slot layout once."""
    identity = (location, tuple(sorted((k, repr(v)) for k, v in options.items())))
    client = _CLIENTS.get(identity)
    if client is None:
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(identity)
            if client is None:
                client = _CLIENTS[identity] = redis_client(location, options, asynchronous=False)
    return client
