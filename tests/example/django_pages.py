"""Pages of the Django example site through Django's test client, as JSON on stdout.

``python -m tests.example.django_pages ENGINE ...``: the shop's front page once per engine choice. Run in a
subprocess by tests/example/test_cost_panel.py, since the suite's own process is configured with
tests.django_settings and the example site needs its own.
"""

from __future__ import annotations

import json
import os
import sys

os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.django_site.settings"

import django

django.setup()

from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from example_project.django_site.engines import CHOICE_COOKIE  # noqa: E402


def main(engines: list[str]) -> None:
    setup_test_environment()  # the test client's host, testserver, is allowed
    pages = {}
    for engine in engines:
        client = Client()
        client.cookies[CHOICE_COOKIE] = engine
        response = client.get("/")
        pages[engine] = {"status": response.status_code, "html": response.content.decode()}
    json.dump(pages, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
