"""ASGI application for the real uvicorn test (DJANGO_SETTINGS_MODULE=tests.signed_urls.server_settings)."""

from django.core.asgi import get_asgi_application

application = get_asgi_application()
