"""Django settings behind the TLS-terminating nginx of the proxy test: trust its headers, bind links to the host.

The prefix comes from the server (gunicorn's SCRIPT_NAME) or from $BLAKE2SIGN_FORCE_SCRIPT_NAME.
"""

import os

from tests.django_links import single_use_caches
from tests.signed_urls.server_settings import *  # noqa: F403

ROOT_URLCONF = "tests.signed_urls.proxy_apps"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
USE_X_FORWARDED_HOST = True
FORCE_SCRIPT_NAME = os.environ.get("BLAKE2SIGN_FORCE_SCRIPT_NAME") or None
CACHES = single_use_caches(
    os.environ.get("BLAKE2SIGN_REDIS_URL", "redis://127.0.0.1:1/0"), {"socket_timeout": 2, "socket_connect_timeout": 2}
)
BLAKE2SIGN_WEB = {"SIGNED_URLS": {"BIND_HOST": True, "SINGLE_USE_CACHE": "links"}}
