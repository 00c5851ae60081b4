"""The ``BLAKE2SIGN_WEB`` setting and Django's ``SESSION_*`` settings: read once, reset when settings change.

Every key of the session engine lives in the ``"SESSIONS"`` sub-dict; ``"SIGNED_URLS"``
belongs to the signed-URL integration and is left alone here. The options, their defaults and
their rules are the core's (``blake2sign_web.options``, documented in docs/options.md): this module
maps the settings onto them and the problems back, in Django's names.

``setting_problems()`` returns the core's problems with this setting (each with its check id) and
``validate_django_settings()`` those with Django's own settings the engine relies on
(``SECRET_KEY``, its fallbacks and the session cookie's attributes); the system checks
report them, and ``session_config()`` refuses to run with any of them. The engine module
builds the configuration when it is imported, so a bad one stops start-up (when the
session middleware loads the engine), with or without this app in INSTALLED_APPS. What is
left here is Django's alone: the CACHES alias of the revocation store, the CSRF cookie's
names, Django's own middleware in MIDDLEWARE.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from .. import options as schema
from ..cache import clear_signer_cache
from ..cookies import CookieSettings, prefix_fix
from ..options import BROWSER_COOKIE_LIMIT as BROWSER_COOKIE_LIMIT  # its home was here: still importable
from ..options import Problem
from ..revocation import DEFAULT_CLOCK_SKEW
from ..serializer import SerializerSigner
from ..session_cookies import longest_token, morsel_overhead
from ..session_token import session_signers

SETTING: Final = "BLAKE2SIGN_WEB"
#: Top-level keys; each sub-dict belongs to one integration.
SECTIONS: Final = ("SESSIONS", "SIGNED_URLS")
#: The signing purpose of session cookies: keys differ from every other use of SECRET_KEY.
PURPOSE: Final = "django.contrib.sessions"
APP: Final = "blake2sign_web.django"
ENGINE: Final = "blake2sign_web.django.sessions"
MIDDLEWARE: Final = "blake2sign_web.django.middleware.SessionMiddleware"

#: The core's option behind each key of BLAKE2SIGN_WEB['SESSIONS'] (the rest are SESSION_* settings).
SESSION_KEYS: Final[Mapping[str, str]] = {
    option.django: option.key
    for option in schema.OPTIONS
    if option.django is not None and not option.django.startswith("SESSION_")
}
#: The core's option behind each SESSION_COOKIE_* setting it checks (SESSION_COOKIE_AGE belongs to revocation's rules).
COOKIE_SETTINGS: Final[Mapping[str, str]] = {
    option.key: option.django
    for option in schema.OPTIONS
    if option.django is not None and option.django.startswith("SESSION_COOKIE_") and option.key != "max_age"
}
SESSION_DEFAULTS: Final[Mapping[str, Any]] = {name: schema.DEFAULTS[key] for name, key in SESSION_KEYS.items()}
#: The signer options that are booleans passed through to SerializerSigner, by their key here.
SIGNER_FLAGS: Final = {schema.BY_KEY[key].django: key for key in schema.SIGNER_FLAGS}


def _raw() -> Any:
    return getattr(settings, SETTING, {})


def session_options() -> dict[str, Any]:
    """The session options as configured, defaults filled in, not yet validated."""
    raw = _raw()
    section = raw.get("SESSIONS", {}) if isinstance(raw, Mapping) else {}
    options = dict(SESSION_DEFAULTS)
    if isinstance(section, Mapping):
        options.update(section)
    return options


def structure_problems() -> list[Problem]:
    """The setting and its SESSIONS section must be dicts of known keys (E001); a TypeError: nothing to read."""
    raw = _raw()
    found = schema.section_problems(raw, SETTING, SECTIONS)
    if isinstance(raw, Mapping):
        found += schema.section_problems(raw.get("SESSIONS", {}), f"{SETTING}['SESSIONS']", SESSION_DEFAULTS)
    return found


def setting_problems() -> list[Problem]:
    """Every problem with the session part of the setting: its structure (E001), then its values if it has any."""
    found = structure_problems()
    if not any(problem.error is TypeError for problem in found):  # dicts: their values can be read
        found += session_problems(session_options())
    return found


def validate() -> list[str]:
    """Every problem with the session part of the setting, each naming the key and the fix."""
    return [f"{problem.message}." for problem in setting_problems()]


def session_problems(options: Mapping[str, Any]) -> list[Problem]:
    """The core's problems with the session options (BLAKE2SIGN_WEB['SESSIONS'] and SESSION_COOKIE_AGE)."""
    values = {key: options[name] for name, key in SESSION_KEYS.items()}
    values["max_age"] = settings.SESSION_COOKIE_AGE
    alias, caches = options["REVOCATION_CACHE"], getattr(settings, "CACHES", {})
    found = []
    if alias is not None and (not isinstance(alias, str) or alias not in caches):
        found.append(
            Problem(
                "revocation",
                f"{SETTING}['SESSIONS']['REVOCATION_CACHE'] must be None or an alias in CACHES (a RedisCache shared by "
                f"every process); got {alias!r}",
                "blake2sign_web.E013",
            )
        )
    # The cache's own KEY_PREFIX (Django's convention for a shared cache) keeps the keys apart as well; a
    # missing cache is the problem above.
    named = alias is None or bool(found) or bool(caches[alias].get("KEY_PREFIX"))
    return found + schema.problems(values, schema.DJANGO, store_has_prefix=named)


