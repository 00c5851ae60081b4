"""The ``BLAKE2SIGN_WEB`` setting: read once, validated in one place, reset when settings change.

Every key of the session engine lives in the ``"SESSIONS"`` sub-dict; ``"SIGNED_URLS"``
belongs to the signed-URL integration and is left alone here::

    BLAKE2SIGN_WEB = {
        "SESSIONS": {
            "HASHER": "blake2b",               # or "blake2s", "blake3"
            "COMPRESSION": "zstd",             # or None: no compression at all
            "DICTIONARY": 1,                   # the shipped session dictionary; None: plain zstd
            "COMPRESSION_THRESHOLD": 128,      # without a dictionary: bytes of JSON from which zstd is tried
            "TAG_SIZE": 16,                    # bytes of MAC tag, or 32
            "FORMAT": 2,                       # 1 only while processes that read only format 1 still run
            "COOKIE_SIZE_LIMIT": 4096,         # bytes of name, value and attributes
            "OVERSIZE": "raise",               # or "log": keep the client's previous cookie
            "MAX_DECOMPRESSED_SIZE": 65536,    # bound on a session's JSON, in bytes
            "ACCEPT_DJANGO_SIGNED_COOKIES": False,  # migrate from Django's signed_cookies
            "REVOCATION_CACHE": None,          # a CACHES alias (RedisCache): logout ends copied cookies
            "REVOCATION_UNAVAILABLE": "closed",  # cache down: "closed" = empty session, "open" = accept, log
            "REVOCATION_CLOCK_SKEW": 5,        # seconds the servers' clocks may differ (log out everywhere)
            "REVOCATION_KEY_PREFIX": "",       # this site's name in its records, if sites share the Redis
            "SERVER_TIMING": False,            # True: this project's middleware adds a Server-Timing header
            "TYPED": False,                    # True: datetime, UUID, Decimal, set, bytes... read back as themselves
            "ENCRYPT": False,                  # True: AES-256-GCM encrypted sessions (the "encrypted" extra)
            "DECRYPT": False,                  # True: read encrypted sessions, still write signed ones (roll-out)
            "COMPRESS_ENCRYPTED": False,       # True: compress before encrypting (the length then tells more)
            "CHUNKED": False,                  # True: a session over one cookie goes in name, name.1, name.2...
            "MAX_CHUNKS": 2,                   # with CHUNKED: most cookies of one session (2 to 9)
            "IDLE_TIMEOUT": None,              # seconds without a request that reads the session: it ends
            "ABSOLUTE_TIMEOUT": None,          # seconds after the session began (login): it ends, however active
        },
    }

``validate()`` returns human-readable problems with this setting and
``validate_django_settings()`` those with Django's own settings the engine relies on
(``SECRET_KEY``, its fallbacks and the session cookie's attributes); the system checks
report them, and ``session_config()`` refuses to run with any of them. The engine module
builds the configuration when it is imported, so a bad one stops start-up (when the
session middleware loads the engine), with or without this app in INSTALLED_APPS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from .. import chunks, dictionaries
from ..cache import clear_signer_cache, get_signer
from ..cookies import CookieSettings, cookie_prefix, prefix_problem
from ..encryption import load_cryptography
from ..keys import HASHERS, TAG_SIZES
from ..revocation import DEFAULT_CLOCK_SKEW, POLICIES, check_clock_skew, check_key_prefix, missing_key_prefix
from ..serializer import SerializerSigner
from ..signer import MAC_LENGTH, is_count

SETTING: Final = "BLAKE2SIGN_WEB"
#: Top-level keys; each sub-dict belongs to one integration.
SECTIONS: Final = ("SESSIONS", "SIGNED_URLS")
#: The signing purpose of session cookies: keys differ from every other use of SECRET_KEY.
PURPOSE: Final = "django.contrib.sessions"
APP: Final = "blake2sign_web.django"
ENGINE: Final = "blake2sign_web.django.sessions"
MIDDLEWARE: Final = "blake2sign_web.django.middleware.SessionMiddleware"
#: Browsers keep cookies up to 4096 bytes of name, value and attributes (RFC 6265, 6.1).
BROWSER_COOKIE_LIMIT: Final = 4096
OVERSIZE_POLICIES: Final = ("raise", "log")

SESSION_DEFAULTS: Final[Mapping[str, Any]] = {
    "HASHER": "blake2b",
    "COMPRESSION": "zstd",
    # Sessions are compressed against the shipped session dictionary whenever that makes
    # the cookie shorter: a login session's 175 bytes of JSON become about 62.
    "DICTIONARY": 1,
    # Without a dictionary: low because the cookie travels on every request.
    "COMPRESSION_THRESHOLD": 128,
    "TAG_SIZE": 16,
    "FORMAT": 2,
    "COOKIE_SIZE_LIMIT": BROWSER_COOKIE_LIMIT,
    "OVERSIZE": "raise",
    "MAX_DECOMPRESSED_SIZE": 64 * 1024,
    "ACCEPT_DJANGO_SIGNED_COOKIES": False,
    # Off: the stateless path, no session id in the token and no cache call per request.
    "REVOCATION_CACHE": None,
    "REVOCATION_UNAVAILABLE": "closed",
    # Seconds by which the clocks of the servers may differ: "log out everywhere" also refuses
    # sessions issued that long after its cut-off (but the session that asked for it).
    "REVOCATION_CLOCK_SKEW": DEFAULT_CLOCK_SKEW,
    # This site's name in the keys of its records (as the cache's KEY_PREFIX, which also applies):
    # sites sharing one Redis need different ones, or they end each other's sessions.
    "REVOCATION_KEY_PREFIX": "",
    # On: this project's middleware times the engine's load and save and sends them as Server-Timing.
    "SERVER_TIMING": False,
    # The core's signer options (docs/core.md), passed through: typed values, encrypted tokens.
    "TYPED": False,
    "ENCRYPT": False,
    "DECRYPT": False,
    "COMPRESS_ENCRYPTED": False,
    # Off: one cookie per session, as Django's middleware writes. On (needs this project's middleware):
    # a session over COOKIE_SIZE_LIMIT is split into cookies name, name.1, name.2... (chunks.py).
    "CHUNKED": False,
    "MAX_CHUNKS": chunks.MAX_CHUNKS,
    # None: off. Seconds: a session not read for IDLE_TIMEOUT, or begun (at login) ABSOLUTE_TIMEOUT ago, is
    # refused; an idle timeout re-issues the cookie on a read once a quarter of it has passed since the last.
    "IDLE_TIMEOUT": None,
    "ABSOLUTE_TIMEOUT": None,
}
#: The signer options that are booleans passed through to SerializerSigner, by their key here.
SIGNER_FLAGS: Final = {
    "TYPED": "typed",
    "ENCRYPT": "encrypt",
    "DECRYPT": "decrypt",
    "COMPRESS_ENCRYPTED": "compress_encrypted",
}
#: What to run when ENCRYPT or DECRYPT is on and the cryptography package is missing.
ENCRYPTED_EXTRA: Final = 'pip install "blake2sign-web[encrypted]"'
#: Timeouts are counted from 32-bit token times: below 2**32 seconds (136 years).
MAX_TIMEOUT: Final = 2**32
#: The smallest sensible cookie limit: room for a cookie name, attributes and an empty session.
MIN_COOKIE_SIZE_LIMIT: Final = 256
#: Shorter secrets can be guessed; the core refuses them too.
MIN_SECRET_LENGTH: Final = 16
#: RFC 6265 section 4.1.1: a cookie name is a token, so no control character, space or separator.
COOKIE_NAME_SEPARATORS: Final = frozenset('()<>@,;:\\"/[]?={} \t')


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
    dictionary = options["DICTIONARY"]
    if dictionary is not None and (type(dictionary) is not int or dictionary not in dictionaries.FILES):
        problems.append(
            (
                "DICTIONARY",
                f"{name}['DICTIONARY'] must be a shipped dictionary id ({', '.join(map(str, dictionaries.FILES))}) "
                f"or None; got {dictionary!r}.",
            )
        )
    if options["TAG_SIZE"] not in TAG_SIZES or type(options["TAG_SIZE"]) is not int:
        problems.append(("TAG_SIZE", f"{name}['TAG_SIZE'] must be 16 or 32 (bytes); got {options['TAG_SIZE']!r}."))
    if options["FORMAT"] not in (1, 2) or type(options["FORMAT"]) is not int:
        problems.append(
            (
                "FORMAT",
                f"{name}['FORMAT'] must be 2, or 1 while processes that read only format 1 still run; "
                f"got {options['FORMAT']!r}.",
            )
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
    if not isinstance(options["SERVER_TIMING"], bool):
        problems.append(
            ("SERVER_TIMING", f"{name}['SERVER_TIMING'] must be True or False; got {options['SERVER_TIMING']!r}.")
        )
    problems += revocation_problems(options)
    problems += signer_flag_problems(options)
    for key in ("IDLE_TIMEOUT", "ABSOLUTE_TIMEOUT"):
        seconds = options[key]
        if seconds is not None and (not is_count(seconds) or not 1 <= seconds < MAX_TIMEOUT):
            problems.append(
                (
                    key,
                    f"{name}[{key!r}] must be None (off) or a number of seconds, an int from 1 to {MAX_TIMEOUT - 1}; "
                    f"got {seconds!r}.",
                )
            )
    if not isinstance(options["CHUNKED"], bool):
        problems.append(("CHUNKED", f"{name}['CHUNKED'] must be True or False; got {options['CHUNKED']!r}."))
    if problem := chunks.max_chunks_problem(options["MAX_CHUNKS"], f"{name}['MAX_CHUNKS']"):
        problems.append(("MAX_CHUNKS", f"{problem}."))
    return problems


def signer_flag_problems(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, problem) for TYPED, ENCRYPT, DECRYPT and COMPRESS_ENCRYPTED, and the cryptography package they need."""
    name = f"{SETTING}['SESSIONS']"
    problems = [
        (key, f"{name}[{key!r}] must be True or False; got {options[key]!r}.")
        for key in SIGNER_FLAGS
        if not isinstance(options[key], bool)
    ]
    if problems:
        return problems
    if options["COMPRESS_ENCRYPTED"] and not options["ENCRYPT"]:
        problems.append(
            (
                "COMPRESS_ENCRYPTED",
                f"{name}['COMPRESS_ENCRYPTED'] applies to encrypted sessions: set ENCRYPT = True too, or remove it.",
            )
        )
    for key in ("TYPED", "ENCRYPT"):
        if options[key] and options["FORMAT"] == 1:
            problems.append(
                (
                    key,
                    f"{name}[{key!r}] needs FORMAT 2: processes that read only format 1 read neither typed nor "
                    "encrypted sessions; finish the rolling upgrade (FORMAT 2) first.",
                )
            )
    if options["ENCRYPT"] or options["DECRYPT"]:
        key = "ENCRYPT" if options["ENCRYPT"] else "DECRYPT"
        try:
            load_cryptography()
        except ImportError:
            problems.append(
                (
                    key,
                    f"{name}[{key!r}] needs the cryptography package, which is not installed: {ENCRYPTED_EXTRA}.",
                )
            )
    return problems


