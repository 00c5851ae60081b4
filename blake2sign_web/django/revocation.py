"""The records of ``stores.revocation`` in a Django cache: single-use links and link groups (SIGNED_URLS'
SINGLE_USE_CACHE), ended sessions and "log out everywhere" (REVOCATION_CACHE). Any cache whose ``add`` is atomic
across the processes that share it works (RedisCache, Memcached); a Redis Cluster, Sentinel or replica waits need
``RedisStoreCache``. The decisions are the core's; which caches, and bounding their wait: docs/revocation.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import BaseCache, caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisSerializer
from django.core.exceptions import ImproperlyConfigured
from django.db.models.signals import post_save

from ..stores import plans as store_plans
from ..stores import revocation
from ..stores.base import logger as logger
from ..stores.commands import send_sync
from ..stores.plans import Steps, T, unavailable_on_error
from ..stores.revocation import LinkAnswer, NotReplicated, StoreUnavailable
from .current import current_session

__all__ = [
    "NotReplicated",
    "RedisStoreCache",
    "StoreUnavailable",
    "alog_out_everywhere",
    "arevoke_link_group",
    "check_link",
    "consume_link",
    "log_out_everywhere",
    "revoke_link_group",
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
    """Use up a single-use link (``stores.plans.use_in_cache``): True on first use and its client's continuations."""
    return store_plans.use_in_cache(cache, _link_use(cache, nonce, expires_at, client, file_size, continuation, skew))


def _link_use(
    cache: BaseCache, nonce: str, expires_at: int, client: str, size: int | None, continuation: int | None, skew: float
) -> revocation.LinkUse:
    return revocation.link_use(
        nonce, expires_at, client, file_size=size, continuation=continuation, skew=skew, stored_name=cache.make_key
    )


def check_link(
    cache: BaseCache,
    nonce: str | None,
    expires_at: int,
    client: str,
    *,
    file_size: int | None = None,
    continuation: int | None = None,
    group: str,
    issued_us: int,
    skew: float = revocation.RECORD_MARGIN,
    clock_skew: float = revocation.DEFAULT_CLOCK_SKEW,
) -> LinkAnswer:
    """A grouped link's check (``stores.plans.check_in_cache``): "withdrawn" if ``group`` was revoked at or after
    ``issued_us`` less ``clock_skew``, else for a single-use link (``nonce``) "ok" or "used" as ``consume_link``."""
    use = None if nonce is None else _link_use(cache, nonce, expires_at, client, file_size, continuation, skew)
    return store_plans.check_in_cache(cache, revocation.group_key(group), issued_us, use, clock_skew)


def revoke_link_group(group: str, lifetime: int) -> None:
    """Withdraw every link of ``group`` issued until now, on every server, in SINGLE_USE_CACHE (links signed after
    it work; ``lifetime``: what the longest-lived of them has left). ValueError, or StoreUnavailable."""
    from .conf import link_settings

    alias = link_settings()["SINGLE_USE_CACHE"]
    if alias is None:
        raise ImproperlyConfigured(
            "revoke_link_group() needs BLAKE2SIGN_WEB['SIGNED_URLS']['SINGLE_USE_CACHE']: the alias of a cache shared "
            "by every process (RedisCache), where grouped links are checked."
        )
    record = revocation.group_revocation(group, lifetime)
    with unavailable_on_error("revoke a link group"):
        # An int: RedisCache keeps it as its digits, which RedisStoreCache's check reads without unpickling.
        get_cache(alias).set(record.key, int(record.value), timeout=record.ttl)


async def arevoke_link_group(group: str, lifetime: int) -> None:
    """``revoke_link_group`` for async views: the cache call runs in a thread, never on the event loop."""
    await sync_to_async(revoke_link_group)(group, lifetime)


def is_session_revoked(
    cache: BaseCache,
    session_id: bytes | None,
    user_id: object | None,
    issued_at: int,
    skew: float = revocation.DEFAULT_CLOCK_SKEW,
    prefix: str = "",
    generation: str | None = "",
    earlier_until: float | None = None,
) -> bool:
    """Whether a verified session was ended: one round trip (``get_many`` of the records the core names);
    ``earlier_until``: REVOCATION_EARLIER_NAMES_UNTIL as the core reads it (``revocation.session_check``)."""
    check = revocation.session_check(session_id, user_id, issued_at, generation, prefix, skew, earlier_until)
    if check is None:
        return False
    with unavailable_on_error("check a session"):
        found = cache.get_many(check.keys)
    return check.revoked([found.get(key) for key in check.keys])


