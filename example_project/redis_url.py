"""The Redis both example sites use for single-use links, and whether it answers (checked once, at start-up)."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

REDIS_URL = os.environ.get("EXAMPLE_REDIS_URL", "redis://127.0.0.1:6379/1")


def reachable(url: str = REDIS_URL) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=0.2):
            return True
    except OSError:
        return False
