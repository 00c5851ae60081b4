"""WSGI entry point: gunicorn example_project.django_site.wsgi."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.django_site.settings")
application = get_wsgi_application()
