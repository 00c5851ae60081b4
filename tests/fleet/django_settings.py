"""Settings of the Django fleet: every secret comes from the environment, so each process can be restarted with
another key set while the fleet keeps running.

``FLEET_SECRET_KEY`` signs; ``FLEET_SECRET_KEY_FALLBACKS`` (a JSON list) only verifies; ``FLEET_DATABASE`` is the
SQLite file of the users, the one thing besides the secrets that the processes share (sessions live in cookies).
"""

import json
import os

SECRET_KEY = os.environ.get("FLEET_SECRET_KEY", "fleet-settings-imported-without-a-key")
SECRET_KEY_FALLBACKS = json.loads(os.environ.get("FLEET_SECRET_KEY_FALLBACKS", "[]"))
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "blake2sign_web.django",
]
MIDDLEWARE = [
    "tests.fleet.django_site.served_by",
    "blake2sign_web.django.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
SESSION_ENGINE = "blake2sign_web.django.sessions"
SESSION_COOKIE_SECURE = False  # plain http on 127.0.0.1
ROOT_URLCONF = "tests.fleet.django_site"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ.get("FLEET_DATABASE", ":memory:")}}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
