"""System checks (``manage.py check``) for the session engine and its settings.

Errors (the engine refuses to run with them too):

- ``blake2sign_web.E001``: ``BLAKE2SIGN_WEB`` is not a dict, or has an unknown key.
- ``blake2sign_web.E002``: unknown ``HASHER``.
- ``blake2sign_web.E003``: bad ``COMPRESSION``.
- ``blake2sign_web.E004``: a bad limit (``COMPRESSION_THRESHOLD``, ``COOKIE_SIZE_LIMIT``,
  ``MAX_DECOMPRESSED_SIZE``).
- ``blake2sign_web.E005``: bad ``OVERSIZE`` policy.
- ``blake2sign_web.E006``: ``ACCEPT_DJANGO_SIGNED_COOKIES`` is not a bool.
- ``blake2sign_web.E007``: the engine is used without ``blake2sign_web.django`` in INSTALLED_APPS.
- ``blake2sign_web.E008``: a bad ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` (signed download links).

Warnings, only when ``SESSION_ENGINE`` is this project's:

- ``blake2sign_web.W001``: ``SESSION_COOKIE_HTTPONLY`` is off: scripts can read the session.
- ``blake2sign_web.W002``: ``SESSION_COOKIE_SECURE`` is off while ``DEBUG`` is off.
- ``blake2sign_web.W003``: ``SESSION_SERIALIZER`` is not JSON: the engine always uses JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from django.apps import AppConfig, apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from . import conf

#: Which check id reports a bad value for which key of BLAKE2SIGN_WEB['SESSIONS'].
VALUE_CHECK_IDS: Final = {
    "HASHER": "blake2sign_web.E002",
    "COMPRESSION": "blake2sign_web.E003",
    "COMPRESSION_THRESHOLD": "blake2sign_web.E004",
    "COOKIE_SIZE_LIMIT": "blake2sign_web.E004",
    "MAX_DECOMPRESSED_SIZE": "blake2sign_web.E004",
    "OVERSIZE": "blake2sign_web.E005",
    "ACCEPT_DJANGO_SIGNED_COOKIES": "blake2sign_web.E006",
}
JSON_SERIALIZER: Final = "django.contrib.sessions.serializers.JSONSerializer"
JSON_SERIALIZERS: Final = (JSON_SERIALIZER, "django.core.signing.JSONSerializer")
HINT: Final = "See docs/django.md, 'Settings'."


@register(Tags.security, "blake2sign_web")
def check_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Validate BLAKE2SIGN_WEB: the same rules the engine applies when it starts."""
    structure = [p for p in conf.validate() if "unknown key" in p or "must be a dict" in p]
    errors: list[CheckMessage] = [Error(p, hint=HINT, id="blake2sign_web.E001") for p in structure]
    if any("must be a dict" in p for p in structure):
        return errors
    errors += [
        Error(problem, hint=HINT, id=VALUE_CHECK_IDS[key])
        for key, problem in conf.validate_values(conf.session_options())
    ]
    return errors


@register(Tags.security, "blake2sign_web")
def check_signed_url_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Validate BLAKE2SIGN_WEB['SIGNED_URLS'] at start-up rather than on the first signed link."""
    from .signed_urls import options

    try:
        options()
    except ImproperlyConfigured as error:
        return [Error(str(error), hint="See docs/signed-urls.md, 'Settings'.", id="blake2sign_web.E008")]
    return []


@register(Tags.security, "blake2sign_web")
def check_session_settings(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """The engine needs its app; its cookies should be HttpOnly and, in production, Secure."""
    if settings.SESSION_ENGINE != conf.ENGINE:
        return []
    messages: list[CheckMessage] = []
    if not apps.is_installed(conf.APP):
        messages.append(
            Error(
                f"SESSION_ENGINE is {conf.ENGINE!r} but {conf.APP!r} is not in INSTALLED_APPS.",
                hint=f"Add {conf.APP!r} to INSTALLED_APPS.",
                id="blake2sign_web.E007",
            )
        )
    if not settings.SESSION_COOKIE_HTTPONLY:
        messages.append(
            Warning(
                "SESSION_COOKIE_HTTPONLY is False: any script on your pages can read the signed session cookie.",
                hint="Set SESSION_COOKIE_HTTPONLY = True (Django's default).",
                id="blake2sign_web.W001",
            )
        )
    if not settings.SESSION_COOKIE_SECURE and not settings.DEBUG:
        messages.append(
            Warning(
                "SESSION_COOKIE_SECURE is False with DEBUG off: the session cookie travels over plain HTTP.",
                hint="Set SESSION_COOKIE_SECURE = True for sites served over HTTPS.",
                id="blake2sign_web.W002",
            )
        )
    if settings.SESSION_SERIALIZER not in JSON_SERIALIZERS:
        messages.append(
            Warning(
                f"SESSION_SERIALIZER is {settings.SESSION_SERIALIZER!r}; this engine always stores JSON "
                "(it uses the serializer only to read Django signed_cookies sessions while migrating).",
                hint=f"Remove SESSION_SERIALIZER or set it to {JSON_SERIALIZER!r}.",
                id="blake2sign_web.W003",
            )
        )
    return messages
