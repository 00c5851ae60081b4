"""The ``BLAKE2SIGN_WEB`` setting and Django's ``SESSION_*`` settings: read once, reset when settings change.

The options and their rules are the core's (docs/options.md): this module maps the settings onto them by the
names in ``options.DJANGO``, and the problems back, which the system checks report and ``session_config()``
refuses to start with.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Final

from django.conf import settings
from django.core import signing
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from ..links import options as link_options
from ..sessions import options as schema
from ..sessions import settings as session_settings
from ..sessions.cookie_attributes import CookieSettings, prefix_fix
from ..sessions.options import Problem
from ..sessions.settings import SessionConfig
from ..signing.cache import clear_signer_cache

SETTING: Final = "BLAKE2SIGN_WEB"
#: Top-level keys; each sub-dict belongs to one integration.
SECTIONS: Final = ("SESSIONS", "SIGNED_URLS")
#: The signing purpose of session cookies: keys differ from every other use of SECRET_KEY.
PURPOSE: Final = "django.contrib.sessions"
APP: Final = "blake2sign_web.django"
ENGINE: Final = "blake2sign_web.django.sessions"
MIDDLEWARE: Final = "blake2sign_web.django.middleware.SessionMiddleware"
#: Django's session middleware, which writes one cookie per session: the session key.
DJANGO_MIDDLEWARE: Final = "django.contrib.sessions.middleware.SessionMiddleware"
#: The core's option behind each key of BLAKE2SIGN_WEB['SESSIONS'], and behind each SESSION_* setting.
SESSION_KEYS: Final = schema.section_keys(schema.DJANGO)
SETTING_KEYS: Final = schema.setting_keys(schema.DJANGO)
SESSION_DEFAULTS: Final[Mapping[str, Any]] = {name: schema.DEFAULTS[key] for name, key in SESSION_KEYS.items()}
#: The signer options that are booleans passed through to SerializerSigner, by their key here.
SIGNER_FLAGS: Final = {schema.BY_KEY[key].django: key for key in schema.SIGNER_FLAGS}
#: The check id of a cookie name whose prefix (``__Host-``, ``__Secure-``...) its attributes break.
PREFIX_CHECK_ID: Final = "blake2sign_web.E020"
#: The salt of Django's signed_cookies engine, for migration.
DJANGO_SIGNED_COOKIES_SALT: Final = "django.contrib.sessions.backends.signed_cookies"
#: The data's key for when the session began (ABSOLUTE_TIMEOUT; without it, when it was signed): written by
#: save() only with that setting on, taken out by load(), never seen by the application.
STARTED: Final = "_b2sw_started"


class SessionTooLarge(ValueError):
    """The session's cookie would exceed the browser limit, so the browser would drop it."""

    __module__ = "blake2sign_web.django.sessions"  # its public home, where it is imported from


def link_settings(default_client: Callable[[Any], str] | None = None) -> dict[str, Any]:
    """The SIGNED_URLS options with defaults filled in (``links.options.from_settings``); ImproperlyConfigured names
    any bad key."""
    raw, caches = getattr(settings, SETTING, {}), getattr(settings, "CACHES", {})
    try:
        return link_options.from_settings(raw, caches, import_string, default_client)
    except (TypeError, ValueError) as error:
        raise ImproperlyConfigured(f"{error}.") from None


def session_options() -> dict[str, Any]:
    """The session options as configured, defaults filled in, not yet validated."""
    raw = getattr(settings, SETTING, {})
    section = raw.get("SESSIONS", {}) if isinstance(raw, Mapping) else {}
    return {**SESSION_DEFAULTS, **(section if isinstance(section, Mapping) else {})}


def setting_problems() -> list[Problem]:
    """Every problem with the session part of the setting: its structure (E001), then its values if it has any."""
    raw = getattr(settings, SETTING, {})
    found = schema.settings_problems(raw, SETTING, SECTIONS, "SESSIONS", SESSION_DEFAULTS)
    return found + session_problems(session_options()) if schema.readable(found) else found


def session_problems(options: Mapping[str, Any]) -> list[Problem]:
    """The core's problems with the session options (BLAKE2SIGN_WEB['SESSIONS'] and SESSION_COOKIE_AGE)."""
    values = {key: options[name] for name, key in SESSION_KEYS.items()} | {"max_age": settings.SESSION_COOKIE_AGE}
    return schema.problems(
        values, schema.DJANGO, stores=session_settings.prefixed_stores(getattr(settings, "CACHES", {}))
    )


def secret_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SECRET_KEY and SECRET_KEY_FALLBACKS, which sign every session."""
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django refuses to read an empty SECRET_KEY
        secret = ""
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
    return [(p.check_id, f"{p.message}.") for p in schema.secret_problems(secret, fallbacks, schema.DJANGO)]


def _settings(kind: str = "SESSION") -> dict[str, Any]:
    """The ``{kind}_COOKIE_*`` settings (and SESSION_COOKIE_AGE) by the core's keys (``kind``: SESSION or CSRF);
    the core's default for one Django lacks (SESSION_COOKIE_PARTITIONED)."""
    return {key: getattr(settings, _named(name, kind), schema.DEFAULTS[key]) for name, key in SETTING_KEYS.items()}


def _named(name: str, kind: str) -> str:
    return name.replace("SESSION_", f"{kind}_", 1)


def _cookie_problems() -> list[Problem]:
    """The core's problems with the SESSION_COOKIE_* settings (E011, E012, E020, E024); SESSION_COOKIE_AGE's are
    ``session_problems``' (E013), reported once."""
    values = {key: value for key, value in _settings().items() if key != "max_age"}
    return schema.problems(values, schema.DJANGO, checked_by_framework=schema.DJANGO_CHECKS)


