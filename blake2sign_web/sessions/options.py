"""The session options of every framework: each written once, with its rule and its name in each (docs/options.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, cast

from .. import dictionaries
from ..signing.encryption import load_cryptography
from ..signing.keys import HASHERS, MIN_SECRET_LENGTH, TAG_SIZES
from ..signing.signer import is_count
from ..stores.revocation import (
    DEFAULT_CLOCK_SKEW,
    POLICIES,
    check_clock_skew,
    check_earlier_names_until,
    check_key_prefix,
    missing_key_prefix,
)
from .chunks import MAX_CHUNKS, max_chunks_problem
from .cookie_attributes import CookieSettings, prefix_problem
from .spelling import Option as Option
from .spelling import Problem as Problem
from .spelling import SecretSpelling as SecretSpelling
from .spelling import Spelling as Spelling

#: Browsers keep cookies up to 4096 bytes of name, value and attributes (RFC 6265, 6.1).
BROWSER_COOKIE_LIMIT: Final = 4096
#: The smallest sensible cookie limit: room for a cookie name, attributes and an empty session.
MIN_COOKIE_SIZE_LIMIT: Final = 256
#: Timeouts are counted from 32-bit token times: below 2**32 seconds (136 years).
MAX_TIMEOUT: Final = 2**32
#: RFC 6265 section 4.1.1: a cookie name is a token, so no control character, space or separator.
COOKIE_NAME_SEPARATORS: Final = frozenset('()<>@,;:\\"/[]?={} \t')
#: What to run when encrypt or decrypt is on and the cryptography package is missing.
ENCRYPTED_EXTRA: Final = 'pip install "blake2sign-web[encrypted]"'
SAME_SITE: Final = ("lax", "strict", "none")
OVERSIZE_POLICIES: Final = ("raise", "log")


def _cookie_name(value: object) -> bool:
    return (
        isinstance(value, str)
        and bool(value)
        and not any(not " " < c < "\x7f" or c in COOKIE_NAME_SEPARATORS for c in value)
    )


def _seconds(value: object) -> bool:
    """A session's age: a number of seconds (zero or less expires every cookie), or None (no age of its own)."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == value)


def chunks_fix(spelling: Spelling) -> str:
    """How a user turns chunks on, in a sentence: ``pass chunked=True``, ``set BLAKE2SIGN_WEB['CHUNKED'] = True``."""
    chunked = BY_KEY["chunked"]
    return f"{spelling.verb} " + (
        spelling.setting(chunked, True) if spelling.framework == "starlette" else f"{spelling.name(chunked)} = True"
    )


def _attribute(value: object) -> bool:
    """RFC 6265 section 4.1.1: an attribute value is US-ASCII without controls or ';', else it forges attributes."""
    return isinstance(value, str) and all(" " <= c < "\x7f" and c != ";" for c in value)


def _timeout(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value < MAX_TIMEOUT)


def _raised(check: Callable[[Any, str], object]) -> Callable[[Any, str], str | None]:
    """A rule the core words itself (raising ValueError) as a problem."""

    def problem(value: Any, name: str) -> str | None:
        try:
            check(value, name)
        except ValueError as error:
            return str(error)
        return None

    return problem


def _flag(key: str, django: str, check: str, starlette: str = "") -> Option:
    return Option(
        key, False, django, check, lambda v: isinstance(v, bool), "must be True or False", starlette, TypeError
    )


_ATTRIBUTE = "must be printable ASCII without ';' (anything else would end or forge a cookie attribute)"
_SECONDS = f"must be None (off) or a number of seconds, an int from 1 to {MAX_TIMEOUT - 1}"
_IDS = ", ".join(map(str, dictionaries.FILES))

