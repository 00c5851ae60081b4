"""Single-use links need Redis: a store when one answers at start-up, else None (the page says so)."""

from __future__ import annotations

from typing import Any

from ..redis_url import REDIS_URL, reachable


def single_use_store() -> Any:
    if not reachable(REDIS_URL):
        return None
    try:
        from blake2sign_web.starlette.revocation import RedisStore
    except ImportError:  # the redis package is not installed
        return None
    return RedisStore(REDIS_URL, timeout=0.5)
