"""The Django app: registers the system checks, so that ``manage.py check`` reports problems before anything runs
(the engine and middleware work without it: they check their settings when they load).
"""

from __future__ import annotations

from django.apps import AppConfig


class Blake2SignWebConfig(AppConfig):
    name = "blake2sign_web.django"
    label = "blake2sign_web"
    verbose_name = "blake2sign_web"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401 - registers the system checks
            revocation,  # noqa: F401 - a password change logs the user out everywhere (when on)
        )
