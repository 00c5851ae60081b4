"""System checks (``manage.py check``): the core's problems with the settings, found through ``conf``, as
Django's ``Error`` or ``Warning`` under their ids, with a hint (every id: docs/django.md, *System checks*).
W001 to W003 add to Django's own checks where those cannot see, never repeat them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from ..sessions import settings as session_settings
from ..sessions.options import Problem
from . import conf

#: The published docs (mkdocs.yml's site_url): every hint that points at the docs gives a page's address.
DOCS: Final = "https://blake2sign-web.github.io/blake2sign_web/"
HINT: Final = f"See {DOCS}django/#settings"
#: SECRET_KEY, its fallbacks and their rotation.
KEYS_HINT: Final = f"See {DOCS}django/#keys-and-rotation"


def system_check(
    *, deploy: bool = False
) -> Callable[[Callable[[], Iterable[Problem]]], Callable[..., list[CheckMessage]]]:
    """Register a function that finds problems as a system check: an ``Error`` for an E id, a ``Warning`` for a W."""

    def registered(find: Callable[[], Iterable[Problem]]) -> Callable[..., list[CheckMessage]]:
        def check(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
            return [
                (Warning if ".W" in found.check_id else Error)(found.message, hint=found.hint, id=found.check_id)
                for found in find()
            ]

        check.__name__, check.__doc__ = find.__name__, find.__doc__
        return register(check, Tags.security, "blake2sign_web", deploy=deploy)

    return registered


def _hinted(found: Iterable[tuple[str, str]], hint: str) -> Iterable[Problem]:
    return (Problem("", message, check_id, hint=hint) for check_id, message in found)


@system_check()
def check_settings() -> Iterable[Problem]:
    """Validate BLAKE2SIGN_WEB: the same rules the engine applies when it starts."""
    return (problem._replace(message=f"{problem.message}.", hint=HINT) for problem in conf.setting_problems())


@system_check()
def check_session_middleware() -> Iterable[Problem]:
    """One session middleware (two would sign every write twice), and ours where only ours carries an option out."""
    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    hint = "(the admin and django.contrib.auth accept it in its place)."
    found = session_settings.session_layer_problems(
        middleware, conf.MIDDLEWARE, conf.DJANGO_MIDDLEWARE, stack="MIDDLEWARE", hint=hint
    )
    return [*found, *_hinted(conf.middleware_problems(), f"See {DOCS}django/#sessions-over-4-kb-chunked")]


@system_check()
def check_signed_url_settings() -> Iterable[Problem]:
    """Validate BLAKE2SIGN_WEB['SIGNED_URLS'] at start-up rather than on the first signed link."""
    try:
        conf.link_settings()
    except ImproperlyConfigured as error:
        yield Problem("SIGNED_URLS", str(error), "blake2sign_web.E008", hint=f"See {DOCS}signed-urls/#settings")


@system_check()
def check_shared_caches() -> Iterable[Problem]:
    """The caches that keep revocation and single-use records must be shared and must not hang requests."""
    aliases = {}
    revocation_cache = conf.session_options().get("REVOCATION_CACHE")
    if isinstance(revocation_cache, str):
        aliases[revocation_cache] = "BLAKE2SIGN_WEB['SESSIONS']['REVOCATION_CACHE']"
    try:
        single_use_cache = conf.link_settings()["SINGLE_USE_CACHE"]
    except ImproperlyConfigured:  # reported by check_signed_url_settings
        single_use_cache = None
    if single_use_cache is not None:
        aliases[single_use_cache] = "BLAKE2SIGN_WEB['SIGNED_URLS']['SINGLE_USE_CACHE']"
    return session_settings.shared_store_problems(aliases, getattr(settings, "CACHES", {}))


@system_check()
def check_secrets() -> Iterable[Problem]:
    """SECRET_KEY and its fallbacks sign every session and link: each must be a real secret."""
    return _hinted(conf.secret_problems(), KEYS_HINT)


@system_check()
def check_cookie_settings() -> Iterable[Problem]:
    """SESSION_COOKIE_* values that browsers drop or that would forge cookie attributes."""
    return _hinted(conf.cookie_problems() if _sessions_are_ours() else [], HINT)


@system_check()
def check_cookie_prefixes() -> Iterable[Problem]:
    """A prefixed cookie name its attributes break, whatever the engine; the CSRF cookie's too, if it has one."""
    for kind in ["SESSION"] if getattr(settings, "CSRF_USE_SESSIONS", False) else ["SESSION", "CSRF"]:
        yield from _hinted(conf.prefix_problems(kind), conf.prefix_hint(kind))


def _sessions_are_ours() -> bool:
    """Whether this project's engine or middleware writes the session cookie."""
    return settings.SESSION_ENGINE == conf.ENGINE or conf.MIDDLEWARE in settings.MIDDLEWARE


def _unseen_cookie_problems(*, http_only: bool = True, secure: bool = True) -> list[Problem]:
    """Our cookie's settings where Django's own ``check --deploy`` (its security.W010 to W015, which look for
    django.contrib.sessions or its middleware) cannot see them (``sessions.settings.unseen_cookie_problems``)."""
    django_sees = "django.contrib.sessions" in settings.INSTALLED_APPS or conf.DJANGO_MIDDLEWARE in settings.MIDDLEWARE
    return session_settings.unseen_cookie_problems(
        http_only, secure, ours=_sessions_are_ours(), django_sees=django_sees
    )


@system_check()
def check_session_settings() -> Iterable[Problem]:
    """The session cookie should be HttpOnly (where Django's own check cannot see it); the engine stores JSON."""
    found = _unseen_cookie_problems(http_only=settings.SESSION_COOKIE_HTTPONLY)
    if settings.SESSION_ENGINE == conf.ENGINE:
        found += session_settings.serializer_problems(settings.SESSION_SERIALIZER)
    return found


@system_check(deploy=True)
def check_deployment_cookie() -> Iterable[Problem]:
    """``check --deploy`` only, as Django's security.W012 (local runs are plain HTTP), where that one cannot see."""
    return _unseen_cookie_problems(secure=settings.SESSION_COOKIE_SECURE)
