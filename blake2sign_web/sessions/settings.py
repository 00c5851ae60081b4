"""A session configuration resolved from the options once per process, and the checks of what sessions run through."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from ..signing.serializer import SerializerSigner
from ..stores.revocation import DEFAULT_CLOCK_SKEW, check_earlier_names_until
from .cookies import OversizePolicy, SessionMorsels, longest_token, morsel_overhead
from .expiry import longest_expiry
from .options import SAME_SITE, Problem, signer_options
from .token import SessionTokenReader, session_signers

#: The options behind the attributes an ``http.cookies.Morsel`` writes (``morsel_overhead``'s arguments).
MORSEL_KEYS: Final = ("path", "domain", "same_site", "secure", "http_only", "partitioned")


def chunk_limit(values: Mapping[str, Any]) -> int:
    """The most cookies one session may take; 0: chunks off, one cookie."""
    return int(values.get("max_chunks", 0)) if values.get("chunked") is True else 0


#: The options the session middleware reads with any engine, which it checks when it starts.
MIDDLEWARE_KEYS: Final = frozenset({"server_timing", "chunked", "max_chunks"})


@dataclass(frozen=True)
class ResponseSettings:
    """What a response needs to write the session's cookies (Django's middleware, whatever the engine)."""

    name: str
    #: The session's cookies as Morsels (the core's rules: attributes, chunks, deletion).
    cookies: SessionMorsels
    save_every_request: bool
    #: Time the engine's load and save into a ``Server-Timing`` header.
    server_timing: bool
    #: Chunked: cookies ``name``, ``name.1``... make one session (this project's engine only). 0: one cookie.
    max_chunks: int = 0


def response_settings(values: Mapping[str, Any], *, save_every_request: bool, same_site_name: str) -> ResponseSettings:
    """The ``ResponseSettings`` of ``values`` (not yet checked); ValueError for a SameSite no browser knows."""
    same_site = values["same_site"]
    if same_site and same_site.lower() not in SAME_SITE:
        raise ValueError(f'{same_site_name} must be "lax", "none", or "strict".')
    max_chunks = chunk_limit(values)
    cookies = SessionMorsels(
        values["cookie_name"],
        path=values["path"],
        domain=values["domain"],
        secure=values["secure"],
        httponly=values["http_only"],
        samesite=same_site,
        partitioned=bool(values["partitioned"]),
        max_chunks=max_chunks,
    )
    return ResponseSettings(
        values["cookie_name"], cookies, save_every_request, values["server_timing"] is True, max_chunks
    )


class AdapterParts(NamedTuple):
    """What an adapter adds to its configuration's reader and size policy: its framework's cookies, its words."""

    #: The framework's own session cookies (``SessionTokenReader``'s ``incumbent``), read when migrate is on.
    incumbent: Callable[[str], tuple[dict[str, Any], int] | None] | None = None
    incumbent_shape: Callable[[str], bool] = lambda token: False
    started_key: str | None = None
    timeout_names: tuple[str, str] = ("idle_timeout", "absolute_timeout")
    #: The adapter's exception for a session too large (``OversizePolicy``), and the logger of its log line.
    too_large: type[ValueError] = ValueError
    logger: logging.Logger = logging.getLogger(__name__)


#: No incumbent, the core's names and ValueError.
NO_PARTS: Final = AdapterParts()


@dataclass(frozen=True)
class SessionConfig:
    """What a request needs from the session options, resolved once per process (and per settings change)."""

    #: Verifies cookies: refuses any longer than the cookie limit before hashing them.
    signer: SerializerSigner
    #: Signs with the same keys and no length limit, so that an oversized session's size can be reported.
    writer: SerializerSigner
    #: Reads the cookies (``signer``; the age bounds only a token without an expiry: ``read(default_age=)``).
    reader: SessionTokenReader
    #: What a session too large for its cookie does: the adapter's exception, or an error logged.
    oversize: OversizePolicy
    cookie_name: str
    #: The session's age (Django's SESSION_COOKIE_AGE), read once.
    cookie_age: int
    #: Bytes a Set-Cookie line for this session may take (name, value and attributes).
    cookie_size_limit: int
    #: Bytes of the longest attributes this configuration writes, Max-Age at its widest.
    cookie_overhead: int
    raise_on_oversize: bool
    #: Accept and re-issue the cookies of the framework's own signed-cookie sessions.
    accept_django_signed_cookies: bool
    #: The store that keeps revocation records (Django: a CACHES alias); None: revocation is off (stateless).
    revocation_cache: str | None = None
    #: Accept sessions unchecked (and log) while that store is down, instead of reading them as empty.
    revocation_fails_open: bool = False
    #: Seconds the servers' clocks may differ: a cut-off also refuses sessions issued this long after it.
    revocation_clock_skew: float = DEFAULT_CLOCK_SKEW
    #: This site's name in the keys of its revocation records.
    revocation_key_prefix: str = ""
    #: While upgrading: the end (Unix seconds) of the window in which earlier releases' names are read; None: never.
    revocation_earlier_until: float | None = None
    #: Chunked: most cookies of one session; 0: one cookie, the limit checked against it.
    max_chunks: int = 0
    #: The timeouts, in seconds; None: off.
    idle_timeout: int | None = None
    absolute_timeout: int | None = None
    #: The cookie's Partitioned attribute (CHIPS).
    partitioned: bool = False
    #: The longest ``set_expiry()`` may ask for (``expiry.longest_expiry``: the age, with revocation on); None: any.
    longest_expiry: int | None = None


def resolve(
    values: Mapping[str, Any],
    secret: str,
    fallbacks: Sequence[str | bytes],
    *,
    purpose: str,
    parts: AdapterParts = NO_PARTS,
) -> SessionConfig:
    """The configuration of ``values`` (every option by its key, all valid), with the adapter's ``parts``."""
    max_chunks = chunk_limit(values)
    # The age (read's default_age) and the timeouts are the core reader's: no limit of the signer's own.
    signer, writer, _ = session_signers(
        secret,
        max_age=None,
        idle_timeout=None,
        reader_limit=longest_token(values["cookie_size_limit"], max_chunks),
        purpose=purpose,
        fallbacks=tuple(fallbacks),
        **signer_options(values),
    )
    reader = SessionTokenReader(
        signer,
        None,
        needs_token=True,
        idle_timeout=values["idle_timeout"],
        absolute_timeout=values["absolute_timeout"],
        incumbent=parts.incumbent if values["migrate"] else None,
        incumbent_shape=parts.incumbent_shape,
        started_key=parts.started_key,
        timeout_names=parts.timeout_names,
    )
    limit = values["cookie_size_limit"]
    oversize = OversizePolicy(
        values["cookie_name"],
        values["on_oversize"] == "raise",
        parts.too_large,
        f", over the limit of {limit} bytes",
        "store less in the session (keep large data server-side, keyed by the user).",
        "The client keeps its previous session cookie.",
        parts.logger,
        limit,
    )
    return SessionConfig(
        signer=signer,
        writer=writer,
        reader=reader,
        oversize=oversize,
        cookie_name=values["cookie_name"],
        cookie_age=values["max_age"],
        cookie_size_limit=values["cookie_size_limit"],
        cookie_overhead=morsel_overhead(**{key: values[key] for key in MORSEL_KEYS}),
        raise_on_oversize=values["on_oversize"] == "raise",
        accept_django_signed_cookies=values["migrate"],
        revocation_cache=values["revocation"],
        revocation_fails_open=values["revocation_unavailable"] == "open",
        revocation_clock_skew=float(values["revocation_clock_skew"]),
        revocation_key_prefix=values["revocation_key_prefix"],
        revocation_earlier_until=check_earlier_names_until(values["revocation_earlier_names_until"], ""),
        max_chunks=max_chunks,
        idle_timeout=values["idle_timeout"],
        absolute_timeout=values["absolute_timeout"],
        partitioned=bool(values["partitioned"]),
        longest_expiry=longest_expiry(values["max_age"], values["revocation"] is not None),
    )


