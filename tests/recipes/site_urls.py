"""The URLs of docs/recipes/django-s3-and-nginx.md, for the test client and for gunicorn."""

from tests.recipes.pages import page_module

urlpatterns = page_module("django-s3-and-nginx.md").urlpatterns
