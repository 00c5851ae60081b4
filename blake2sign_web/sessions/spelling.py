"""What the option schema (``options``) is made of: an option, a problem with one, and a framework's spelling.

Apart from the schema so that the schema reads as its table and its rules; ``options`` exports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


@dataclass(frozen=True)
class Option:
    """One option: its default, its rule, its name in each framework (None: the framework has no such option)."""

    key: str
    default: Any
    #: A Django setting (``SESSION_COOKIE_SECURE``) or a key of ``BLAKE2SIGN_WEB['SESSIONS']`` (``HASHER``).
    django: str | None
    #: The Django system check that reports it: ``E002`` is ``blake2sign_web.E002``.
    check: str
    valid: Callable[[Any], bool] = lambda value: True
    #: What a valid value is, after the option's name: "must be True or False".
    must: str = ""
    #: SessionMiddleware's argument; "": the key.
    starlette: str | None = ""
    #: What Starlette's constructor raises for it.
    error: type[Exception] = ValueError
    #: A rule worded by the core module that owns it: (value, name) -> problem or None.
    problem: Callable[[Any, str], str | None] | None = None
    #: Flask's config key (``PERMANENT_SESSION_LIFETIME``) or key of ``BLAKE2SIGN_WEB``; "": the Django name.
    flask: str | None = ""

    @property
    def check_id(self) -> str:
        return f"blake2sign_web.{self.check}"


class Problem(NamedTuple):
    """One problem: the option it is reported under, the message (no final stop) and how each framework says it."""

    key: str
    message: str
    check_id: str
    error: type[Exception] = ValueError
    #: The fix, where the framework reports it apart from the message (a Django check's hint).
    hint: str = ""


class SecretSpelling(NamedTuple):
    """How a framework names its secrets, which types it takes, and how its users make one."""

    secret: str
    fallback: str
    types: tuple[type, ...]
    type_names: str = "a str or bytes"
    hint: str = "e.g. from secrets.token_urlsafe(50)"
    #: The fallbacks as a whole, set as a list of one old secret: ``fallbacks=[old_key]``.
    fallbacks: str = "fallbacks=[old_key]"


@dataclass(frozen=True)
class Spelling:
    """How one framework's users write the options: the names and fixes every message uses."""

    #: Which of an Option's names the user writes: "starlette", "django" or "flask".
    framework: str
    #: Where an option that is no setting of its own lives (Django: ``BLAKE2SIGN_WEB['SESSIONS']``).
    section: str = ""
    #: The verb of a fix: "pass" (an argument) or "set" (a setting).
    verb: str = "pass"
    #: How the names of options that are settings of their own begin (Django: ``SESSION_``); the rest are in section.
    own_settings: str | tuple[str, ...] = ""
    #: What a valid value is, where this framework's messages had other words before the schema, which its users
    #: (and their tests) match (key: Option.must).
    wordings: Mapping[str, str] = field(default_factory=dict)
    #: Fixes that are more than one option set to one value (key: the fix as written).
    fixes: Mapping[str, str] = field(default_factory=dict)
    #: The secret and each fallback (``{}``: its index), the types a secret may have, and how to make one.
    secrets: SecretSpelling = field(default_factory=lambda: SecretSpelling("secret", "fallbacks[{}]", (str, bytes)))

    def written(self, option: Option) -> str:
        """The option's name as written in the user's own code (``https_only``, ``HASHER``)."""
        written: str | None
        if self.framework == "starlette":
            written = option.starlette or option.key
        else:
            written = (option.flask or option.django) if self.framework == "flask" else option.django
        return written or option.key

    def in_section(self, option: Option) -> bool:
        """Whether the option is a key of the framework's section (``HASHER``), not a setting of its own."""
        return bool(self.section) and not (self.own_settings and self.written(option).startswith(self.own_settings))

    def name(self, option: Option) -> str:
        """The option's full name: ``same_site``, ``SESSION_COOKIE_SAMESITE``, ``...['SESSIONS']['FORMAT']``."""
        written = self.written(option)
        return f"{self.section}[{written!r}]" if self.in_section(option) else written

    def setting(self, option: Option, value: Any) -> str:
        """The option set to ``value`` as the user writes it: ``https_only=True``, ``SESSION_COOKIE_SECURE = True``."""
        if option.key in self.fixes:
            return self.fixes[option.key]
        if self.framework == "starlette":
            return f"{self.written(option)}={value!r}"
        return f"{self.written(option)} = " + (f'"{value}"' if isinstance(value, str) else repr(value))

    def needs(self, option: Option, value: Any) -> str:
        """What another option needs, in a sentence: ``format=2``, ``FORMAT 2``."""
        if self.framework == "starlette" or self.name(option) == self.written(option):
            return self.setting(option, value)
        return f"{self.written(option)} {value!r}"

    def turned_on(self, option: Option) -> str:
        """A flag that is on, as the subject of a sentence: ``encrypt=True``, ``...['SESSIONS']['ENCRYPT']``."""
        return self.setting(option, True) if self.framework == "starlette" else self.name(option)

    def must(self, option: Option) -> str:
        return self.wordings.get(option.key, option.must)