def validate_values(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, problem) for every known session option with a bad value."""
    by_key = {key: name for name, key in SESSION_KEYS.items()}
    return [(by_key[problem.key], f"{problem.message}.") for problem in session_problems(options)]


def secret_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SECRET_KEY and SECRET_KEY_FALLBACKS, which sign every session."""
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django refuses to read an empty SECRET_KEY
        secret = ""
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
    return [(p.check_id, f"{p.message}.") for p in schema.secret_problems(secret, fallbacks, schema.DJANGO)]


def _cookie_problems() -> list[Problem]:
    """The core's problems with the SESSION_COOKIE_* settings (E011, E012, E020, E024)."""
    # SESSION_COOKIE_PARTITIONED is not (yet) one of Django's settings: the core's default when it is not set.
    values = {key: getattr(settings, name, schema.DEFAULTS[key]) for key, name in COOKIE_SETTINGS.items()}
    # Django checks SAMESITE's value itself when it writes the cookie (False: no attribute); only the rules are ours.
    if not (isinstance(values["same_site"], str) and values["same_site"].lower() in schema.SAME_SITE):
        del values["same_site"]
    return schema.problems(values, schema.DJANGO)


def cookie_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SESSION_COOKIE_* values that would break or inject into the Set-Cookie line."""
    return [(p.check_id, f"{p.message}.") for p in _cookie_problems() if p.check_id != PREFIX_CHECK_ID]


#: The check id of a cookie name whose prefix (``__Host-``, ``__Secure-``...) its attributes break.
PREFIX_CHECK_ID: Final = "blake2sign_web.E020"


def _cookie_settings(kind: str) -> CookieSettings:
    """Django spells the ``{kind}_COOKIE_*`` settings as the session cookie's, ``kind`` for ``SESSION``."""
    return CookieSettings._make(fix.replace("SESSION_", f"{kind}_", 1) for fix in schema.cookie_settings(schema.DJANGO))


def prefix_problems(kind: str = "SESSION") -> list[tuple[str, str]]:
    """(check id, problem) when ``{kind}_COOKIE_NAME`` has a prefix its ``{kind}_COOKIE_*`` attributes break.

    ``kind`` is ``"SESSION"`` or ``"CSRF"``. Browsers drop such a cookie without a word: a login that
    does not stick, or every form refused by CSRF. The rules: ``blake2sign_web.cookies``.
    """
    if kind == "SESSION":  # through the schema: not reported while one of its settings is itself wrong
        return [(p.check_id, p.message) for p in _cookie_problems() if p.check_id == PREFIX_CHECK_ID]
    values = {
        key: getattr(settings, COOKIE_SETTINGS[key].replace("SESSION_", f"{kind}_", 1)) for key in schema.PREFIX_KEYS
    }
    if not isinstance(values["cookie_name"], str):
        return []  # Django's own problem
    return [(p.check_id, p.message) for p in schema.prefix_problems(values, _cookie_settings(kind))]


def prefix_hint(kind: str = "SESSION") -> str:
    """The settings that satisfy the prefix of ``{kind}_COOKIE_NAME``, for a check's hint."""
    return prefix_fix(str(getattr(settings, f"{kind}_COOKIE_NAME")), _cookie_settings(kind))


#: Django's session middleware, which writes one cookie per session: the session key.
DJANGO_MIDDLEWARE: Final = "django.contrib.sessions.middleware.SessionMiddleware"
#: The check id of CHUNKED with Django's session middleware.
CHUNKED_MIDDLEWARE_CHECK_ID: Final = "blake2sign_web.E022"


def middleware_problems() -> list[tuple[str, str]]:
    """(check id, problem) for session options that need this project's middleware, with Django's listed."""
    if session_options()["CHUNKED"] is not True or DJANGO_MIDDLEWARE not in (
        getattr(settings, "MIDDLEWARE", None) or ()
    ):
        return []
    return [
        (
            CHUNKED_MIDDLEWARE_CHECK_ID,
            f"{SETTING}['SESSIONS']['CHUNKED'] needs this project's session middleware, and MIDDLEWARE lists "
            f"Django's ({DJANGO_MIDDLEWARE!r}), which writes one cookie per session: replace it with {MIDDLEWARE!r}.",
        )
    ]


def validate_django_settings() -> list[tuple[str, str]]:
    """(check id, problem) for every Django setting this engine cannot run with."""
    return secret_problems() + cookie_problems() + prefix_problems() + middleware_problems()