def revocation_problems(options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, problem) for REVOCATION_CACHE, REVOCATION_UNAVAILABLE, REVOCATION_CLOCK_SKEW, REVOCATION_KEY_PREFIX."""
    name = f"{SETTING}['SESSIONS']"
    problems: list[tuple[str, str]] = []
    alias = options["REVOCATION_CACHE"]
    if alias is not None and (not isinstance(alias, str) or alias not in getattr(settings, "CACHES", {})):
        problems.append(
            (
                "REVOCATION_CACHE",
                f"{name}['REVOCATION_CACHE'] must be None or an alias in CACHES (a RedisCache shared by every "
                f"process); got {alias!r}.",
            )
        )
    if options["REVOCATION_UNAVAILABLE"] not in POLICIES:
        problems.append(
            (
                "REVOCATION_UNAVAILABLE",
                f"{name}['REVOCATION_UNAVAILABLE'] must be 'closed' (an empty session while the cache is down) or "
                f"'open' (accept, log an error); got {options['REVOCATION_UNAVAILABLE']!r}.",
            )
        )
    try:
        check_clock_skew(options["REVOCATION_CLOCK_SKEW"], f"{name}['REVOCATION_CLOCK_SKEW']")
    except ValueError as error:
        problems.append(("REVOCATION_CLOCK_SKEW", f"{error}."))
    try:
        check_key_prefix(options["REVOCATION_KEY_PREFIX"], f"{name}['REVOCATION_KEY_PREFIX']")
    except ValueError as error:
        problems.append(("REVOCATION_KEY_PREFIX", f"{error}."))
    else:
        caches = getattr(settings, "CACHES", {})
        # The cache's own KEY_PREFIX (Django's convention for a shared cache) keeps the keys apart as well.
        if isinstance(alias, str) and alias in caches and not caches[alias].get("KEY_PREFIX"):
            setting = f"{name}['REVOCATION_KEY_PREFIX']"
            if problem := missing_key_prefix(options["REVOCATION_KEY_PREFIX"], setting):
                problems.append(("REVOCATION_KEY_PREFIX", f"{problem}, or give CACHES[{alias!r}] a KEY_PREFIX."))
    if alias is not None and options["FORMAT"] == 1:
        problems.append(
            (
                "REVOCATION_CACHE",
                f"{name}['REVOCATION_CACHE'] needs FORMAT 2 (only format 2 tokens carry a session id): finish the "
                "rolling upgrade (FORMAT 2) before turning revocation on.",
            )
        )
    return problems


def secret_key_fallbacks() -> tuple[str | bytes, ...]:
    """SECRET_KEY_FALLBACKS as a tuple; ImproperlyConfigured for a string, which would be one key per character."""
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
    if not isinstance(fallbacks, (list, tuple)):
        raise ImproperlyConfigured(_fallbacks_problem(fallbacks))
    return tuple(fallbacks)


def _fallbacks_problem(fallbacks: object) -> str:
    return (
        f"SECRET_KEY_FALLBACKS must be a list of secrets, not a {type(fallbacks).__name__} "
        "(a string would make every one of its characters a key): write SECRET_KEY_FALLBACKS = [old_key]."
    )


def secret_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SECRET_KEY and SECRET_KEY_FALLBACKS, which sign every session."""
    try:
        secret = settings.SECRET_KEY
    except ImproperlyConfigured:  # Django refuses to read an empty SECRET_KEY
        secret = ""
    problems: list[tuple[str, str]] = []
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
    if not isinstance(fallbacks, (list, tuple)):
        problems.append(("blake2sign_web.E009", _fallbacks_problem(fallbacks)))
        fallbacks = ()
    for name, value in [("SECRET_KEY", secret)] + [(f"SECRET_KEY_FALLBACKS[{i}]", f) for i, f in enumerate(fallbacks)]:
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogatepass")  # counted in bytes, as the core counts them (keys.py)
        if not isinstance(value, bytes) or len(value) < MIN_SECRET_LENGTH:
            length = f"{len(value)} bytes long" if isinstance(value, bytes) else f"a {type(value).__name__}"
            problems.append(
                (
                    "blake2sign_web.E010",
                    f"{name} is {length}: a secret must be a string of at least {MIN_SECRET_LENGTH} bytes; "
                    "generate one with django.core.management.utils.get_random_secret_key().",
                )
            )
    return problems


