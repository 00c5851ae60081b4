"""The test settings for a real server (gunicorn, behind nginx or not): this project's middleware, CHUNKED.

MAX_CHUNKS is 9, the format's most, so that the servers' own limits are what the tests meet.
"""

from tests.django_settings import *  # noqa: F403
from tests.django_settings import MIDDLEWARE

MIDDLEWARE = [
    "blake2sign_web.django.middleware.SessionMiddleware" if m.endswith(".SessionMiddleware") else m for m in MIDDLEWARE
]
ROOT_URLCONF = "tests.django_sessions.urls"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
BLAKE2SIGN_WEB = {"SESSIONS": {"CHUNKED": True, "MAX_CHUNKS": 9}}