@dataclass(frozen=True)
class SessionConfig:
    """What a request needs from settings, resolved once per process (and per settings change)."""

    #: Verifies cookies: refuses any longer than the cookie limit before hashing them.
    signer: SerializerSigner
    #: Signs sessions with the same keys, without a length limit of its own, so that an
    #: oversized session's exact size can be reported against the cookie limit.
    writer: SerializerSigner
    cookie_name: str
    #: SESSION_COOKIE_AGE, read once (a settings lookup costs a request more than the rest of reading its cookie).
    cookie_age: int
    #: Bytes a Set-Cookie line for this session may take (name, value and attributes).
    cookie_size_limit: int
    #: Bytes of the longest attributes this configuration writes, Max-Age at its widest.
    cookie_overhead: int
    raise_on_oversize: bool
    accept_django_signed_cookies: bool
    #: The CACHES alias that keeps revocation records; None: revocation is off (stateless).
    revocation_cache: str | None = None
    #: Accept sessions unchecked (and log) while that cache is down, instead of reading them as empty.
    revocation_fails_open: bool = False
    #: Seconds the servers' clocks may differ: a cut-off also refuses sessions issued this long after it.
    revocation_clock_skew: float = DEFAULT_CLOCK_SKEW
    #: This site's name in the keys of its revocation records.
    revocation_key_prefix: str = ""
    #: CHUNKED: most cookies of one session (MAX_CHUNKS); 0: one cookie, the limit checked against it.
    max_chunks: int = 0
    #: IDLE_TIMEOUT and ABSOLUTE_TIMEOUT, in seconds; None: off.
    idle_timeout: int | None = None
    absolute_timeout: int | None = None
    #: SESSION_COOKIE_PARTITIONED (CHIPS; the name of Django's pull request #19603): the cookie's Partitioned attribute.
    partitioned: bool = False


_config: SessionConfig | None = None


def session_config() -> SessionConfig:
    """The current configuration; ImproperlyConfigured names the setting and the fix."""
    global _config
    config = _config
    if config is None:
        config = _config = _build()
    return config


def reset(**kwargs: Any) -> None:
    """Forget the resolved configuration."""
    global _config
    _config = None


def _forget_cached_configuration(**kwargs: Any) -> None:
    """Settings changed (``override_settings`` in tests): rebuild signers and configuration on next use."""
    clear_signer_cache()
    reset()


# Connected here, not in the app's ready(): the engine works without the app in INSTALLED_APPS.
setting_changed.connect(_forget_cached_configuration, dispatch_uid="blake2sign_web.django.settings")


def _build() -> SessionConfig:
    problems = validate() + [problem for _, problem in validate_django_settings()]
    if problems:
        raise ImproperlyConfigured(" ".join(problems))
    options = session_options()
    values = {key: options[name] for name, key in SESSION_KEYS.items()}
    max_chunks = options["MAX_CHUNKS"] if options["CHUNKED"] else 0
    # SESSION_COOKIE_AGE bounds a token without an expiry of its own when it is read (default_age), and the
    # timeouts are read by the core's reader: no limit of the signer's own.
    signer, writer, _ = session_signers(
        settings.SECRET_KEY,
        max_age=None,
        idle_timeout=None,
        reader_limit=longest_token(options["COOKIE_SIZE_LIMIT"], max_chunks),
        purpose=PURPOSE,
        fallbacks=tuple(settings.SECRET_KEY_FALLBACKS),
        **schema.signer_options(values),
    )
    partitioned = bool(getattr(settings, "SESSION_COOKIE_PARTITIONED", False))
    return SessionConfig(
        signer=signer,
        writer=writer,
        cookie_name=settings.SESSION_COOKIE_NAME,
        cookie_age=settings.SESSION_COOKIE_AGE,
        cookie_size_limit=options["COOKIE_SIZE_LIMIT"],
        cookie_overhead=morsel_overhead(
            path=settings.SESSION_COOKIE_PATH,
            domain=settings.SESSION_COOKIE_DOMAIN,
            same_site=settings.SESSION_COOKIE_SAMESITE,
            secure=settings.SESSION_COOKIE_SECURE,
            http_only=settings.SESSION_COOKIE_HTTPONLY,
            partitioned=partitioned,
        ),
        raise_on_oversize=options["OVERSIZE"] == "raise",
        accept_django_signed_cookies=options["ACCEPT_DJANGO_SIGNED_COOKIES"],
        revocation_cache=options["REVOCATION_CACHE"],
        revocation_fails_open=options["REVOCATION_UNAVAILABLE"] == "open",
        revocation_clock_skew=float(options["REVOCATION_CLOCK_SKEW"]),
        revocation_key_prefix=options["REVOCATION_KEY_PREFIX"],
        max_chunks=max_chunks,
        idle_timeout=options["IDLE_TIMEOUT"],
        absolute_timeout=options["ABSOLUTE_TIMEOUT"],
        partitioned=partitioned,
    )
