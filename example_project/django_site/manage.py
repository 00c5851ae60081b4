#!/usr/bin/env python
"""Django's command-line utility for the example site: python example_project/django_site/manage.py migrate."""

import os
import sys
from pathlib import Path


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: example_project, blake2sign_web
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.django_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
