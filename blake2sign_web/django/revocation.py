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
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.exceptions import ImproperlyConfigured
from django.db.models.signals import post_save

from .. import revocation
from ..revocation import StoreUnavailable
from ..serializer import SESSION_ID_SIZE

__all__ = ["StoreUnavailable", "alog_out_everywhere", "consume_link", "log_out_everywhere"]

logger: Final = logging.getLogger("blake2sign_web.revocation")


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

    ``file_size``: the link serves a file, whose size becomes the budget of its continuations;
    ``continuation``: what this request would fetch as one (``revocation.continuation_cost``).
    The records are kept until the link expires plus ``skew`` (at least ``RECORD_MARGIN``):
    a server whose clock runs behind still takes the link as valid that long.
    """
    key = revocation.single_use_key(nonce)
    budget = revocation.budget_key(nonce, _stored_name(cache, key))
    ttl = revocation.single_use_ttl(expires_at, time.time(), skew)
    with _unavailable_on_error("consume a single-use link"):
        if cache.add(key, revocation.client_digest(client), timeout=ttl):
            if file_size is not None:
                cache.set(budget, file_size, timeout=ttl)
            return True
        if continuation is None or not revocation.same_client(cache.get(key), client):
            return False
        try:
            left = cache.decr(budget, continuation)  # atomic in Redis (DECRBY) and in the local-memory cache
        except ValueError:  # no budget: the first use was not of a file, or it expired
            return False
        if left < 0:
            # Spent (or a budget that expired between the backend's check and its DECRBY, left without a TTL).
            cache.delete(budget)
            return False
    return True


def _stored_name(cache: BaseCache, key: str) -> str:
    """The name a cache stores ``key`` under (its KEY_PREFIX, version, KEY_FUNCTION), for the budget's hash tag."""
    return cache.make_key(key)


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
) -> bool:
    """Whether a verified session was ended: one round trip (``get_many`` of its records)."""
    session_keys = [] if session_id is None else revocation.session_keys(session_id, prefix)
    user_keys = [] if user_id is None else revocation.user_keys(user_id, prefix)
    if not session_keys and not user_keys:
        return False
    with _unavailable_on_error("check a session"):
        found = cache.get_many([*session_keys, *user_keys])
    return revocation.is_revoked(
        issued_at,
        session_id=session_id,
        session_records=[found.get(key) for key in session_keys],
        user_records=[found.get(key) for key in user_keys],
        skew=skew,
    )


def revoke_session(cache: BaseCache, session_id: bytes, expires_at: float, prefix: str = "") -> None:
    """End one session (by its id) until ``expires_at``, when its token ends anyway (plus the clocks' margin)."""
    key = revocation.session_key(session_id, prefix)
    ttl = revocation.session_record_ttl(expires_at, time.time())
    with _unavailable_on_error("revoke a session"):
        cache.set(key, revocation.SESSION_ENDED, timeout=ttl)


def record_not_before(
    cache: BaseCache,
    user_id: object,
    lifetime: int,
    kept: bytes | None = None,
    skew: float = revocation.DEFAULT_CLOCK_SKEW,
    prefix: str = "",
) -> None:
    """End every session of ``user_id`` issued until now but the one with id ``kept``; kept ``lifetime`` + skew."""
    value = revocation.not_before_value(time.time(), kept)
    with _unavailable_on_error("log a user out everywhere"):
        cache.set(revocation.user_key(user_id, prefix), value, timeout=revocation.not_before_ttl(lifetime, skew))


def new_session_id() -> bytes:
    return secrets.token_bytes(SESSION_ID_SIZE)


def log_out_everywhere(user: Any, *, keep_current: bool = True) -> None:
    """End every session of ``user`` issued until now, on every server (REVOCATION_CACHE must be set).

    Refused from now on: every session of the user whose token was issued at or before
    now plus ``REVOCATION_CLOCK_SKEW``, however often it is re-signed, copies included.
    With ``keep_current`` (the default) the session of the request being served is kept
    when it is that user's, or anonymous (a password reset that logs the user in): it is
    given a new session id, which the cut-off exempts, and re-signed at the response
    (``login()`` and ``update_session_auth_hash()`` keep that id). Called outside a
    request (a management command, a task), no session is kept.

    Raises StoreUnavailable if the cache cannot be reached: a logout that did not happen
    is never reported as done.
    """
    from .conf import SETTING, session_config
    from .sessions import current_session

    config = session_config()
    if config.revocation_cache is None:
        raise ImproperlyConfigured(
            f"log_out_everywhere() needs {SETTING}['SESSIONS']['REVOCATION_CACHE']: the alias of a cache shared "
            "by every process (RedisCache) where the cut-off is kept."
        )
    user_id = user._meta.pk.value_to_string(user)  # as django.contrib.auth.login() stores it
    current = current_session() if keep_current else None
    kept = None if current is None else current.keep_through_cut_off(user_id)
    cache = get_cache(config.revocation_cache)
    record_not_before(
        cache, user_id, settings.SESSION_COOKIE_AGE, kept, config.revocation_clock_skew, config.revocation_key_prefix
    )


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
