"""Django settings for the signed-link tests: single-use records in a real redis-server, files to serve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.redis_server import PATIENT_OPTIONS, RedisServer


def single_use_caches(location: str, options: Any) -> dict[str, Any]:
    """CACHES with a ``links`` alias on the Redis at ``location`` (the settings modules of served sites use it too)."""
    return {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "links": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": location, "OPTIONS": options},
    }


def use_single_use_cache(
    settings: Any, server: RedisServer, cache_options: Any = PATIENT_OPTIONS, **options: Any
) -> None:
    """Single-use links kept in ``server`` under the ``links`` alias; ``options`` go to SIGNED_URLS."""
    settings.CACHES = single_use_caches(server.url, cache_options)
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "links", **options}}


def use_served_storage(settings: Any, root: Path) -> Path:
    """The ``signed_test`` storage (what the test URLconfs serve) on the folder ``root``."""
    settings.STORAGES = {
        **settings.STORAGES,
        "signed_test": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": root}},
    }
    return root