def cookie_problems() -> list[tuple[str, str]]:
    """(check id, problem) for SESSION_COOKIE_* values that would break or inject into the Set-Cookie line."""
    problems: list[tuple[str, str]] = []
    samesite = settings.SESSION_COOKIE_SAMESITE
    if isinstance(samesite, str) and samesite.lower() == "none" and not settings.SESSION_COOKIE_SECURE:
        problems.append(
            (
                "blake2sign_web.E011",
                "SESSION_COOKIE_SAMESITE is 'None' but SESSION_COOKIE_SECURE is False: browsers drop SameSite=None "
                "cookies that are not Secure, so no session would last; set SESSION_COOKIE_SECURE = True "
                "(and serve the site over HTTPS) or choose SESSION_COOKIE_SAMESITE = 'Lax'.",
            )
        )
    name = settings.SESSION_COOKIE_NAME
    if not isinstance(name, str) or not name or any(_bad_name_character(c) for c in name):
        problems.append(
            (
                "blake2sign_web.E012",
                f"SESSION_COOKIE_NAME must be a cookie name of printable ASCII letters, digits and !#$%&'*+-.^_`|~; "
                f"got {name!r}.",
            )
        )
    for setting in ("SESSION_COOKIE_PATH", "SESSION_COOKIE_DOMAIN"):
        value = getattr(settings, setting)
        if value is not None and (not isinstance(value, str) or any(_bad_attribute_character(c) for c in value)):
            problems.append(
                (
                    "blake2sign_web.E012",
                    f"{setting} must be printable ASCII without ';' (anything else would end or forge a cookie "
                    f"attribute); got {value!r}.",
                )
            )
    return problems


