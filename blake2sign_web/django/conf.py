"""The ``BLAKE2SIGN_WEB`` setting: read once, validated in one place, reset when settings change.

Every key of the session engine lives in the ``"SESSIONS"`` sub-dict; ``"SIGNED_URLS"``
belongs to the signed-URL integration and is left alone here::

    BLAKE2SIGN_WEB = {
        "SESSIONS": {
            "HASHER": "blake2b",               # or "blake2s", "blake3"
            "COMPRESSION": "zstd",             # or None
            "COMPRESSION_THRESHOLD": 128,      # bytes of JSON from which zstd is tried
            "COOKIE_SIZE_LIMIT": 4096,         # bytes of name, value and attributes
            "OVERSIZE": "raise",               # or "log": keep the client's previous cookie
            "MAX_DECOMPRESSED_SIZE": 65536,    # bound on a session's JSON, in bytes
            "ACCEPT_DJANGO_SIGNED_COOKIES": False,  # migrate from Django's signed_cookies
        },
    }

``validate()`` returns human-readable problems; the system checks report them at
start-up and ``session_config()`` refuses to run with any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from ..cache import get_signer
from ..keys import HASHERS
from ..serializer import SerializerSigner
from ..signer import MAC_LENGTH, is_count

SETTING: Final = "BLAKE2SIGN_WEB"
#: Top-level keys; each sub-dict belongs to one integration.
SECTIONS: Final = ("SESSIONS", "SIGNED_URLS")
#: The signing purpose of session cookies: keys differ from every other use of SECRET_KEY.
PURPOSE: Final = "django.contrib.sessions"
APP: Final = "blake2sign_web.django"
ENGINE: Final = "blake2sign_web.django.sessions"
#: Browsers keep cookies up to 4096 bytes of name, value and attributes (RFC 6265, 6.1).
BROWSER_COOKIE_LIMIT: Final = 4096
OVERSIZE_POLICIES: Final = ("raise", "log")

SESSION_DEFAULTS: Final[Mapping[str, Any]] = {
    "HASHER": "blake2b",
    "COMPRESSION": "zstd",
    # Low because the cookie travels on every request: a logged-in session's JSON
    # (about 200 bytes) then compresses to less than Django's signed_cookies makes.
    "COMPRESSION_THRESHOLD": 128,
    "COOKIE_SIZE_LIMIT": BROWSER_COOKIE_LIMIT,
    "OVERSIZE": "raise",
    "MAX_DECOMPRESSED_SIZE": 64 * 1024,
    "ACCEPT_DJANGO_SIGNED_COOKIES": False,
}
#: The smallest sensible cookie limit: room for a cookie name, attributes and an empty session.
MIN_COOKIE_SIZE_LIMIT: Final = 256


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


def validate() -> list[str]:
    """Every problem with the session part of the setting, each naming the key and the fix."""
    raw = _raw()
    if not isinstance(raw, Mapping):
        return [f"{SETTING} must be a dict, not {type(raw).__name__}."]
    problems = [
        f"{SETTING} has an unknown key {key!r}; the known keys are {', '.join(SECTIONS)}."
        for key in raw
        if key not in SECTIONS
    ]
    section = raw.get("SESSIONS", {})
    if not isinstance(section, Mapping):
        return [*problems, f"{SETTING}['SESSIONS'] must be a dict, not {type(section).__name__}."]
    problems += [
        f"{SETTING}['SESSIONS'] has an unknown key {key!r}; the known keys are {', '.join(SESSION_DEFAULTS)}."
        for key in section
        if key not in SESSION_DEFAULTS
    ]
    return problems + [problem for _, problem in validate_values(session_options())]


def validate_values(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, problem) for every known session option with a bad value."""
    name = f"{SETTING}['SESSIONS']"
    problems: list[tuple[str, str]] = []
    if options["HASHER"] not in HASHERS:
        problems.append(("HASHER", f"{name}['HASHER'] must be one of {', '.join(HASHERS)}; got {options['HASHER']!r}."))
    if options["COMPRESSION"] not in ("zstd", None):
        problems.append(
            ("COMPRESSION", f"{name}['COMPRESSION'] must be 'zstd' or None; got {options['COMPRESSION']!r}.")
        )
    threshold = options["COMPRESSION_THRESHOLD"]
    if not is_count(threshold) or threshold < 0:
        problems.append(
            ("COMPRESSION_THRESHOLD", f"{name}['COMPRESSION_THRESHOLD'] must be an int >= 0 bytes; got {threshold!r}.")
        )
    limit = options["COOKIE_SIZE_LIMIT"]
    if not is_count(limit) or not MIN_COOKIE_SIZE_LIMIT <= limit <= BROWSER_COOKIE_LIMIT:
        problems.append(
            (
                "COOKIE_SIZE_LIMIT",
                f"{name}['COOKIE_SIZE_LIMIT'] must be an int from {MIN_COOKIE_SIZE_LIMIT} to {BROWSER_COOKIE_LIMIT} "
                f"(the browser limit); got {limit!r}.",
            )
        )
    size = options["MAX_DECOMPRESSED_SIZE"]
    if not is_count(size) or size < BROWSER_COOKIE_LIMIT:
        problems.append(
            (
                "MAX_DECOMPRESSED_SIZE",
                f"{name}['MAX_DECOMPRESSED_SIZE'] must be an int of at least {BROWSER_COOKIE_LIMIT} bytes; "
                f"got {size!r}.",
            )
        )
    if options["OVERSIZE"] not in OVERSIZE_POLICIES:
        problems.append(("OVERSIZE", f"{name}['OVERSIZE'] must be 'raise' or 'log'; got {options['OVERSIZE']!r}."))
    if not isinstance(options["ACCEPT_DJANGO_SIGNED_COOKIES"], bool):
        problems.append(
            (
                "ACCEPT_DJANGO_SIGNED_COOKIES",
                f"{name}['ACCEPT_DJANGO_SIGNED_COOKIES'] must be True or False; "
                f"got {options['ACCEPT_DJANGO_SIGNED_COOKIES']!r}.",
            )
        )
    return problems


