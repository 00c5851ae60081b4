"""Settings for Django's own ``auth_tests``, run by their ``runtests.py`` (see runner.run_django_auth_suite).

Django's own test settings (their ``tests/test_sqlite.py``, what ``runtests.py`` uses when
given none: in-memory SQLite, ``USE_TZ = False``, the MD5 hasher), imported from the same
sdist, with one session engine, chosen by ``BLAKE2SIGN_INCUMBENT_AUTH_ENGINE``:

- ``revocation`` (what CI runs): this project's engine with ``REVOCATION_CACHE`` on a real
  redis-server (``BLAKE2SIGN_INCUMBENT_REDIS``) and its own key prefix;
- ``ours``: this project's engine, revocation off;
- ``signed_cookies``: Django's ``signed_cookies``, the baseline of a session kept in the browser;
- ``db``: Django's default, the database engine.

This project's engine signs with ``BLAKE2SIGN_TEST_HASHER`` (tests/hasher.py).

``runtests.py`` sets INSTALLED_APPS, MIDDLEWARE, TEMPLATES and ROOT_URLCONF itself, as for
every Django test run; so ``blake2sign_web.django`` is not installed, which the engine
documents it does not need. The test runner records every test's outcome for the outer check.
"""

import os

from test_sqlite import *  # noqa: F403 - Django's own test settings, from the same sdist as the tests

from tests.hasher import HASHER

ENGINE = os.environ.get("BLAKE2SIGN_INCUMBENT_AUTH_ENGINE", "revocation")

if ENGINE == "signed_cookies":
    SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
elif ENGINE in ("ours", "revocation"):
    SESSION_ENGINE = "blake2sign_web.django.sessions"
    BLAKE2SIGN_WEB = {"SESSIONS": {"HASHER": HASHER}}
elif ENGINE != "db":
    raise ValueError(f"BLAKE2SIGN_INCUMBENT_AUTH_ENGINE={ENGINE!r}: revocation, ours, signed_cookies or db")

if ENGINE == "revocation":
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "revocation": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["BLAKE2SIGN_INCUMBENT_REDIS"],
            "OPTIONS": {"socket_timeout": 10, "socket_connect_timeout": 10},
        },
    }
    BLAKE2SIGN_WEB = {
        "SESSIONS": {
            "HASHER": HASHER,
            "REVOCATION_CACHE": "revocation",
            "REVOCATION_KEY_PREFIX": os.environ.get("BLAKE2SIGN_INCUMBENT_KEY_PREFIX", "auth-tests"),
        }
    }

TEST_RUNNER = "tests.incumbents.django_auth_runner.RecordingRunner"