def session_layer_problems(layers: Sequence[str], ours: str, theirs: str, *, stack: str, hint: str) -> list[Problem]:
    """Ours and the framework's session middleware (or ours twice) each load and save the session: every write
    would be signed twice, silently."""
    listed = [layer for layer in layers if layer in (ours, theirs)]
    if ours not in listed or len(listed) < 2:
        return []
    message = (
        f"{stack} lists {len(listed)} session middlewares ({', '.join(listed)}): each one loads and saves the "
        "session, so every write is signed twice and the outer one's cookie wins."
    )
    return [Problem(stack, message, "blake2sign_web.E018", hint=f"Keep only {ours!r}: it replaces {theirs!r} {hint}")]


def chunks_layer_problems(
    chunked: object, layers: Sequence[str], ours: str, theirs: str, *, option: str, stack: str, framework: str
) -> list[Problem]:
    """Chunked sessions need ours, which writes them: the framework's own session middleware writes one cookie."""
    if chunked is not True or theirs not in layers:
        return []
    message = (
        f"{option} needs this project's session middleware, and {stack} lists {framework}'s ({theirs!r}), which "
        f"writes one cookie per session: replace it with {ours!r}."
    )
    return [Problem("chunked", message, "blake2sign_web.E022")]


#: Django's cache backends whose records no other process sees, and its Redis one, which needs a socket_timeout.
PER_PROCESS_CACHES: Final = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)
REDIS_CACHE: Final = "django.core.cache.backends.redis.RedisCache"
#: What a store of revocation or single-use records needs instead: to be shared, to time out (W005).
SHARED_STORE_FIX: Final = "Use a cache shared by every process: django.core.cache.backends.redis.RedisCache."
STORE_TIMEOUT_FIX: Final = 'Add "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5} (seconds).'


