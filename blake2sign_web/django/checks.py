"""System checks (``manage.py check``) for the session engine and its settings.

Errors (the engine refuses to run with them too):

- ``blake2sign_web.E001``: ``BLAKE2SIGN_WEB`` is not a dict, or has an unknown key.
- ``blake2sign_web.E002``: unknown ``HASHER``.
- ``blake2sign_web.E003``: bad ``COMPRESSION``.
- ``blake2sign_web.E004``: a bad limit (``COMPRESSION_THRESHOLD``, ``COOKIE_SIZE_LIMIT``,
  ``MAX_DECOMPRESSED_SIZE``).
- ``blake2sign_web.E005``: bad ``OVERSIZE`` policy.
- ``blake2sign_web.E006``: ``ACCEPT_DJANGO_SIGNED_COOKIES`` is not a bool.
- (``blake2sign_web.E007`` is retired: the engine no longer needs the app.)
- ``blake2sign_web.E008``: a bad ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` (signed download links).
- ``blake2sign_web.E009``: ``SECRET_KEY_FALLBACKS`` is not a list or tuple (a string would be
  one key per character).
- ``blake2sign_web.E010``: ``SECRET_KEY`` or a fallback is shorter than 16 bytes (UTF-8).

Only when this project's engine or middleware handles sessions:

- ``blake2sign_web.E011``: ``SESSION_COOKIE_SAMESITE = "None"`` without ``SESSION_COOKIE_SECURE``.
- ``blake2sign_web.E012``: ``SESSION_COOKIE_NAME``, ``_PATH`` or ``_DOMAIN`` would break the Set-Cookie line
  (``SESSION_COOKIE_PATH`` must be a string: ``None`` would leave the cookie on the request's directory).
- ``blake2sign_web.E013``: a bad ``REVOCATION_CACHE`` (not an alias in CACHES, with ``FORMAT`` 1, without a
  ``SESSION_COOKIE_AGE`` or a key prefix), ``REVOCATION_UNAVAILABLE``, ``REVOCATION_CLOCK_SKEW`` or
  ``REVOCATION_KEY_PREFIX``.
- ``blake2sign_web.E014``: ``DICTIONARY`` is not a shipped dictionary id or None.
- ``blake2sign_web.E015``: ``TAG_SIZE`` is not 16 or 32.
- ``blake2sign_web.E016``: ``FORMAT`` is not 1 or 2.
- ``blake2sign_web.E017``: ``SERVER_TIMING`` is not a bool.
- ``blake2sign_web.E018``: ``MIDDLEWARE`` lists this project's session middleware together with
  Django's (or twice): every write would be signed twice.
- ``blake2sign_web.E019``: ``TYPED``, ``ENCRYPT``, ``DECRYPT`` or ``COMPRESS_ENCRYPTED`` is not a bool,
  ``COMPRESS_ENCRYPTED`` without ``ENCRYPT``, ``TYPED`` or ``ENCRYPT`` with ``FORMAT`` 1, or ``ENCRYPT``/``DECRYPT``
  without the ``cryptography`` package (the ``encrypted`` extra).
- ``blake2sign_web.E020``: ``SESSION_COOKIE_NAME`` (or ``CSRF_COOKIE_NAME``) starts with a cookie prefix
  (``__Host-``, ``__Secure-``, ``__Http-``, ``__Host-Http-``) whose rules its attributes break, so browsers
  drop the cookie. Reported whatever the session engine; the engine and this project's middleware refuse
  to start with a session cookie that breaks its prefix.
- ``blake2sign_web.E021``: ``CHUNKED`` is not a bool, ``MAX_CHUNKS`` is not an int from 2 to 9, or is set
  without ``CHUNKED``.
- ``blake2sign_web.E022``: ``CHUNKED`` with Django's session middleware in ``MIDDLEWARE``, which writes one
  cookie per session: chunks need this project's middleware.
- ``blake2sign_web.E023``: ``IDLE_TIMEOUT`` or ``ABSOLUTE_TIMEOUT`` is neither None nor a positive int of seconds.
- ``blake2sign_web.E024``: ``SESSION_COOKIE_PARTITIONED`` is not a bool, or is True without
  ``SESSION_COOKIE_SECURE`` (browsers drop a Partitioned cookie that is not Secure).

The rules and messages of E001 to E006, E009 to E017, E019 to E021, E023 and E024 are the core's
(``blake2sign_web.options``, the prefixes' and their hint ``blake2sign_web.cookies``), shared with Starlette's
``SessionMiddleware`` where Starlette has the option; Django's alone are E013's CACHES alias, E018, E022 and
the warnings. Each check only finds its problems; ``system_check`` reports them.

Warnings add to Django's own checks, never repeat them. Django's ``check --deploy`` reports
``SESSION_COOKIE_SECURE`` and ``SESSION_COOKIE_HTTPONLY`` (security.W010 to W015) only when
``django.contrib.sessions`` is in INSTALLED_APPS or its SessionMiddleware in MIDDLEWARE; this
project's engine and middleware need neither, so:

- ``blake2sign_web.W001``: ``SESSION_COOKIE_HTTPONLY`` is off, this project's engine or middleware
  handles sessions, and Django's own check cannot see it.
- ``blake2sign_web.W002`` (``check --deploy`` only, as Django's security.W012): ``SESSION_COOKIE_SECURE``
  is off, likewise.
- (``blake2sign_web.W004``, a ``django-insecure-`` key, is retired: Django's security.W009 and
  security.W025, in every supported Django, report the key and each fallback.)

Only when ``SESSION_ENGINE`` is this project's:

- ``blake2sign_web.W003``: ``SESSION_SERIALIZER`` is not JSON: the engine always uses JSON.

Whenever a revocation or single-use cache is configured:

- ``blake2sign_web.W005``: the cache is per process (LocMemCache, DummyCache), so other
  workers never see its records; or a RedisCache has no ``socket_timeout`` in its OPTIONS,
  so a hung Redis would hang every request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, NamedTuple

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from . import conf

#: Cache backends whose records no other process sees.
PER_PROCESS_CACHES: Final = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)
REDIS_CACHE: Final = "django.core.cache.backends.redis.RedisCache"
JSON_SERIALIZER: Final = "django.contrib.sessions.serializers.JSONSerializer"
JSON_SERIALIZERS: Final = (JSON_SERIALIZER, "django.core.signing.JSONSerializer")
#: The published docs (mkdocs.yml's site_url): every hint that points at the docs gives a page's address.
DOCS: Final = "https://blake2sign-web.github.io/blake2sign_web/"
HINT: Final = f"See {DOCS}django/#settings"
#: SECRET_KEY, its fallbacks and their rotation.
KEYS_HINT: Final = f"See {DOCS}django/#keys-and-rotation"
#: Django's own session middleware, which ours replaces.
DJANGO_SESSION_MIDDLEWARE: Final = conf.DJANGO_MIDDLEWARE


class Found(NamedTuple):
    """One problem a check reports: its id (``blake2sign_web.W005``), the message and the hint."""

    check_id: str
    message: str
    hint: str


def system_check(
    *, deploy: bool = False
) -> Callable[[Callable[[], Iterable[Found]]], Callable[..., list[CheckMessage]]]:
    """Register a function that finds problems as a system check: an ``Error`` for an E id, a ``Warning`` for a W."""

    def registered(find: Callable[[], Iterable[Found]]) -> Callable[..., list[CheckMessage]]:
        def check(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
            return [
                (Warning if ".W" in found.check_id else Error)(found.message, hint=found.hint, id=found.check_id)
                for found in find()
            ]

        check.__name__, check.__doc__ = find.__name__, find.__doc__
        return register(check, Tags.security, "blake2sign_web", deploy=deploy)

    return registered


def _hinted(found: Iterable[tuple[str, str]], hint: str) -> Iterator[Found]:
    return (Found(check_id, message, hint) for check_id, message in found)


@system_check()
def check_settings() -> Iterator[Found]:
    """Validate BLAKE2SIGN_WEB: the same rules the engine applies when it starts."""
    return (Found(problem.check_id, f"{problem.message}.", HINT) for problem in conf.setting_problems())


@system_check()
def check_one_session_middleware() -> Iterator[Found]:
    """Two session middlewares each load and save the session: every write is signed twice, silently."""
    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    session_middlewares = [entry for entry in middleware if entry in (DJANGO_SESSION_MIDDLEWARE, conf.MIDDLEWARE)]
    if conf.MIDDLEWARE in session_middlewares and len(session_middlewares) > 1:
        yield Found(
            "blake2sign_web.E018",
            f"MIDDLEWARE lists {len(session_middlewares)} session middlewares ({', '.join(session_middlewares)}): "
            "each one loads and saves the session, so every write is signed twice and the outer one's cookie wins.",
            f"Keep only {conf.MIDDLEWARE!r}: it replaces {DJANGO_SESSION_MIDDLEWARE!r} (the admin and "
            "django.contrib.auth accept it in its place).",
        )


@system_check()
def check_middleware_for_options() -> Iterator[Found]:
    """Session options only this project's middleware carries out (CHUNKED), with Django's middleware listed."""
    return _hinted(conf.middleware_problems(), f"See {DOCS}django/#sessions-over-4-kb-chunked")


@system_check()
def check_signed_url_settings() -> Iterator[Found]:
    """Validate BLAKE2SIGN_WEB['SIGNED_URLS'] at start-up rather than on the first signed link."""
    from .signed_urls import options

    try:
        options()
    except ImproperlyConfigured as error:
        yield Found("blake2sign_web.E008", str(error), f"See {DOCS}signed-urls/#settings")


@system_check()
def check_shared_caches() -> Iterator[Found]:
    """The caches that keep revocation and single-use records must be shared and must not hang requests."""
    from .signed_urls import options as signed_url_options

    aliases = {}
    revocation_cache = conf.session_options().get("REVOCATION_CACHE")
    if isinstance(revocation_cache, str):
        aliases[revocation_cache] = "BLAKE2SIGN_WEB['SESSIONS']['REVOCATION_CACHE']"
    try:
        single_use_cache = signed_url_options()["SINGLE_USE_CACHE"]
    except ImproperlyConfigured:  # reported by check_signed_url_settings
        single_use_cache = None
    if single_use_cache is not None:
        aliases[single_use_cache] = "BLAKE2SIGN_WEB['SIGNED_URLS']['SINGLE_USE_CACHE']"
    caches = getattr(settings, "CACHES", {})
    for alias, setting in aliases.items():
        cache = caches.get(alias)
        if not isinstance(cache, dict):
            continue  # reported as an error by the settings checks
        backend = cache.get("BACKEND", "")
        if backend in PER_PROCESS_CACHES:
            yield Found(
                "blake2sign_web.W005",
                f"{setting} is the cache {alias!r} ({backend.rsplit('.', 1)[-1]}), which is per process: other workers "
                "and servers never see its records, so a logout or a used link is not seen there.",
                "Use a cache shared by every process: django.core.cache.backends.redis.RedisCache.",
            )
        elif backend == REDIS_CACHE and "socket_timeout" not in cache.get("OPTIONS", {}):
            yield Found(
                "blake2sign_web.W005",
                f"{setting} is the RedisCache {alias!r} without socket_timeout in its OPTIONS: a Redis that hangs "
                "would hang every request that checks it.",
                'Add "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5} (seconds).',
            )


@system_check()
def check_secrets() -> Iterator[Found]:
    """SECRET_KEY and its fallbacks sign every session and link: each must be a real secret."""
    return _hinted(conf.secret_problems(), KEYS_HINT)


@system_check()
def check_cookie_settings() -> Iterator[Found]:
    """SESSION_COOKIE_* values that browsers drop or that would forge cookie attributes."""
    return _hinted(conf.cookie_problems() if _sessions_are_ours() else [], HINT)


@system_check()
def check_cookie_prefixes() -> Iterator[Found]:
    """A ``__Host-`` or ``__Secure-`` cookie name whose attributes break its rule: browsers drop the cookie.

    Whatever the session engine (Django's drop the cookie just the same), and for the CSRF cookie too
    unless the CSRF token lives in the session (CSRF_USE_SESSIONS).
    """
    for kind in ["SESSION"] if getattr(settings, "CSRF_USE_SESSIONS", False) else ["SESSION", "CSRF"]:
        yield from _hinted(conf.prefix_problems(kind), conf.prefix_hint(kind))


def _django_checks_session_cookie() -> bool:
    """Whether Django's own ``check --deploy`` reports the session cookie's Secure and HttpOnly settings.

    Its security.W010 to W015 look for ``django.contrib.sessions`` in INSTALLED_APPS or its
    SessionMiddleware in MIDDLEWARE; this project's engine and middleware need neither.
    """
    return "django.contrib.sessions" in settings.INSTALLED_APPS or DJANGO_SESSION_MIDDLEWARE in settings.MIDDLEWARE


def _sessions_are_ours() -> bool:
    """Whether this project's engine or middleware writes the session cookie."""
    return settings.SESSION_ENGINE == conf.ENGINE or conf.MIDDLEWARE in settings.MIDDLEWARE


@system_check()
def check_session_settings() -> Iterator[Found]:
    """The session cookie should be HttpOnly (where Django's own check cannot see it); the engine stores JSON."""
    if not settings.SESSION_COOKIE_HTTPONLY and _sessions_are_ours() and not _django_checks_session_cookie():
        yield Found(
            "blake2sign_web.W001",
            "SESSION_COOKIE_HTTPONLY is False: any script on your pages can read the signed session cookie. "
            "(Django's security.W013 to W015 cannot see it: neither django.contrib.sessions nor its "
            "SessionMiddleware is installed.)",
            "Set SESSION_COOKIE_HTTPONLY = True (Django's default).",
        )
    if settings.SESSION_ENGINE == conf.ENGINE and settings.SESSION_SERIALIZER not in JSON_SERIALIZERS:
        yield Found(
            "blake2sign_web.W003",
            f"SESSION_SERIALIZER is {settings.SESSION_SERIALIZER!r}; this engine always stores JSON "
            "(it uses the serializer only to read Django signed_cookies sessions while migrating).",
            f"Remove SESSION_SERIALIZER or set it to {JSON_SERIALIZER!r}.",
        )


@system_check(deploy=True)
def check_deployment_cookie() -> Iterator[Found]:
    """``check --deploy`` only, like Django's own security.W012 (tests and local runs are plain HTTP), and only
    where Django's own check cannot see the setting."""
    if not settings.SESSION_COOKIE_SECURE and _sessions_are_ours() and not _django_checks_session_cookie():
        yield Found(
            "blake2sign_web.W002",
            "SESSION_COOKIE_SECURE is False: the session cookie travels over plain HTTP. (Django's security.W010 "
            "to W012 cannot see it: neither django.contrib.sessions nor its SessionMiddleware is installed.)",
            "Set SESSION_COOKIE_SECURE = True for sites served over HTTPS.",
        )