def _bad_name_character(character: str) -> bool:
    return not " " < character < "\x7f" or character in COOKIE_NAME_SEPARATORS


def _bad_attribute_character(character: str) -> bool:
    """RFC 6265 section 4.1.1: an attribute value is any US-ASCII character but controls and ';'."""
    return not " " <= character < "\x7f" or character == ";"


#: The check id of a cookie name whose prefix (``__Host-``, ``__Secure-``...) its attributes break.
PREFIX_CHECK_ID: Final = "blake2sign_web.E020"


def prefix_problems(kind: str = "SESSION") -> list[tuple[str, str]]:
    """(check id, problem) when ``{kind}_COOKIE_NAME`` has a prefix its ``{kind}_COOKIE_*`` attributes break.

    ``kind`` is ``"SESSION"`` or ``"CSRF"``. Browsers drop such a cookie without a word: a login that
    does not stick, or every form refused by CSRF. The rules: ``blake2sign_web.cookies``.
    """
    name = getattr(settings, f"{kind}_COOKIE_NAME")
    if not isinstance(name, str):
        return []  # E012 (the session cookie); Django's own problem for the CSRF cookie
    problem = prefix_problem(
        name,
        secure=bool(getattr(settings, f"{kind}_COOKIE_SECURE")),
        path=getattr(settings, f"{kind}_COOKIE_PATH"),
        domain=getattr(settings, f"{kind}_COOKIE_DOMAIN"),
        http_only=bool(getattr(settings, f"{kind}_COOKIE_HTTPONLY")),
        settings=CookieSettings(
            name=f"{kind}_COOKIE_NAME",
            secure=f"{kind}_COOKIE_SECURE = True",
            path=f'{kind}_COOKIE_PATH = "/"',
            domain=f"{kind}_COOKIE_DOMAIN = None",
            http_only=f"{kind}_COOKIE_HTTPONLY = True",
        ),
    )
    return [] if problem is None else [(PREFIX_CHECK_ID, f"{kind}_COOKIE_NAME: {problem}")]


