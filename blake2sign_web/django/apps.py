"""The Django app: registers the system checks and forgets cached configuration when settings change."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core.signals import setting_changed


def _forget_cached_configuration(**kwargs: Any) -> None:
    """Settings changed (override_settings in tests): rebuild signers and cookie settings on next use."""
    from ..cache import clear_signer_cache
    from . import conf, middleware

    clear_signer_cache()
    conf.reset()
    middleware.reset()


class Blake2SignWebConfig(AppConfig):
    name = "blake2sign_web.django"
    label = "blake2sign_web"
    verbose_name = "blake2sign_web"

    def ready(self) -> None:
        from . import checks  # noqa: F401 - registers the system checks

        setting_changed.connect(_forget_cached_configuration, dispatch_uid="blake2sign_web.django.settings")