OPTIONS: Final[tuple[Option, ...]] = (
    # The signer's.
    Option("hasher", "blake2b", "HASHER", "E002", HASHERS.__contains__, f"must be one of {', '.join(HASHERS)}"),
    Option("compression", "zstd", "COMPRESSION", "E003", lambda v: v in ("zstd", None), "must be 'zstd' or None"),
    # Sessions are compressed against the shipped session dictionary whenever that makes the cookie shorter.
    Option(
        "dictionary", dictionaries.SESSION, "DICTIONARY", "E014",
        lambda v: v is None or (is_count(v) and v in dictionaries.FILES),
        f"must be a shipped dictionary id ({_IDS}) or None",
    ),
    # Without a dictionary: low because the cookie travels on every request.
    Option(
        "compression_threshold", 128, "COMPRESSION_THRESHOLD", "E004", lambda v: is_count(v) and v >= 0,
        "must be an int of bytes >= 0",
    ),
    Option("tag_size", 16, "TAG_SIZE", "E015", lambda v: is_count(v) and v in TAG_SIZES, "must be 16 or 32 (bytes)"),
    Option(
        "format", 2, "FORMAT", "E016", lambda v: is_count(v) and v in (1, 2),
        "must be 2, or 1 while processes that read only format 1 still run",
    ),
    Option(
        "max_decompressed_size", 64 * 1024, "MAX_DECOMPRESSED_SIZE", "E004",
        lambda v: is_count(v) and v >= BROWSER_COOKIE_LIMIT,
        f"must be an int of at least {BROWSER_COOKIE_LIMIT} bytes", None,
    ),
    _flag("typed", "TYPED", "E019"),
    _flag("encrypt", "ENCRYPT", "E019"),
    _flag("decrypt", "DECRYPT", "E019"),
    _flag("compress_encrypted", "COMPRESS_ENCRYPTED", "E019"),
    # The cookie.
    Option(
        "cookie_name", "session", "SESSION_COOKIE_NAME", "E012", _cookie_name,
        "must be a cookie name of printable ASCII letters, digits and !#$%&'*+-.^_`|~", "session_cookie",
    ),
    Option("path", "/", "SESSION_COOKIE_PATH", "E012", _attribute, _ATTRIBUTE),
    Option("domain", None, "SESSION_COOKIE_DOMAIN", "E012", lambda v: v is None or _attribute(v), _ATTRIBUTE),
    Option(
        "same_site", "lax", "SESSION_COOKIE_SAMESITE", "E011", lambda v: isinstance(v, str) and v.lower() in SAME_SITE,
        "must be 'lax', 'strict' or 'none'",
    ),
    Option("secure", False, "SESSION_COOKIE_SECURE", "E011", starlette="https_only"),
    Option("http_only", True, "SESSION_COOKIE_HTTPONLY", "E020", starlette=None),  # Starlette's cookie always is
    _flag("partitioned", "SESSION_COOKIE_PARTITIONED", "E024"),
    # The signer's rule (to_seconds). Flask's lifetime bounds every token; only a permanent session's cookie has it.
    Option(
        "max_age", 14 * 24 * 3600, "SESSION_COOKIE_AGE", "E013", _seconds, "must be seconds (int or float), or None",
        error=TypeError, flask="PERMANENT_SESSION_LIFETIME",
    ),
    Option(
        "cookie_size_limit", BROWSER_COOKIE_LIMIT, "COOKIE_SIZE_LIMIT", "E004",
        lambda v: is_count(v) and MIN_COOKIE_SIZE_LIMIT <= v <= BROWSER_COOKIE_LIMIT,
        f"must be an int from {MIN_COOKIE_SIZE_LIMIT} to {BROWSER_COOKIE_LIMIT} (the browser limit)", None,
    ),
    Option("on_oversize", "raise", "OVERSIZE", "E005", OVERSIZE_POLICIES.__contains__, "must be 'raise' or 'log'"),
    # Off: one cookie per session. On: a session over the cookie limit is split into name, name.1... (chunks.py).
    _flag("chunked", "CHUNKED", "E021"),
    Option("max_chunks", MAX_CHUNKS, "MAX_CHUNKS", "E021", problem=max_chunks_problem),
    # None: off. Seconds: a session not read for idle_timeout, or begun (at login) absolute_timeout ago, ends.
    Option("idle_timeout", None, "IDLE_TIMEOUT", "E023", _timeout, _SECONDS),
    Option("absolute_timeout", None, "ABSOLUTE_TIMEOUT", "E023", _timeout, _SECONDS),
    # Accept and re-issue the cookies of the framework's own signed-cookie sessions.
    Option(
        "migrate", False, "ACCEPT_DJANGO_SIGNED_COOKIES", "E006", lambda v: isinstance(v, bool),
        "must be True or False", "migrate_starlette_cookies", TypeError, flask="ACCEPT_FLASK_COOKIES",
    ),
    _flag("server_timing", "SERVER_TIMING", "E017"),
    # Revocation: the store is the framework's (a RedisStore; a CACHES alias, one of ``problems``' ``stores``).
    Option("revocation", None, "REVOCATION_CACHE", "E013", flask="REVOCATION"),  # Flask's: a RedisStore
    # Starlette's and Flask's are the RedisStore's own arguments, which it checks itself.
    Option(
        "revocation_unavailable", "closed", "REVOCATION_UNAVAILABLE", "E013", POLICIES.__contains__,
        "must be 'closed' (an empty session while the cache is down) or 'open' (accept, log an error)", None,
        flask="RedisStore on_unavailable",
    ),
    Option(
        "revocation_clock_skew", DEFAULT_CLOCK_SKEW, "REVOCATION_CLOCK_SKEW", "E013", starlette=None,
        problem=_raised(check_clock_skew), flask="RedisStore clock_skew",
    ),
    Option(
        "revocation_key_prefix", "", "REVOCATION_KEY_PREFIX", "E013", starlette="RedisStore key_prefix",
        problem=_raised(check_key_prefix), flask="RedisStore key_prefix",
    ),
    # While upgrading: the date until which records under the names of earlier releases are read (None: never).
    Option(
        "revocation_earlier_names_until", None, "REVOCATION_EARLIER_NAMES_UNTIL", "E013", starlette=None,
        problem=_raised(check_earlier_names_until), flask="RedisStore earlier_names_until",
    ),
)  # fmt: skip
#: The options passed through to SerializerSigner as they are, and those passed only when True.
SIGNER_OPTIONS: Final = (
    "hasher",
    "compression",
    "dictionary",
    "compression_threshold",
    "tag_size",
    "format",
    "max_decompressed_size",
)
SIGNER_FLAGS: Final = ("typed", "encrypt", "decrypt", "compress_encrypted")
BY_KEY: Final[Mapping[str, Option]] = {option.key: option for option in OPTIONS}
DEFAULTS: Final[Mapping[str, Any]] = {option.key: option.default for option in OPTIONS}


