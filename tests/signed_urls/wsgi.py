"""WSGI application for the real gunicorn test (DJANGO_SETTINGS_MODULE=tests.signed_urls.server_settings)."""

from django.core.wsgi import get_wsgi_application

application = get_wsgi_application()
