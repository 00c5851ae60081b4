"""The options of signed links in both frameworks: each written once, with its default, its rule and its names.

Django reads them from ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` (``from_settings``: the keys, ``DEFAULTS``), Starlette
takes them as arguments of ``URLSigner`` and of its guards; ``check_link_options`` is the rule of both, and
every message names the option as the user wrote it (``spell``). The options for users: docs/signed-urls.md.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any, Final, NamedTuple

from ..signing.keys import HASHERS
from ..stores.revocation import POLICIES
from .text import LINK_PARAMETERS, check_link_parameters

#: The statuses an expired or used link may get: 410 Gone (the page can say "ask for a new link"), or 403.
EXPIRED_STATUSES: Final = (410, 403)


class LinkOption(NamedTuple):
    """One option: its neutral name (``URLSigner``'s keyword where ``signer``), its default, its Django key."""

    key: str
    default: Any
    django: str
    signer: bool = False


OPTIONS: Final = (
    LinkOption("purpose", "blake2sign_web.signed_urls", "PURPOSE", True),  # separate keys per use if you need them
    LinkOption("hasher", "blake2b", "HASHER", True),  # or "blake2s", "blake3", "hmac-sha256"
    LinkOption("signature_param", "signature", "SIGNATURE_PARAM", True),
    LinkOption("expires_param", "expires", "EXPIRES_PARAM", True),
    LinkOption("ignore", (), "IGNORED_PARAMS", True),  # e.g. ("utm_*", "fbclid")
    LinkOption("bind_host", False, "BIND_HOST", True),  # True: links only work on the host they name
    LinkOption("expired_status", 410, "EXPIRED_STATUS"),  # or 403 to hide that a link once worked
    LinkOption("single_use", None, "SINGLE_USE_CACHE"),  # Django: a CACHES alias; Starlette: a RedisStore
    LinkOption("on_unavailable", "closed", "SINGLE_USE_UNAVAILABLE"),  # store down: "closed" = 503, "open" = accept
    LinkOption("client", None, "SINGLE_USE_CLIENT"),  # request -> str (Django: or its dotted path)
)
#: The keys of Django's ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` and their defaults.
DEFAULTS: Final[Mapping[str, Any]] = {option.django: option.default for option in OPTIONS}
_DJANGO: Final = {option.key: option.django for option in OPTIONS}


def check_link_options(
    *,
    hasher: object = "blake2b",
    expired_status: object = 410,
    on_unavailable: object = "closed",
    names: Mapping[str, str] = LINK_PARAMETERS,
    ignore: Iterable[str] = (),
    spell: Callable[[str], str] = lambda option: option,
) -> None:
    """The options of signed links in any framework, checked once: ValueError or TypeError naming the option.

    ``spell``: the framework's name of a neutral option (``hasher``, ``expired_status``, ``on_unavailable``,
    ``ignore``, the keywords of ``LINK_PARAMETERS``), so that a message names what the user wrote.
    """
    if hasher not in HASHERS:
        raise ValueError(f"{spell('hasher')} must be one of {', '.join(HASHERS)}; got {hasher!r}")
    check_expired_status(expired_status, spell("expired_status"))
    if on_unavailable not in POLICIES:
        raise ValueError(
            f"{spell('on_unavailable')} must be 'closed' (503 while the store is down) or 'open' (accept and log); "
            f"got {on_unavailable!r}"
        )
    check_link_parameters(names, ignore, spell)


def check_expired_status(value: object, name: str = "expired_status") -> int:
    """``value`` as the status of an expired or used link; ValueError naming the option (``name``) otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in EXPIRED_STATUSES:
        raise ValueError(f"{name} must be 410 or 403; got {value!r}")
    return value


def from_settings(
    raw: object,
    caches: Container[str],
    load: Callable[[str], Any],
    default_client: Any,
    setting: str = "BLAKE2SIGN_WEB",
) -> dict[str, Any]:
    """Django's ``SIGNED_URLS`` in ``raw`` (the ``setting``'s value; not a dict: no options) with the defaults filled
    in, checked: ValueError or TypeError naming the key. ``caches``: the CACHES aliases; ``load``: imports a
    dotted path."""
    section = raw.get("SIGNED_URLS", {}) if isinstance(raw, Mapping) else {}
    where = f"{setting}['SIGNED_URLS']"
    if not isinstance(section, Mapping):
        raise TypeError(f"{where} must be a dict, not {type(section).__name__}")
    unknown = [key for key in section if key not in DEFAULTS]
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}; the known keys are {', '.join(DEFAULTS)}")
    result = {**DEFAULTS, **section}
    names = {**LINK_PARAMETERS, "signature_param": result["SIGNATURE_PARAM"], "expires_param": result["EXPIRES_PARAM"]}

    def spell(option: str) -> str:
        return f"{where}[{_DJANGO[option]!r}]" if option in _DJANGO else f"the {names[option]!r} parameter"

    check_link_options(
        hasher=result["HASHER"],
        expired_status=result["EXPIRED_STATUS"],
        on_unavailable=result["SINGLE_USE_UNAVAILABLE"],
        names=names,
        ignore=result["IGNORED_PARAMS"],
        spell=spell,
    )
    alias = result["SINGLE_USE_CACHE"]
    if alias is not None and (not isinstance(alias, str) or alias not in caches):
        raise ValueError(
            f"{where}['SINGLE_USE_CACHE'] must be None or an alias in CACHES (a RedisCache shared by every "
            f"process); got {alias!r}"
        )
    client = client_function(result["SINGLE_USE_CLIENT"], f"{where}['SINGLE_USE_CLIENT']", load)
    result["SINGLE_USE_CLIENT"] = default_client if client is None else client
    return result


def client_function(value: object, name: str, load: Callable[[str], Any]) -> Any:
    """Who is asking, for single-use links: a function of the request, its dotted path (``load``), or None."""
    if isinstance(value, str):
        try:
            value = load(value)
        except ImportError as error:
            raise ValueError(f"{name} cannot be imported: {error}") from None
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a function of the request returning a str, or its dotted path")
    return value


def signer_arguments(settings: Mapping[str, Any], fallbacks: object) -> dict[str, Any]:
    """``get_url_signer``'s keywords from Django's checked settings and SECRET_KEY_FALLBACKS.

    A list of fallbacks becomes a tuple (the signer cache's key); a str is passed on for the core to refuse:
    ``tuple("old")`` would make every character a secret (so a one-character key forges links).
    """
    arguments = {option.key: settings[option.django] for option in OPTIONS if option.signer}
    arguments["ignore"] = tuple(arguments["ignore"])
    arguments["fallbacks"] = tuple(fallbacks) if isinstance(fallbacks, (list, tuple)) else fallbacks
    return arguments