def section_keys(spelling: Spelling) -> dict[str, str]:
    """The options in the framework's settings section (Django's ``BLAKE2SIGN_WEB['SESSIONS']``), name: key."""
    return {spelling.written(option): option.key for option in OPTIONS if spelling.in_section(option)}


def setting_keys(spelling: Spelling) -> dict[str, str]:
    """The options that are settings of their own (Django's ``SESSION_COOKIE_*``), name: key."""
    return {spelling.written(option): option.key for option in OPTIONS if not spelling.in_section(option)}


def signer_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """``get_signer``'s options: each signer option given, and each flag only when on (else the plain signer)."""
    given = {key: values[key] for key in SIGNER_OPTIONS if key in values}
    return given | {key: True for key in SIGNER_FLAGS if values.get(key)}


STARLETTE: Final = Spelling(
    "starlette",
    wordings={
        "dictionary": f"must be a shipped dictionary id or None ({', '.join(map(str, dictionaries.FILES))})",
        "idle_timeout": f"must be seconds (an int from 1 to {MAX_TIMEOUT - 1}) or None (off)",
        "absolute_timeout": f"must be seconds (an int from 1 to {MAX_TIMEOUT - 1}) or None (off)",
    },
    fixes={
        "revocation_key_prefix": "RedisStore(..., key_prefix='<this site>')",
        "revocation_earlier_names_until": "RedisStore(..., earlier_names_until=<date>)",
    },
    secrets=SecretSpelling(
        "secret_key",
        "each of fallback_secrets",
        (str,),
        "a str or starlette.datastructures.Secret",
        "pass a long random string, e.g. from secrets.token_urlsafe(50), read from configuration",
        "fallback_secrets=[old_key]",
    ),
)
DJANGO: Final = Spelling(
    "django",
    section="BLAKE2SIGN_WEB['SESSIONS']",
    verb="set",
    own_settings="SESSION_",
    wordings={"revocation": "must be None or an alias in CACHES (a RedisCache shared by every process)"},
    fixes={
        "revocation_key_prefix": 'REVOCATION_KEY_PREFIX = "<this site>" (or a KEY_PREFIX in the cache\'s entry in '
        "CACHES)"
    },
    secrets=SecretSpelling(
        "SECRET_KEY",
        "SECRET_KEY_FALLBACKS[{}]",
        (str, bytes),
        "a string",
        "generate one with django.core.management.utils.get_random_secret_key()",
        "SECRET_KEY_FALLBACKS = [old_key]",
    ),
)