def cookie_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SESSION_COOKIE_* values that would break or inject into the Set-Cookie line."""
    return [(p.check_id, f"{p.message}.") for p in _cookie_problems() if p.check_id != PREFIX_CHECK_ID]


def _cookie_settings(kind: str) -> CookieSettings:
    """Django spells the ``{kind}_COOKIE_*`` settings as the session cookie's."""
    return CookieSettings._make(_named(fix, kind) for fix in schema.cookie_settings(schema.DJANGO))


def prefix_problems(kind: str = "SESSION") -> list[tuple[str, str]]:
    """(check id, problem) when ``{kind}_COOKIE_NAME`` has a prefix its ``{kind}_COOKIE_*`` attributes break."""
    if kind == "SESSION":  # through the schema: not reported while one of its settings is itself wrong
        return [(p.check_id, p.message) for p in _cookie_problems() if p.check_id == PREFIX_CHECK_ID]
    values = {key: value for key, value in _settings(kind).items() if key in schema.PREFIX_KEYS}
    return [(p.check_id, p.message) for p in schema.prefix_problems(values, _cookie_settings(kind))]


def prefix_hint(kind: str = "SESSION") -> str:
    """The settings that satisfy the prefix of ``{kind}_COOKIE_NAME``, for a check's hint."""
    return prefix_fix(str(getattr(settings, f"{kind}_COOKIE_NAME")), _cookie_settings(kind))


def middleware_problems() -> list[tuple[str, str]]:
    """(check id, problem) for session options that need this project's middleware, with Django's listed."""
    middleware, chunked = getattr(settings, "MIDDLEWARE", None) or (), session_options()["CHUNKED"]
    option = schema.DJANGO.name(schema.BY_KEY["chunked"])
    found = session_settings.chunks_layer_problems(
        chunked, middleware, MIDDLEWARE, DJANGO_MIDDLEWARE, option=option, stack="MIDDLEWARE", framework="Django"
    )
    return [(p.check_id, p.message) for p in found]


def validate_django_settings() -> list[tuple[str, str]]:
    """(check id, problem) for every Django setting this engine cannot run with."""
    return secret_problems() + cookie_problems() + prefix_problems() + middleware_problems()


@cache
def session_config() -> SessionConfig:
    """The current configuration, resolved once (``reset``); ImproperlyConfigured names the setting and the fix."""
    problems = [f"{p.message}." for p in setting_problems()] + [problem for _, problem in validate_django_settings()]
    if problems:
        raise ImproperlyConfigured(" ".join(problems))
    return session_settings.resolve(
        _values(), settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS, purpose=PURPOSE, parts=PARTS
    )


@cache
def cookie_settings() -> session_settings.ResponseSettings:
    """What the middleware writes the session's cookies with (any engine): the SESSION_COOKIE_* settings and
    SESSION_SAVE_EVERY_REQUEST, the core's ``response_settings``; resolved once, as the configuration."""
    return session_settings.response_settings(
        _values(), save_every_request=settings.SESSION_SAVE_EVERY_REQUEST, same_site_name="SESSION_COOKIE_SAMESITE"
    )


def reset(**kwargs: Any) -> None:
    """Forget the resolved configuration and cookie settings."""
    session_config.cache_clear()
    cookie_settings.cache_clear()


def _forget_cached_configuration(**kwargs: Any) -> None:
    """Settings changed (``override_settings`` in tests): rebuild signers and configuration on next use."""
    clear_signer_cache()
    reset()


# Connected here, not in the app's ready(): the engine works without the app in INSTALLED_APPS.
setting_changed.connect(_forget_cached_configuration, dispatch_uid="blake2sign_web.django.settings")


def _values() -> dict[str, Any]:
    """Every session option by the core's key: BLAKE2SIGN_WEB['SESSIONS'] and the SESSION_COOKIE_* settings."""
    options = session_options()
    return {key: options[name] for name, key in SESSION_KEYS.items()} | _settings()


def _load_django_signed_cookie(token: str) -> tuple[dict[str, Any], int] | None:
    """A cookie of Django's signed_cookies engine: its session and when it was signed, or None."""
    try:
        value = signing.loads(
            token,
            salt=DJANGO_SIGNED_COOKIES_SALT,
            serializer=import_string(settings.SESSION_SERIALIZER),
            max_age=session_config().cookie_age,
        )
    except Exception:  # BadSignature, or whatever the serializer raises
        return None
    if not isinstance(value, dict):
        return None
    # Verified: its timestamp (base 62, between the last two colons) is the one Django signed.
    try:
        issued_at = signing.b62_decode(token.rsplit(":", 2)[1])
    except (IndexError, ValueError):  # pragma: no cover - signing.loads has just parsed it
        issued_at = 0  # no usable date: older than any cut-off, so refused by one
    return value, issued_at


def _django_shape(token: str) -> bool:
    """Whether a cookie looks like one of Django's ``signing`` (``data:timestamp:signature``; ours have no ":")."""
    return ":" in token


#: Django's layout (the start a key of the data), its incumbent, names, exception and the engine's logger.
PARTS: Final = session_settings.AdapterParts(
    _load_django_signed_cookie,
    _django_shape,
    STARTED,
    ("IDLE_TIMEOUT", "ABSOLUTE_TIMEOUT"),
    SessionTooLarge,
    logging.getLogger(ENGINE),
)
