"""The records of ``blake2sign_web.revocation`` in a Django cache (RedisCache is the documented one).

Any cache backend works whose ``add`` is atomic across the processes that share it
(RedisCache: SET NX; Memcached: add). LocMemCache is per process and DummyCache keeps
nothing: neither makes a link single-use on a site served by more than one process.

A cache that raises (refused, reset, timed out) is "unavailable" and the configured
policy applies. Bound the wait in the cache's own OPTIONS, for RedisCache::

    CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/0",
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }}
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from django.core.cache import BaseCache, caches

from .. import revocation
from ..revocation import StoreUnavailable

__all__ = ["StoreUnavailable", "consume_link"]

logger: Final = logging.getLogger("blake2sign_web.revocation")


def get_cache(alias: str) -> BaseCache:
    return caches[alias]


def consume_link(cache: BaseCache, nonce: str, expires_at: int, client: str, *, method: str, has_range: bool) -> bool:
    """Use up a single-use link: True for its first use (and the same client's continuations)."""
    key = revocation.single_use_key(nonce)
    ttl = revocation.ttl_until(expires_at, time.time())
    with _unavailable_on_error("consume a single-use link"):
        if cache.add(key, revocation.client_digest(client), timeout=ttl):
            return True
        recorded = cache.get(key)
    return revocation.may_continue(recorded, client, method=method, has_range=has_range)


@contextmanager
def _unavailable_on_error(action: str) -> Iterator[None]:
    """Whatever the cache raises (each backend has its own errors) becomes StoreUnavailable."""
    try:
        yield
    except Exception as error:
        raise StoreUnavailable(f"the cache failed to {action}: {type(error).__name__}") from None


def is_session_revoked(cache: BaseCache, session_id: bytes | None, user_id: object | None, issued_at: int) -> bool:
    """Whether a verified session was ended: one round trip (``get_many`` of its two records)."""
    keys = {}
    if session_id is not None:
        keys["session"] = revocation.session_key(session_id)
    if user_id is not None:
        keys["user"] = revocation.user_key(user_id)
    if not keys:
        return False
    with _unavailable_on_error("check a session"):
        found = cache.get_many(list(keys.values()))
    return revocation.is_revoked(
        issued_at,
        session_revoked=found.get(keys.get("session", "")),
        not_before=found.get(keys.get("user", "")),
    )


def revoke_session(cache: BaseCache, session_id: bytes, expires_at: float) -> None:
    """End one session (by its id) until ``expires_at``, when its token ends anyway."""
    with _unavailable_on_error("revoke a session"):
        cache.set(revocation.session_key(session_id), 1, timeout=revocation.ttl_until(expires_at, time.time()))


def record_not_before(cache: BaseCache, user_id: object, lifetime: int) -> None:
    """End every session of ``user_id`` issued before now; the record lasts ``lifetime`` seconds."""
    value = revocation.not_before_value(time.time())
    with _unavailable_on_error("log a user out everywhere"):
        cache.set(revocation.user_key(user_id), value, timeout=max(1, lifetime))
