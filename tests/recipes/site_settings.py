"""Django settings for gunicorn behind nginx: the test settings, and the storages and URLs of the S3/nginx page."""

from tests.django_settings import *  # noqa: F403
from tests.recipes.pages import page_module

STORAGES = page_module("django-s3-and-nginx.md").STORAGES
ROOT_URLCONF = "tests.recipes.site_urls"
