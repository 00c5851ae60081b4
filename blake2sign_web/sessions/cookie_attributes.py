"""Cookie attributes: what a browser demands of a prefixed cookie name, and the ``expires`` date beside Max-Age.

``expires_for`` writes the ``expires`` a session cookie carries beside ``Max-Age`` (for clients that know only
``expires``), from the core's clock. A browser silently drops a ``Set-Cookie`` that breaks the rule of its
name's prefix (``__Secure-``, ``__Host-``, ``__Http-``, ``__Host-Http-``; draft-ietf-httpbis-rfc6265bis), and the
session is never kept: ``prefix_problem`` says so at start-up instead, with the fix. Prefixes are matched
without regard to case (docs/core.md, "Cookie name prefixes", has the rules and why).
"""

from __future__ import annotations

import time
from email.utils import formatdate
from typing import Final, NamedTuple

#: (second, max_age, formatted expires): the last ``expires`` written, reused within the second.
_expires_cache: tuple[int, int, str] = (0, 0, "")


def expires_for(max_age: int) -> str:
    """The HTTP date ``max_age`` seconds from now (as Django's ``http_date``), formatted once a second per max_age."""
    global _expires_cache
    now = time.time()
    second, age, text = _expires_cache
    if int(now) != second or max_age != age:
        text = formatdate(now + max_age, usegmt=True)
        _expires_cache = (int(now), max_age, text)
    return text


class CookieSettings(NamedTuple):
    """How the user's framework spells the settings behind a cookie's attributes: the fix a message names.

    Each is written as the user would write the fix (``https_only=True``, ``SESSION_COOKIE_SECURE = True``),
    so that a configuration error names the setting in the user's own framework, not the core's idea of it.
    """

    #: The setting that names the cookie.
    name: str
    #: The setting, with its value, that makes the cookie ``Secure``.
    secure: str
    #: ... that gives it ``Path=/``.
    path: str
    #: ... that writes no ``Domain`` attribute.
    domain: str
    #: ... that makes it ``HttpOnly``.
    http_only: str


#: The attributes themselves, for code that is no framework (the core's own callers).
ATTRIBUTES: Final = CookieSettings(
    name="name",
    secure="the Secure attribute",
    path="Path=/",
    domain="no Domain attribute",
    http_only="the HttpOnly attribute",
)

#: Each prefix in its canonical spelling, longest first (``__Host-Http-`` before ``__Host-``).
PREFIXES: Final = ("__Host-Http-", "__Secure-", "__Host-", "__Http-")
#: The prefixes that also demand ``HttpOnly``; those starting ``__Host-`` demand ``Path=/`` and no ``Domain``.
HTTP_ONLY_PREFIXES: Final = ("__Http-", "__Host-Http-")


def cookie_prefix(name: str) -> str | None:
    """The prefix ``name`` starts with, in its canonical spelling, matched without regard to case; or None."""
    lowered = name[:12].lower()
    for prefix in PREFIXES:
        if lowered.startswith(prefix.lower()):
            return prefix
    return None


def prefix_problem(
    name: str,
    *,
    secure: bool,
    path: str | None,
    domain: str | None,
    http_only: bool | None = None,
    settings: CookieSettings = ATTRIBUTES,
) -> str | None:
    """None when a cookie called ``name`` with these attributes satisfies its name's prefix; else what to fix.

    ``path`` and ``domain`` are the attributes as they will be written (None or ``""``: not written).
    ``http_only`` is checked only when given (the ``__Http-`` prefixes need it). A name without a prefix
    has no rule: None. The message names the cookie, the attribute and the setting to change, as
    ``settings`` spells it in the caller's framework, for an ``ImproperlyConfigured`` or a ``ValueError``
    at start-up.
    """
    prefix = cookie_prefix(name)
    if prefix is None:
        return None
    problems = []
    if not name.startswith(prefix):
        problems.append(
            f"spell the prefix {prefix!r} exactly: browsers that match it without regard to case "
            "enforce its rules, others treat the cookie as unprefixed"
        )
    if not secure:
        problems.append(f"it must be Secure: set {settings.secure} (and serve the site over HTTPS)")
    if prefix.startswith("__Host-"):
        if path != "/":
            problems.append(f"its Path must be exactly '/', not {path!r}: set {settings.path}")
        if domain:
            problems.append(
                f"it must have no Domain attribute, not {domain!r} (the cookie is for this host only): "
                f"set {settings.domain}"
            )
    if prefix in HTTP_ONLY_PREFIXES and http_only is False:
        problems.append(f"it must be HttpOnly: set {settings.http_only}")
    if not problems:
        return None
    return (
        f"cookie name {name!r} starts with the prefix {prefix!r}, and browsers drop such a cookie unless its "
        f"attributes follow the prefix's rules: {'; '.join(problems)}. Fix the attributes, or choose a "
        f"{settings.name} without the prefix."
    )


def prefix_fix(name: str, settings: CookieSettings = ATTRIBUTES) -> str:
    """The settings that satisfy the prefix of the cookie ``name`` (a prefix problem's hint), as ``settings``
    spells them: every attribute its prefix demands, whichever is wrong."""
    prefix = cookie_prefix(name) or ""
    fixes = [settings.secure]
    if prefix.startswith("__Host-"):
        fixes += [settings.path, settings.domain]
    if prefix in HTTP_ONLY_PREFIXES:
        fixes.append(settings.http_only)
    return (
        f"Set {', '.join(fixes)} (and serve the site over HTTPS), or choose a {settings.name} without the prefix "
        f"{prefix!r}."
    )
