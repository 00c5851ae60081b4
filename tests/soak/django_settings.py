"""Django settings for the shop under gunicorn: our engine and middleware, downloads from $BLAKE2SIGN_SERVED_ROOT.

No CommonMiddleware (its APPEND_SLASH redirects are Django's, not ours) and no database: the login is the
session ``django.contrib.auth.login()`` would write. Every logger writes to stderr, which the tests read.
"""

from tests.signed_urls.server_settings import *  # noqa: F403

ROOT_URLCONF = "tests.soak.django_urls"
INSTALLED_APPS = ["blake2sign_web.django"]
MIDDLEWARE = ["blake2sign_web.django.middleware.SessionMiddleware"]
SESSION_COOKIE_SECURE = False  # plain HTTP on 127.0.0.1
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(levelname)s %(name)s %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": "INFO"},
    "loggers": {"django": {"handlers": ["stderr"], "level": "INFO", "propagate": False}},
}
