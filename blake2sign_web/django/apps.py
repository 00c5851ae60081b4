"""The Django app: registers the system checks.

The engine and middleware work without it (they validate their settings when they
load and reset cached configuration on ``setting_changed`` themselves); install it to
have ``manage.py check`` report problems before anything runs.
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
