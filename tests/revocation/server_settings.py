"""Django settings for the several-worker gunicorn test: single-use links in the Redis at $BLAKE2SIGN_REDIS_URL.

One server (``redis://``): Django's RedisCache. A cluster (``redis+cluster://``): this project's RedisStoreCache.
"""

import os

from tests.signed_urls.server_settings import *  # noqa: F403

_URL = os.environ.get("BLAKE2SIGN_REDIS_URL", "redis://127.0.0.1:1/0")
_BACKEND = (
    "blake2sign_web.django.revocation.RedisStoreCache"
    if _URL.startswith("redis+")
    else "django.core.cache.backends.redis.RedisCache"
)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "links": {
        "BACKEND": _BACKEND,
        "LOCATION": _URL,
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    },
}
BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "links"}}