def store_problems(setting: str, name: str, backend: str, options: Mapping[str, Any]) -> list[Problem]:
    """A store of revocation or single-use records must be seen by every process, else a logout or a used link is
    not seen by the others; and must time out, else a store that hangs hangs every request."""
    kind = backend.rsplit(".", 1)[-1]
    if backend in PER_PROCESS_CACHES:
        message = (
            f"{setting} is the cache {name!r} ({kind}), which is per process: other workers and servers never see "
            "its records, so a logout or a used link is not seen there."
        )
        return [Problem(setting, message, "blake2sign_web.W005", hint=SHARED_STORE_FIX)]
    if backend == REDIS_CACHE and "socket_timeout" not in options:
        message = (
            f"{setting} is the {kind} {name!r} without socket_timeout in its OPTIONS: a Redis that hangs would hang "
            "every request that checks it."
        )
        return [Problem(setting, message, "blake2sign_web.W005", hint=STORE_TIMEOUT_FIX)]
    return []


def shared_store_problems(stores: Mapping[str, str], caches: Mapping[str, Any]) -> list[Problem]:
    """``store_problems`` (W005) of each store of records (``stores``: a CACHES alias and the setting naming it)."""
    found = []
    for alias, setting in stores.items():
        cache = caches.get(alias)
        if isinstance(cache, dict):
            found += store_problems(setting, alias, cache.get("BACKEND", ""), cache.get("OPTIONS", {}))
    return found


def prefixed_stores(caches: Mapping[str, Any]) -> dict[str, bool]:
    """Each cache of ``caches`` (Django's CACHES) and whether it has a ``KEY_PREFIX`` of its own."""
    return {alias: isinstance(cache, Mapping) and bool(cache.get("KEY_PREFIX")) for alias, cache in caches.items()}


#: The serializers that store JSON, which this project's engine always writes (W003 names the first).
JSON_SERIALIZERS: Final = ("django.contrib.sessions.serializers.JSONSerializer", "django.core.signing.JSONSerializer")
#: Why Django's own checks (``check --deploy``'s security.W010 to W015) cannot see the session cookie's settings.
UNSEEN: Final = "neither django.contrib.sessions nor its SessionMiddleware is installed."


def unseen_cookie_problems(http_only: bool, secure: bool, *, ours: bool, django_sees: bool) -> list[Problem]:
    """Where ``ours`` (this project's engine or middleware) writes the session cookie and Django's own checks cannot
    see it: not HttpOnly (W001), not Secure (W002: ``check --deploy`` only, so a check passes ``secure=True``)."""
    if not ours or django_sees:
        return []
    found = []
    if not http_only:
        message = (
            "SESSION_COOKIE_HTTPONLY is False: any script on your pages can read the signed session cookie. "
            f"(Django's security.W013 to W015 cannot see it: {UNSEEN})"
        )
        hint = "Set SESSION_COOKIE_HTTPONLY = True (Django's default)."
        found.append(Problem("SESSION_COOKIE_HTTPONLY", message, "blake2sign_web.W001", hint=hint))
    if not secure:
        message = (
            "SESSION_COOKIE_SECURE is False: the session cookie travels over plain HTTP. (Django's security.W010 "
            f"to W012 cannot see it: {UNSEEN})"
        )
        hint = "Set SESSION_COOKIE_SECURE = True for sites served over HTTPS."
        found.append(Problem("SESSION_COOKIE_SECURE", message, "blake2sign_web.W002", hint=hint))
    return found


def serializer_problems(serializer: str) -> list[Problem]:
    """This project's engine always stores JSON: another SESSION_SERIALIZER only reads migrated cookies (W003)."""
    if serializer in JSON_SERIALIZERS:
        return []
    message = (
        f"SESSION_SERIALIZER is {serializer!r}; this engine always stores JSON "
        "(it uses the serializer only to read Django signed_cookies sessions while migrating)."
    )
    hint = f"Remove SESSION_SERIALIZER or set it to {JSON_SERIALIZERS[0]!r}."
    return [Problem("SESSION_SERIALIZER", message, "blake2sign_web.W003", hint=hint)]
