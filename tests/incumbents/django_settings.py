"""Settings for Django's own session tests (run by test_django_suite.py in a process of its own).

As close to Django's own test settings (its tests/test_sqlite.py: USE_TZ = False, in-memory
SQLite) as the tests allow, with this project's engine as SESSION_ENGINE. Installed apps:
``django.contrib.sessions`` (the tests import its model and use its database engine to
interrupt a session), this project's app, and the sdist's ``sessions_tests`` for its
custom session model.
"""

from tests.hasher import HASHER

SECRET_KEY = "incumbent-tests-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "blake2sign_web.django",
    "sessions_tests",
]
SESSION_ENGINE = "blake2sign_web.django.sessions"
#: The engine's hasher: BLAKE2SIGN_TEST_HASHER (tests/hasher.py).
BLAKE2SIGN_WEB = {"SESSIONS": {"HASHER": HASHER}}
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}
USE_TZ = False  # Django's test settings; the *WithTimeZone* classes run the contract under USE_TZ = True too
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
