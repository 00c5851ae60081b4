"""The records of ``blake2sign_web.revocation`` in a Django cache (RedisCache is the documented one).

Any cache backend works whose ``add`` is atomic across the processes that share it
(RedisCache: SET NX; Memcached: add). LocMemCache is per process and DummyCache keeps
nothing: neither makes a link single-use on a site served by more than one process.

A cache that raises (refused, reset, timed out) is "unavailable" and the configured
policy applies. Bound the wait in the cache's own OPTIONS, for RedisCache:

    CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/0",
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }}

Django's RedisCache talks to one server. For a Redis Cluster, a primary that Sentinel
manages, or writes that wait for replicas, the cache alias names ``RedisStoreCache`` instead
(same settings, same key names and values as RedisCache, so an alias can switch backends on
the same Redis without losing a record):

    CACHES = {"sessions": {
        "BACKEND": "blake2sign_web.django.revocation.RedisStoreCache",
        "LOCATION": "redis+cluster://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379",
        "OPTIONS": {"socket_timeout": 0.5, "wait_replicas": 1},
    }}
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import BaseCache, caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.exceptions import ImproperlyConfigured
from django.db.models.signals import post_save

from .. import revocation
from ..records import new_session_id as new_session_id
from ..redis_commands import write_sync
from ..revocation import NotReplicated, StoreUnavailable
from ..stores import INCR_EXISTING_SCRIPT, not_replicated, redis_client
from ..stores import logger as logger
from .current import current_session

__all__ = [
    "NotReplicated",
    "RedisStoreCache",
    "StoreUnavailable",
    "alog_out_everywhere",
    "consume_link",
    "log_out_everywhere",
]


def get_cache(alias: str) -> BaseCache:
    return caches[alias]


def consume_link(
    cache: BaseCache,
    nonce: str,
    expires_at: int,
    client: str,
    *,
    file_size: int | None = None,
    continuation: int | None = None,
    skew: float = revocation.RECORD_MARGIN,
) -> bool:
    """Use up a single-use link: True for its first use, and for the same client's continuations of a file.

    The records and their lifetimes are the core's (``revocation.link_use``); ``RedisStoreCache`` runs
    a file link's use as one script, any other cache with its own atomic operations.
    """
    use = revocation.link_use(
        nonce, expires_at, client, file_size=file_size, continuation=continuation, skew=skew, stored_name=cache.make_key
    )
    with _unavailable_on_error("consume a single-use link"):
        if isinstance(cache, RedisStoreCache) and file_size is not None:
            outcome = cache.use_file_link(use)
            if outcome is not None:
                return outcome
        if cache.add(use.key, use.digest, timeout=use.ttl):
            if file_size is not None:
                cache.set(use.budget, file_size, timeout=use.ttl)
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


@contextmanager
def _unavailable_on_error(action: str) -> Iterator[None]:
    """Whatever the cache raises (each backend has its own errors) becomes StoreUnavailable."""
    try:
        yield
    except Exception as error:
        raise StoreUnavailable(f"the cache failed to {action}: {type(error).__name__}") from None


def is_session_revoked(
    cache: BaseCache,
    session_id: bytes | None,
    user_id: object | None,
    issued_at: int,
    skew: float = revocation.DEFAULT_CLOCK_SKEW,
    prefix: str = "",
    generation: str | None = "",
) -> bool:
    """Whether a verified session was ended: one round trip (``get_many`` of the records the core names)."""
    check = revocation.session_check(session_id, user_id, issued_at, generation, prefix, skew)
    if check is None:
        return False
    with _unavailable_on_error("check a session"):
        found = cache.get_many(check.keys)
    return check.revoked([found.get(key) for key in check.keys])


def _write(cache: BaseCache, record: revocation.Record, action: str) -> None:
    with _unavailable_on_error(action):
        cache.set(record.key, record.value, timeout=record.ttl)


def revoke_session(
    cache: BaseCache, session_id: bytes, lifetime: int, prefix: str = "", skew: float = revocation.RECORD_MARGIN
) -> None:
    """End one session (by its id); ``lifetime``: the longest any token of it lives (SESSION_COOKIE_AGE)."""
    _write(cache, revocation.ended_session(session_id, lifetime, prefix, skew), "revoke a session")


def record_generation(
    cache: BaseCache,
    user_id: object,
    generation: str,
    lifetime: int,
    skew: float = revocation.DEFAULT_CLOCK_SKEW,
    prefix: str = "",
) -> None:
    """Give ``user_id`` a new session generation: every session stamped with another one is refused."""
    record = revocation.user_generation_record(user_id, generation, lifetime, prefix, skew)
    _write(cache, record, "log a user out everywhere")


def user_generation(cache: BaseCache, user_id: object, prefix: str = "") -> str:
    """The generation a session logging in as ``user_id`` carries: its user's record's, "" if none."""
    with _unavailable_on_error("read a user's generation"):
        return revocation.recorded_generation(cache.get(revocation.user_key(user_id, prefix)))


def log_out_everywhere(user: Any, *, keep_current: bool = True) -> None:
    """End every session of ``user`` that exists now, on every server (REVOCATION_CACHE must be set).

    The user gets a new session generation: every session of the user stamped with another
    (every session that exists now, however often it is re-signed, copies included) is refused,
    and every login from now on reads the new one, so it works at once. The session of the
    request being served (``revocation.current_session_fate``): when it is that user's, it is kept
    with ``keep_current`` (the default: re-signed at the response with the new generation and a
    new session id) or else flushed (its cookie deleted on this response); an anonymous one is
    kept with ``keep_current`` (a password reset that logs the user in); another user's is left
    alone. Called outside a request (a management command, a task), no session is kept.

    Raises StoreUnavailable if the cache cannot be reached: a logout that did not happen
    is never reported as done.
    """
    from .conf import SETTING, session_config

    config = session_config()
    if config.revocation_cache is None:
        raise ImproperlyConfigured(
            f"log_out_everywhere() needs {SETTING}['SESSIONS']['REVOCATION_CACHE']: the alias of a cache shared "
            "by every process (RedisCache) where the user's session generation is kept."
        )
    user_id = user._meta.pk.value_to_string(user)  # as django.contrib.auth.login() stores it
    generation = revocation.new_generation()
    current, fate = current_session(), "leave"
    if isinstance(current, SessionBase):  # read (and checked) now, while the new generation does not exist yet
        fate = revocation.current_session_fate(current.get(SESSION_KEY), user_id, keep_current)
        if fate == "keep":
            current.keep_through_log_out(user_id, generation)
    cache = get_cache(config.revocation_cache)
    record_generation(
        cache, user_id, generation, config.cookie_age, config.revocation_clock_skew, config.revocation_key_prefix
    )
    if fate == "end" and isinstance(current, SessionBase):
        try:
            current.flush()
        except StoreUnavailable as error:  # emptied all the same; its generation already refuses it everywhere
            logger.error("Session could not be revoked: %s.", error)


async def alog_out_everywhere(user: Any, *, keep_current: bool = True) -> None:
    """``log_out_everywhere`` for async views: the cache call runs in a thread, never on the event loop."""
    await sync_to_async(log_out_everywhere)(user, keep_current=keep_current)


def _log_out_on_password_change(
    sender: Any, instance: Any, created: bool = False, raw: bool = False, **kw: Any
) -> None:
    """post_save: ``set_password()`` then ``save()`` (Django marks the user with ``_password`` until saved)."""
    if created or raw or getattr(instance, "_password", None) is None or not hasattr(instance, "set_password"):
        return
    from .conf import session_options

    if session_options().get("REVOCATION_CACHE") is None:
        return
    log_out_everywhere(instance)


post_save.connect(_log_out_on_password_change, dispatch_uid="blake2sign_web.revocation.password_change")


class RedisStoreCache(BaseCache):
    """A cache backend for ``REVOCATION_CACHE`` and ``SINGLE_USE_CACHE`` on one Redis, a cluster, or Sentinel.

    ``LOCATION``: one URL, as ``RedisStore`` reads it (``revocation.parse_store_url``):
    ``redis://`` / ``rediss://`` / ``unix://`` (one server), ``redis+cluster://host:port,host:port``
    (a Redis Cluster, from any of its nodes), ``redis+sentinel://host:26379,.../<name>[/<db>]``
    (the primary that the sentinels monitor as ``<name>``, followed through failovers).

    ``OPTIONS``: ``socket_timeout`` (seconds, 0.5 by default: a Redis that hangs is unavailable
    that soon, and the REVOCATION_UNAVAILABLE / SINGLE_USE_UNAVAILABLE policy applies),
    ``socket_connect_timeout`` (the same by default), ``wait_replicas`` (0 by default: see below);
    anything else goes to the redis-py client as it is (``redis.Redis``, ``redis.cluster.RedisCluster``).

    Keys and values are RedisCache's (``KEY_PREFIX``, ``VERSION``, ``KEY_FUNCTION``; integers as
    digits, anything else pickled): on the same Redis, switching an alias between the two backends
    keeps every record. On a cluster, ``get_many`` sends one ``MGET`` per slot, all in one pipeline
    (one request per node, at once), and a file link's two records are used in one script, in one
    slot. ``wait_replicas=N``: ``set``, ``add`` and ``incr`` (revocations, uses of single-use links)
    wait (``WAIT``, half of ``socket_timeout`` at most) until N replicas have the write; fewer raise
    ``NotReplicated``, and an ``add`` is undone first. Meant for revocation and single-use records,
    not as a general cache: it has what they need (``get``, ``get_many``, ``set``, ``add``,
    ``incr``/``decr``, ``delete``, ``touch``, ``has_key``, ``clear``).

    One redis-py client per process and location, shared by the threads (redis-py's clients are
    thread-safe): a cluster client learns the slot layout once, not once per thread.
    """

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(params)
        if not isinstance(server, str):
            raise ImproperlyConfigured(f"RedisStoreCache's LOCATION is one URL (a str), not {server!r}")
        options = dict(params.get("OPTIONS") or {})
        self.timeout = revocation.check_timeout(
            options.pop("socket_timeout", revocation.DEFAULT_TIMEOUT), "RedisStoreCache OPTIONS['socket_timeout']"
        )
        connect = revocation.check_timeout(
            options.pop("socket_connect_timeout", self.timeout), "RedisStoreCache OPTIONS['socket_connect_timeout']"
        )
        self.wait_replicas = revocation.check_wait_replicas(
            options.pop("wait_replicas", 0), "RedisStoreCache OPTIONS['wait_replicas']"
        )
        self.location = revocation.parse_store_url(server)
        self._client_options = {"socket_timeout": self.timeout, "socket_connect_timeout": connect, **options}
        from django.core.cache.backends.redis import RedisSerializer

        self._serializer = RedisSerializer()

    @property
    def client(self) -> Any:
        """The process's redis-py client for this location and options (made on first use)."""
        return _shared_client(self.location, self._client_options)

    @property
    def is_cluster(self) -> bool:
        return self.location.kind == "cluster"

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> int | None:
        """Seconds, as RedisCache counts them: None never expires, 0 (or less) deletes."""
        if timeout is DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        return None if timeout is None else max(0, int(timeout))

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        value = self.client.get(self.make_and_validate_key(key, version=version))
        return default if value is None else self._serializer.loads(value)

    def get_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        made = {self.make_and_validate_key(key, version=version): key for key in keys}
        if not made:
            return {}
        names = list(made)
        values = self.client.mget_nonatomic(names) if self.is_cluster else self.client.mget(names)
        return {made[name]: self._serializer.loads(v) for name, v in zip(names, values, strict=True) if v is not None}

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return bool(self.client.exists(self.make_and_validate_key(key, version=version)))

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        name = self.make_and_validate_key(key, version=version)
        seconds = self.get_backend_timeout(timeout)
        if seconds == 0:
            self.client.delete(name)
            return
        _, acknowledged = self._write(name, ("SET", name, self._serializer.dumps(value), *_expiry(seconds)))
        if acknowledged < self.wait_replicas:
            raise self._not_replicated("write a record", acknowledged)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        name = self.make_and_validate_key(key, version=version)
        seconds = self.get_backend_timeout(timeout)
        stored = self._serializer.dumps(value)
        if seconds == 0:
            return bool(self.client.set(name, stored, nx=True) and self.client.delete(name))
        added, acknowledged = self._write(name, ("SET", name, stored, *_expiry(seconds), "NX"))
        if added and acknowledged < self.wait_replicas:
            self.client.eval(revocation.UNDO_FIRST_USE_SCRIPT, 2, name, name, stored)
            raise self._not_replicated("add a record", acknowledged)
        return bool(added)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        """Atomic, and never creates the key (ValueError if it does not exist, as Django's caches do)."""
        name = self.make_and_validate_key(key, version=version)
        value, acknowledged = self._write(name, ("EVAL", INCR_EXISTING_SCRIPT, 1, name, delta))
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        if acknowledged < self.wait_replicas:
            raise self._not_replicated("count down a budget", acknowledged)
        return int(value)

    def delete(self, key: Any, version: int | None = None) -> bool:
        return bool(self.client.delete(self.make_and_validate_key(key, version=version)))

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        name = self.make_and_validate_key(key, version=version)
        seconds = self.get_backend_timeout(timeout)
        if seconds is None:
            return bool(self.client.persist(name))
        return bool(self.client.expire(name, seconds))

    def clear(self) -> None:
        """FLUSHDB, as RedisCache does (on every primary of a cluster): give these records a Redis of their own."""
        if self.is_cluster:
            self.client.flushdb(target_nodes=self.client.PRIMARIES)
        else:
            self.client.flushdb()

    def use_file_link(self, use: revocation.LinkUse) -> bool | None:
        """``consume_link`` for a file link in one script (first use, or a continuation within the budget).

        None when the two records' names (with this cache's KEY_PREFIX) cannot share a cluster
        slot (braces in KEY_PREFIX): the caller then uses the cache's separate operations.
        """
        once, budget = self.make_and_validate_key(use.key), self.make_and_validate_key(use.budget)
        if self.is_cluster and self.client.keyslot(once) != self.client.keyslot(budget):
            return None
        stored = self._serializer.dumps(use.digest)
        outcome, acknowledged = self._write(once, use.command(once, budget, stored))
        if outcome and acknowledged < self.wait_replicas:
            if use.first_use(outcome):
                self.client.eval(*use.undo_command(once, budget, stored)[1:])  # EVAL through the client's routing
            raise self._not_replicated("use a single-use link", acknowledged)
        return bool(outcome)

    def _write(self, name: str, command: tuple[Any, ...]) -> tuple[Any, int]:
        """Run ``command`` (it writes ``name``): its reply, and how many replicas acknowledged it."""
        return write_sync(self.client, self.is_cluster, name, command, self.wait_replicas, self.timeout, time.sleep)

    def _not_replicated(self, action: str, acknowledged: int) -> NotReplicated:
        return not_replicated(action, acknowledged, self.wait_replicas, self.timeout)


_CLIENTS: dict[tuple[Any, ...], Any] = {}
_CLIENTS_LOCK: Final = threading.Lock()


def _expiry(seconds: int | None) -> tuple[Any, ...]:
    return () if seconds is None else ("EX", seconds)


def _shared_client(location: revocation.StoreLocation, options: dict[str, Any]) -> Any:
    identity = (location, tuple(sorted((k, repr(v)) for k, v in options.items())))
    client = _CLIENTS.get(identity)
    if client is None:
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(identity)
            if client is None:
                client = _CLIENTS[identity] = redis_client(location, options, asynchronous=False)
    return client
