"""Django settings for gunicorn serving ``confirm_urls``: single-use links in the Redis at $BLAKE2SIGN_REDIS_URL."""

import os

from tests.django_links import single_use_caches
from tests.signed_urls.server_settings import *  # noqa: F403

ROOT_URLCONF = "tests.signed_urls.confirm_urls"
CACHES = single_use_caches(
    os.environ.get("BLAKE2SIGN_REDIS_URL", "redis://127.0.0.1:1/0"), {"socket_timeout": 2, "socket_connect_timeout": 2}
)
BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "links"}}