def _write(cache: BaseCache, record: revocation.Record, action: str) -> None:
    with unavailable_on_error(action):
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
    with unavailable_on_error("read a user's generation"):
        return revocation.recorded_generation(cache.get(revocation.user_key(user_id, prefix)))


def log_out_everywhere(user: Any, *, keep_current: bool = True) -> None:
    """End every session of ``user`` that exists now, on every server (REVOCATION_CACHE must be set): the user
    gets a new session generation, which only later logins read. The session of the request being served:
    ``revocation.current_session_fate`` (docs/revocation.md, "What log out everywhere guarantees"). Raises
    StoreUnavailable if the cache cannot be reached: a logout that did not happen is never reported as done."""
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


post_save.connect(_log_out_on_password_change, dispatch_uid="blake2sign_web.stores.revocation.password_change")


class RedisStoreCache(BaseCache):
    """A cache backend for ``REVOCATION_CACHE`` and ``SINGLE_USE_CACHE`` on one Redis, a cluster, or Sentinel:
    ``LOCATION`` a store URL, ``OPTIONS`` as docs/revocation.md, "Deployment", says. Keys and values are
    RedisCache's, so an alias can switch between the two on the same Redis; it has what the records need only."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(params)
        if not isinstance(server, str):  # its type only: a URL in it may hold a password
            raise ImproperlyConfigured(f"RedisStoreCache's LOCATION is one URL (a str), not a {type(server).__name__}")
        self.replicas, self._client_options = store_plans.cache_options(params.get("OPTIONS") or {}, "RedisStoreCache")
        self.timeout, self.wait_replicas = self.replicas.timeout, self.replicas.wanted
        self.location = revocation.parse_store_url(server)
        self._serializer = RedisSerializer()

    @property
    def client(self) -> Any:
        """The process's redis-py client for this location and options (made on first use)."""
        return store_plans.shared_client(self.location, self._client_options)

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
        name, stored = self.make_and_validate_key(key, version=version), self._serializer.dumps(value)
        self._drive(store_plans.cache_set(name, stored, self.get_backend_timeout(timeout), self.replicas))

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        name, stored = self.make_and_validate_key(key, version=version), self._serializer.dumps(value)
        return self._drive(store_plans.cache_add(name, stored, self.get_backend_timeout(timeout), self.replicas))

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        """Atomic, and never creates the key (ValueError if it does not exist, as Django's caches do)."""
        name = self.make_and_validate_key(key, version=version)
        value = self._drive(store_plans.cache_incr(name, delta, self.replicas))
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return value

    def delete(self, key: Any, version: int | None = None) -> bool:
        return bool(self.client.delete(self.make_and_validate_key(key, version=version)))

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        name = self.make_and_validate_key(key, version=version)
        return bool(self._drive(store_plans.cache_touch(name, self.get_backend_timeout(timeout))))

    def clear(self) -> None:
        """FLUSHDB, as RedisCache does (on every primary of a cluster): give these records a Redis of their own."""
        if self.is_cluster:
            self.client.flushdb(target_nodes=self.client.PRIMARIES)
        else:
            self.client.flushdb()

    def use_file_link(self, use: revocation.LinkUse) -> bool | None:
        """``consume_link`` for a file link in one script; None when its two records (with this cache's
        KEY_PREFIX) cannot share a cluster slot (braces in KEY_PREFIX): then the cache's separate operations."""
        once, budget = self.make_and_validate_key(use.key), self.make_and_validate_key(use.budget)
        if self.is_cluster and self.client.keyslot(once) != self.client.keyslot(budget):
            return None
        return self._drive(store_plans.use_steps(use, self.replicas, once, budget, self._serializer.dumps(use.digest)))

    def check_link(
        self, group_key: str, issued_us: int, use: revocation.LinkUse | None, skew: float
    ) -> LinkAnswer | None:
        """``check_link`` in one round trip (``skew``: the clocks' allowance); None, as ``use_file_link``, when a
        file link's two records cannot share a cluster slot."""
        group = self.make_and_validate_key(group_key)
        if use is None:
            return self._drive(store_plans.group_steps(group, issued_us, None, self.replicas, skew=skew))
        once, budget = self.make_and_validate_key(use.key), self.make_and_validate_key(use.budget)
        if use.file_size is not None and self.is_cluster and self.client.keyslot(once) != self.client.keyslot(budget):
            return None
        value = self._serializer.dumps(use.digest)
        return self._drive(
            store_plans.group_steps(group, issued_us, use, self.replicas, once, budget, value, skew=skew)
        )

    def _drive(self, steps: Steps[T]) -> T:
        return store_plans.drive(steps, partial(send_sync, self.client, self.is_cluster, self.replicas, time.sleep))