FLASK: Final = Spelling(
    "flask",
    section="BLAKE2SIGN_WEB",
    verb="set",
    # Flask's own keys, and the RedisStore's arguments (none is a key of BLAKE2SIGN_WEB).
    own_settings=("SESSION_", "PERMANENT_", "RedisStore "),
    wordings={"max_age": "must be a timedelta or seconds (an int)"},
    fixes={
        "revocation_key_prefix": "RedisStore(..., key_prefix='<this site>')",
        "revocation_earlier_names_until": "RedisStore(..., earlier_names_until=<date>)",
    },
    secrets=SecretSpelling(
        "SECRET_KEY",
        "SECRET_KEY_FALLBACKS[{}]",
        (str, bytes),
        "a str or bytes",
        "generate one with: python -c 'import secrets; print(secrets.token_hex())'",
        "SECRET_KEY_FALLBACKS = [old_key]",
    ),
)


#: Django refuses a bad SESSION_COOKIE_SAMESITE itself, when it writes the cookie (False: no attribute).
DJANGO_CHECKS: Final = frozenset({"same_site"})


def problems(
    values: Mapping[str, Any],
    spelling: Spelling,
    *,
    store_has_prefix: bool = False,
    stores: Mapping[str, bool] | None = None,
    checked_by_framework: Iterable[str] = (),
) -> list[Problem]:
    """Every problem with ``values`` (option key: value), in the framework's words; [] when they all work.
    ``stores``: Django's CACHES aliases, each with whether it has a KEY_PREFIX (as ``store_has_prefix`` says)."""
    values = {k: v for k, v in values.items() if k not in checked_by_framework or BY_KEY[k].valid(v)}
    found = [problem for key, value in values.items() if (problem := _value_problem(BY_KEY[key], value, spelling))]
    wrong = {problem.key for problem in found}
    store = values.get("revocation")
    if stores is not None and store is not None:
        named = isinstance(store, str) and store in stores
        store_has_prefix = stores[store] if named else True  # an unknown store: reported here, not as unnamed
        if not named:
            option = BY_KEY["revocation"]
            message = f"{spelling.name(option)} {spelling.must(option)}; got {store!r}"
            found.insert(0, Problem(option.key, message, option.check_id))
    merged = {**DEFAULTS, **values}
    for reads, rule in RULES:
        if wrong.isdisjoint(reads):
            found += rule(merged, spelling, store_has_prefix)
    return found


def secret_problems(secret: object, fallbacks: object, spelling: Spelling) -> list[Problem]:
    """The secret and each fallback must be a string of at least MIN_SECRET_LENGTH bytes, in a list or tuple."""
    names = spelling.secrets
    rule = f"a secret is a string of at least {MIN_SECRET_LENGTH} bytes (UTF-8), too long to guess; {names.hint}"
    found = []
    if not isinstance(fallbacks, (list, tuple)):
        # A string would be one key per character: a token signed with the key "o" would verify.
        setting = names.fallbacks.partition("=")[0].strip()
        message = (
            f"{setting} must be a list of secrets, not a {type(fallbacks).__name__} (a string would make every one "
            f"of its characters a key): write {names.fallbacks}"
        )
        found.append(Problem("fallbacks", message, "blake2sign_web.E009", TypeError))
        fallbacks = ()
    for name, value in [(names.secret, secret), *((names.fallback.format(i), f) for i, f in enumerate(fallbacks))]:
        if not isinstance(value, names.types):
            message = f"{name} must be {names.type_names}, not {type(value).__name__}: {rule}"
            found.append(Problem("secret", message, "blake2sign_web.E010", TypeError))
            continue
        length = len(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else cast(bytes, value))
        if length < MIN_SECRET_LENGTH:
            short = f"is {length} bytes long, fewer than the minimum of {MIN_SECRET_LENGTH}"
            wrong = "must not be empty" if length == 0 else short
            found.append(Problem("secret", f"{name} {wrong}: {rule}", "blake2sign_web.E010"))
    return found


