"""Single-use links need Redis: a store when one answers at start-up, else None (the page says so)."""

from __future__ import annotations

import os
import socket
from typing import Any
from urllib.parse import urlsplit

REDIS_URL = os.environ.get("EXAMPLE_REDIS_URL", "redis://127.0.0.1:6379/1")


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=0.2):
            return True
    except OSError:
        return False


def single_use_store() -> Any:
    if not reachable(REDIS_URL):
        return None
    try:
        from blake2sign_web.starlette.revocation import RedisStore
    except ImportError:  # the redis package is not installed
        return None
    return RedisStore(REDIS_URL, timeout=0.5)
