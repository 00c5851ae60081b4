"""The example Django site's settings: everything that differs between machines comes from the environment.

EXAMPLE_SECRET_KEY  signing key (a fixed demo key by default: never use it in production)
EXAMPLE_DEBUG       "0" to turn DEBUG off
EXAMPLE_DATA_DIR    where the SQLite database and the downloadable files live (default: under the temp dir)
EXAMPLE_REDIS_URL   Redis for single-use links (default redis://127.0.0.1:6379/1; used only if reachable)
"""

from __future__ import annotations

import os
from pathlib import Path

from example_project.files import data_dir
from example_project.redis_url import REDIS_URL, reachable

HERE = Path(__file__).resolve().parent
DATA_DIR = data_dir()
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = os.environ.get("EXAMPLE_SECRET_KEY", "example-only-secret-key-do-not-use-in-production-0123456789")
DEBUG = os.environ.get("EXAMPLE_DEBUG", "1") != "0"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",  # the db engine's table, one of the engines to switch to
    "django.contrib.messages",
    "blake2sign_web.django",
    "example_project.django_site.accounts",
    "example_project.django_site.shop",
    "example_project.django_site.downloads",
]
MIDDLEWARE = [
    # Picks the session engine and middleware per browser (the "engine" form on every page).
    "example_project.django_site.engines.SwitchableSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "example_project.django_site.urls"
WSGI_APPLICATION = "example_project.django_site.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "example_project.django_site.engines.session_facts",
            ]
        },
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "db.sqlite3"}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "shop"
LOGOUT_REDIRECT_URL = "shop"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": DATA_DIR / "files"}},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# The default engine; each browser can switch (see engines.py). Django's engines need no setting here.
SESSION_ENGINE = "blake2sign_web.django.sessions"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
BLAKE2SIGN_WEB: dict[str, dict[str, object]] = {
    # Every response says what the session cost: see the browser's devtools, Network, Timing.
    "SESSIONS": {"SERVER_TIMING": True},
    "SIGNED_URLS": {},
}


#: Single-use links need a cache every process shares: offered only when Redis answers at start-up.
SINGLE_USE_LINKS = reachable(REDIS_URL)
if SINGLE_USE_LINKS:
    CACHES["links"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    }
    BLAKE2SIGN_WEB["SIGNED_URLS"]["SINGLE_USE_CACHE"] = "links"