def section_problems(section: object, name: str, known: Iterable[str]) -> list[Problem]:
    """A settings dict (Django's ``BLAKE2SIGN_WEB``) must be a dict of known keys, else a misspelt key is ignored."""
    if not isinstance(section, Mapping):
        return [Problem(name, f"{name} must be a dict, not {type(section).__name__}", "blake2sign_web.E001", TypeError)]
    names = ", ".join(known)
    return [
        Problem(name, f"{name} has an unknown key {key!r}; the known keys are {names}", "blake2sign_web.E001")
        for key in section
        if key not in known
    ]


def settings_problems(
    raw: object, setting: str, sections: Iterable[str], section: str, known: Iterable[str]
) -> list[Problem]:
    """A setting of sections (Django's ``BLAKE2SIGN_WEB``) and its section of session options: dicts of known keys."""
    found = section_problems(raw, setting, sections)
    if isinstance(raw, Mapping):
        found += section_problems(raw.get(section, {}), f"{setting}[{section!r}]", known)
    return found


def readable(found: Iterable[Problem]) -> bool:
    """Whether values can be read despite ``settings_problems``: after a TypeError there, nothing can."""
    return not any(problem.error is TypeError for problem in found)


def raise_first(found: list[Problem], prefix: str = "") -> None:
    """Raise the first problem as its own exception type, its message after ``prefix``."""
    if found:
        raise found[0].error(prefix + found[0].message)


def _value_problem(option: Option, value: Any, spelling: Spelling) -> Problem | None:
    name = spelling.name(option)
    if option.problem is not None:
        message = option.problem(value, name)
    else:
        message = None if option.valid(value) else f"{name} {spelling.must(option)}; got {value!r}"
    return None if message is None else Problem(option.key, message, option.check_id, option.error)


# The rules between options: (value, spelling, store_has_prefix) -> problems, each with the options it reads.

Values = Mapping[str, Any]


def _needs_secure(key: str, values: Values, spelling: Spelling, why: str) -> Iterator[Problem]:
    option, secure = BY_KEY[key], BY_KEY["secure"]
    fix = spelling.setting(secure, True)
    yield Problem(
        key,
        f"{spelling.setting(option, values[key])} needs {fix}: browsers drop {why} cookies that are not Secure, so "
        f"no session would last; serve the site over HTTPS with {fix}, or {spelling.verb} "
        f"{spelling.setting(option, option.default)}",
        option.check_id,
    )


def _same_site_none(values: Values, spelling: Spelling, _: bool) -> Iterator[Problem]:
    if values["same_site"].lower() == "none" and not values["secure"]:
        yield from _needs_secure("same_site", values, spelling, "SameSite=None")


def _partitioned(values: Values, spelling: Spelling, _: bool) -> Iterator[Problem]:
    if values["partitioned"] and not values["secure"]:
        yield from _needs_secure("partitioned", values, spelling, "Partitioned (CHIPS)")


def cookie_settings(spelling: Spelling) -> CookieSettings:
    """The session cookie's settings as the framework writes each fix a prefix may need."""
    return CookieSettings(
        name=spelling.name(BY_KEY["cookie_name"]),
        secure=spelling.setting(BY_KEY["secure"], True),
        path=spelling.setting(BY_KEY["path"], "/"),
        domain=spelling.setting(BY_KEY["domain"], None),
        http_only=spelling.setting(BY_KEY["http_only"], True),
    )


#: The options a cookie name's prefix reads.
PREFIX_KEYS: Final = frozenset({"cookie_name", "secure", "path", "domain", "http_only"})


def prefix_problems(values: Values, settings: CookieSettings) -> list[Problem]:
    """A browser silently drops a ``__Host-``/``__Secure-`` cookie whose attributes break its prefix's rules."""
    if not isinstance(values["cookie_name"], str):
        return []  # the name's own rule (Django's, for its CSRF cookie)
    problem = prefix_problem(
        values["cookie_name"],
        secure=bool(values["secure"]),
        path=values["path"],
        domain=values["domain"],
        http_only=bool(values["http_only"]),
        settings=settings,
    )
    return [] if problem is None else [Problem("cookie_name", f"{settings.name}: {problem}", "blake2sign_web.E020")]


def _prefix(values: Values, spelling: Spelling, _: bool) -> Iterator[Problem]:
    yield from prefix_problems(values, cookie_settings(spelling))