@dataclass(frozen=True)
class SessionConfig:
    """What a request needs from settings, resolved once per process (and per settings change)."""

    signer: SerializerSigner
    cookie_name: str
    #: Bytes a Set-Cookie line for this session may take (name, value and attributes).
    cookie_size_limit: int
    #: Bytes of the longest attributes this configuration writes, Max-Age at its widest.
    cookie_overhead: int
    raise_on_oversize: bool
    accept_django_signed_cookies: bool


_config: SessionConfig | None = None


def session_config() -> SessionConfig:
    """The current configuration; ImproperlyConfigured names the setting and the fix."""
    global _config
    config = _config
    if config is None:
        config = _config = _build()
    return config


def reset(**kwargs: Any) -> None:
    """Forget the resolved configuration (connected to Django's ``setting_changed``)."""
    global _config
    _config = None


def _build() -> SessionConfig:
    from django.apps import apps

    if not apps.is_installed(APP):
        raise ImproperlyConfigured(
            f"SESSION_ENGINE = {ENGINE!r} needs the app: add {APP!r} to INSTALLED_APPS "
            "(it validates settings and resets cached keys when settings change)."
        )
    problems = validate()
    if problems:
        raise ImproperlyConfigured(" ".join(problems))
    options = session_options()
    signer = get_signer(
        settings.SECRET_KEY,
        purpose=PURPOSE,
        fallbacks=tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ())),
        hasher=options["HASHER"],
        compression=options["COMPRESSION"],
        compression_threshold=options["COMPRESSION_THRESHOLD"],
        max_token_length=max(options["COOKIE_SIZE_LIMIT"], MAC_LENGTH + 2),
        max_decompressed_size=options["MAX_DECOMPRESSED_SIZE"],
    )
    return SessionConfig(
        signer=signer,
        cookie_name=settings.SESSION_COOKIE_NAME,
        cookie_size_limit=options["COOKIE_SIZE_LIMIT"],
        cookie_overhead=cookie_overhead(),
        raise_on_oversize=options["OVERSIZE"] == "raise",
        accept_django_signed_cookies=options["ACCEPT_DJANGO_SIGNED_COOKIES"],
    )


def cookie_overhead() -> int:
    """Bytes of ``=`` and the attributes Django writes after the value, counting the widest Max-Age.

    Matches http.cookies.Morsel.OutputString: ``; expires=<29 chars>; Max-Age=<n>; Path=/...``.
    """
    parts = ["; expires=Thu, 01 Jan 1970 00:00:00 GMT", "; Max-Age=" + "9" * 10]
    if settings.SESSION_COOKIE_PATH:
        parts.append(f"; Path={settings.SESSION_COOKIE_PATH}")
    if settings.SESSION_COOKIE_DOMAIN:
        parts.append(f"; Domain={settings.SESSION_COOKIE_DOMAIN}")
    if settings.SESSION_COOKIE_SAMESITE:
        parts.append(f"; SameSite={settings.SESSION_COOKIE_SAMESITE}")
    if settings.SESSION_COOKIE_SECURE:
        parts.append("; Secure")
    if settings.SESSION_COOKIE_HTTPONLY:
        parts.append("; HttpOnly")
    return 1 + sum(len(part) for part in parts)
