"""Django settings for the real gunicorn test: the test settings, this package's URLs, a storage from the env."""

import os

from tests.django_settings import *  # noqa: F403

ROOT_URLCONF = "tests.signed_urls.django_urls"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "signed_test": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": os.environ.get("BLAKE2SIGN_SERVED_ROOT", "/nonexistent")},
    },
}