def _applies_only_with(key: str, needed: str, what: str, spelling: Spelling) -> Problem:
    fix = spelling.setting(BY_KEY[needed], True)
    message = f"{spelling.name(BY_KEY[key])} applies to {what}: {spelling.verb} {fix} too, or remove it"
    return Problem(key, message, BY_KEY[key].check_id)


def _max_chunks_alone(values: Values, spelling: Spelling, _: bool) -> Iterator[Problem]:
    if values["max_chunks"] != MAX_CHUNKS and not values["chunked"]:
        yield _applies_only_with("max_chunks", "chunked", "chunked cookies", spelling)


def _encryption(values: Values, spelling: Spelling, _: bool) -> Iterator[Problem]:
    if values["compress_encrypted"] and not values["encrypt"]:
        yield _applies_only_with("compress_encrypted", "encrypt", "encrypted sessions", spelling)
    for key in ("typed", "encrypt"):
        if values[key] and values["format"] == 1:
            format_2 = spelling.needs(BY_KEY["format"], 2)
            yield Problem(
                key,
                f"{spelling.name(BY_KEY[key])} needs {format_2}: processes that read only format 1 read neither typed "
                f"nor encrypted sessions; finish the rolling upgrade ({format_2}) first",
                BY_KEY[key].check_id,
            )
    if values["encrypt"] or values["decrypt"]:
        key = "encrypt" if values["encrypt"] else "decrypt"
        try:
            load_cryptography()
        except ImportError:
            message = f"{spelling.turned_on(BY_KEY[key])} needs the cryptography package: {ENCRYPTED_EXTRA}"
            yield Problem(key, message, BY_KEY[key].check_id, ImportError)


def _revocation(values: Values, spelling: Spelling, store_has_prefix: bool) -> Iterator[Problem]:
    if values["revocation"] is None:
        return
    revocation, max_age = BY_KEY["revocation"], values["max_age"]
    name = spelling.name(revocation)
    if not isinstance(max_age, (int, float)) or isinstance(max_age, bool) or max_age <= 0:
        yield Problem(
            "revocation",
            f"{name} needs {spelling.name(BY_KEY['max_age'])} (seconds > 0): a not-before record must outlive every "
            f"session, so sessions must end; got {spelling.setting(BY_KEY['max_age'], max_age)}",
            revocation.check_id,
        )
    if values["format"] != 2:
        yield Problem(
            "revocation",
            f"{name} needs {spelling.needs(BY_KEY['format'], 2)} (only format 2 tokens carry a session id): finish the "
            "rolling upgrade before turning revocation on",
            revocation.check_id,
        )
    prefix = BY_KEY["revocation_key_prefix"]
    if not store_has_prefix and (problem := missing_key_prefix(values[prefix.key], spelling.name(prefix))):
        window = spelling.setting(BY_KEY["revocation_earlier_names_until"], "<date>")
        upgrade = (
            f"; upgrading from a release that wrote records without a prefix, also {window} (the upgrade's end "
            "plus a session lifetime), so that the sessions it ended stay ended"
        )
        yield Problem(prefix.key, f"{name} needs {spelling.setting(prefix, '')}: {problem}{upgrade}", prefix.check_id)


def _max_age_range(values: Values, spelling: Spelling, store_has_prefix: bool) -> Iterator[Problem]:
    """Token times are 32-bit: an age of 2**32 seconds or more could never be checked."""
    option, max_age = BY_KEY["max_age"], values["max_age"]
    if max_age is not None and max_age >= MAX_TIMEOUT:
        yield Problem(
            option.key,
            f"{spelling.name(option)} must be below 2**32 seconds (136 years: token times are 32-bit); got {max_age!r}",
            option.check_id,
        )


RULES: Final[tuple[tuple[frozenset[str], Callable[[Values, Spelling, bool], Iterator[Problem]]], ...]] = (
    (frozenset({"same_site", "secure"}), _same_site_none),
    (frozenset({"partitioned", "secure"}), _partitioned),
    (PREFIX_KEYS, _prefix),
    (frozenset({"chunked", "max_chunks"}), _max_chunks_alone),
    (frozenset({"typed", "encrypt", "decrypt", "compress_encrypted", "format"}), _encryption),
    (frozenset({"max_age"}), _max_age_range),
    (frozenset({"revocation", "max_age", "format", "revocation_key_prefix"}), _revocation),
)
