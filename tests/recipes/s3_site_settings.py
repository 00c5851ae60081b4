"""Django settings for gunicorn serving the S3 recipe's views from moto's S3 at $BLAKE2SIGN_S3_ENDPOINT.

``max_memory_size`` is django-storages' default, 0 (never spill to disk): what a whole-object download costs
then shows in the worker's memory.
"""

import copy
import os

from tests.recipes.site_settings import *  # noqa: F403
from tests.recipes.site_settings import STORAGES as PAGE_STORAGES

STORAGES = copy.deepcopy(PAGE_STORAGES)
STORAGES["private"]["OPTIONS"].update(
    endpoint_url=os.environ.get("BLAKE2SIGN_S3_ENDPOINT", "http://127.0.0.1:1"),
    region_name="us-east-1",
    access_key="recipe-test",
    secret_key="recipe-test-secret",
    max_memory_size=0,
)
STORAGES["whole-download-s3"] = {**STORAGES["private"], "BACKEND": "tests.recipes.s3_urls.WholeDownloadS3Storage"}
ROOT_URLCONF = "tests.recipes.s3_urls"
# One worker: a local-memory cache is shared by every request it serves.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "default"}}