def prefix_fix(kind: str = "SESSION") -> str:
    """The settings that satisfy the prefix of ``{kind}_COOKIE_NAME``, for a check's hint."""
    prefix = cookie_prefix(str(getattr(settings, f"{kind}_COOKIE_NAME"))) or ""
    fixes = [f"{kind}_COOKIE_SECURE = True"]
    if prefix.startswith("__Host-"):
        fixes += [f'{kind}_COOKIE_PATH = "/"', f"{kind}_COOKIE_DOMAIN = None"]
    if prefix in ("__Http-", "__Host-Http-"):
        fixes.append(f"{kind}_COOKIE_HTTPONLY = True")
    return (
        f"Set {', '.join(fixes)} (and serve the site over HTTPS), or choose a {kind}_COOKIE_NAME without "
        f"the prefix {prefix!r}."
    )


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
    signer_options = {
        "purpose": PURPOSE,
        "fallbacks": secret_key_fallbacks(),
        "hasher": options["HASHER"],
        "compression": options["COMPRESSION"],
        "dictionary": options["DICTIONARY"],
        "compression_threshold": options["COMPRESSION_THRESHOLD"],
        "tag_size": options["TAG_SIZE"],
        "format": options["FORMAT"],
        "max_decompressed_size": options["MAX_DECOMPRESSED_SIZE"],
        # Off (all four False): the plain SerializerSigner, as before these options existed.
        **{argument: options[key] for key, argument in SIGNER_FLAGS.items() if options[key]},
    }
    max_chunks = options["MAX_CHUNKS"] if options["CHUNKED"] else 0
    # Chunked: the token the cookies carry together, each at most COOKIE_SIZE_LIMIT bytes.
    longest_token = options["COOKIE_SIZE_LIMIT"] * max(max_chunks, 1)
    signer = get_signer(settings.SECRET_KEY, max_token_length=max(longest_token, MAC_LENGTH + 2), **signer_options)
    return SessionConfig(
        signer=signer,
        writer=get_signer(settings.SECRET_KEY, max_token_length=token_length_bound(signer), **signer_options),
        cookie_name=settings.SESSION_COOKIE_NAME,
        cookie_age=settings.SESSION_COOKIE_AGE,
        cookie_size_limit=options["COOKIE_SIZE_LIMIT"],
        cookie_overhead=cookie_overhead(),
        raise_on_oversize=options["OVERSIZE"] == "raise",
        accept_django_signed_cookies=options["ACCEPT_DJANGO_SIGNED_COOKIES"],
        revocation_cache=options["REVOCATION_CACHE"],
        revocation_fails_open=options["REVOCATION_UNAVAILABLE"] == "open",
        revocation_clock_skew=float(options["REVOCATION_CLOCK_SKEW"]),
        revocation_key_prefix=options["REVOCATION_KEY_PREFIX"],
        max_chunks=max_chunks,
        idle_timeout=options["IDLE_TIMEOUT"],
        absolute_timeout=options["ABSOLUTE_TIMEOUT"],
    )


def token_length_bound(signer: SerializerSigner) -> int:
    """Characters of the longest token ``signer`` can write: its largest payload, framed, in base64.

    The frame is at most 18 bytes and a 32-byte tag for a signed token; 58 bytes (flags, times, session id,
    dictionary id, 24-byte nonce, 16-byte GCM tag) and one marker character for an encrypted one.
    """
    return (signer.max_decompressed_size + 64) * 4 // 3 + MAC_LENGTH + 8


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
