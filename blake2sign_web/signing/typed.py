"""Typed values in JSON: what ``SerializerSigner(typed=True)`` writes and reads back as the same type, and which
Python values a token's JSON carries, with JSON text for the values orjson refuses.

``encode`` writes a type JSON lacks as a tag (a dict of one key that starts with a space: docs/format.md,
"Typed values", has the table and the reader's rules; docs/core.md, "Typed values", what comes back);
``decode`` reads it back. Both signers refuse what Python's json module refuses, as Django's and Starlette's
session serializers do, and write with Python's json what orjson cannot.
"""

from __future__ import annotations

import binascii
import json
import math
import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Final
from uuid import UUID

import pybase64

from ..exceptions import NotJSON

#: Every tag starts with this; a user's dict of one such key is escaped.
TAG_PREFIX: Final = " "
TUPLE, SET, FROZENSET, BYTES, UUID_TAG, DECIMAL = " t", " s", " f", " b", " u", " n"
DATETIME, DATE, TIME, TIMEDELTA, ESCAPE, MARKUP = " dt", " d", " tm", " td", " e", " m"


#: The types a typed token keeps beyond JSON's (and their subclasses, written as them).
HOLDS: Final = (tuple, set, frozenset, bytes, datetime, date, time, timedelta, UUID, Decimal)


class TypedNotJSON(NotJSON):
    """A value a typed token cannot hold, and where it is."""

    holder = "a typed token"
    advice = (
        "store a str, int, float, bool, None, list, dict, tuple, set, frozenset, bytes, datetime, date, "
        "time, timedelta, UUID, Decimal or Markup"
    )


class _Refused(Exception):
    """Raised from deep in ``encode``; each level adds its key on the way up, so only a refusal pays for a path."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.path: list[object] = []


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def encode(value: Any) -> Any:
    """``value`` as plain JSON values, its typed parts tagged; ``TypedNotJSON`` for anything else.

    A cycle or nesting deeper than Python's stack is a ``TypeError`` too, as in untyped tokens.
    """
    try:
        return _encode(value)
    except _Refused as refused:
        path = "".join(f"[{key!r}]" for key in reversed(refused.path))
        raise TypedNotJSON(refused.kind, path) from None
    except RecursionError:
        raise TypeError("value is not JSON serializable: it nests too deeply, or contains itself") from None


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            try:
                out[key] = item if type(item) in _SCALARS else _encode(item)
            except _Refused as refused:
                refused.path.append(key)
                raise
        if len(out) == 1:
            (only,) = out
            if isinstance(only, str) and only.startswith(TAG_PREFIX):
                return {ESCAPE: out}
        return out
    if isinstance(value, list):
        return _encode_items(value)
    if isinstance(value, tuple):
        return {TUPLE: _encode_items(value)}
    html = getattr(value, "__html__", None)
    if html is not None:  # markupsafe's Markup (Flask's flashed messages, Jinja's safe strings): read back as one
        return {MARKUP: str(html())}
    if isinstance(value, (str, int, float)):  # subclasses (bool and the exact types were handled above)
        return value
    # The base classes' methods: a subclass (pandas' Timestamp) may write what fromisoformat cannot read.
    if isinstance(value, datetime):  # before date: a datetime is a date
        text = datetime.isoformat(value)
        return {DATETIME: [text, 1] if value.fold else text}
    if isinstance(value, date):
        return {DATE: date.isoformat(value)}
    if isinstance(value, time):
        text = time.isoformat(value)
        return {TIME: [text, 1] if value.fold else text}
    if isinstance(value, timedelta):
        return {TIMEDELTA: [value.days, value.seconds, value.microseconds]}
    if isinstance(value, UUID):
        return {UUID_TAG: value.hex}
    if isinstance(value, Decimal):
        return {DECIMAL: Decimal.__str__(value)}
    if isinstance(value, bytes):
        return {BYTES: pybase64.b64encode(value).decode("ascii")}
    if isinstance(value, frozenset):
        return {FROZENSET: _encode_items(value)}
    if isinstance(value, set):
        return {SET: _encode_items(value)}
    raise _Refused(type(value).__qualname__)


def _encode_items(items: Any) -> list[Any]:
    out = []
    for index, item in enumerate(items):
        try:
            out.append(item if type(item) in _SCALARS else _encode(item))
        except _Refused as refused:
            # A set has no index to follow: the path says "an element of the set".
            refused.path.append(index if isinstance(items, (list, tuple)) else _SET_ELEMENT)
            raise
    return out


class _SetElement:
    """A set's element in a path: shown as ``[<set element>]``."""

    def __repr__(self) -> str:
        return "<set element>"


_SET_ELEMENT: Final = _SetElement()


def decode(value: Any) -> Any:
    """What ``encode`` was given, from what a JSON parser read of its output; ValueError for anything malformed.

    The parsed value is changed in place (its tags replaced) and returned: a session without typed values
    is walked once and nothing is copied. Every failure (an unknown tag, a tag of the wrong shape, an
    unhashable set element, a date out of range, nesting deeper than the stack) is a ValueError: the token
    is unreadable, not a crash.
    """
    try:
        return _untag(value)
    except (ValueError, TypeError, KeyError, ArithmeticError, RecursionError, binascii.Error) as error:
        raise ValueError(f"malformed typed value: {error!r}") from None


_CONTAINERS: Final = frozenset({dict, list})


def _untag(value: Any) -> Any:
    """``value`` with every tag in it replaced by what it stands for; containers are changed in place."""
    kind = type(value)
    if kind is dict:
        if len(value) == 1:
            for key, item in value.items():
                if key.startswith(TAG_PREFIX):
                    return _TAGS[key](item)
        for key, item in value.items():
            if type(item) in _CONTAINERS:
                untagged = _untag(item)
                if untagged is not item:
                    value[key] = untagged  # an existing key: the dict does not change size while iterated
        return value
    if kind is list:
        _untag_items(value)
    return value


def _untag_items(items: list[Any]) -> list[Any]:
    for index, item in enumerate(items):
        if type(item) in _CONTAINERS:
            untagged = _untag(item)
            if untagged is not item:
                items[index] = untagged
    return items


def _decode_items(items: Any) -> list[Any]:
    if type(items) is not list:
        raise TypeError(f"a tag holds a list here, not {type(items).__name__}")
    return _untag_items(items)


def _text(item: Any) -> str:
    if type(item) is not str:
        raise TypeError(f"a tag holds a str here, not {type(item).__name__}")
    return item


def _folded(item: Any) -> tuple[str, int]:
    """A datetime's or time's text, and its fold: ``"text"`` or ``["text", 1]``."""
    if type(item) is list and len(item) == 2 and item[1] == 1 and type(item[1]) is int:
        return _text(item[0]), 1
    return _text(item), 0


#: A UTC offset with microseconds at the end of an isoformat() text.
_FINE_OFFSET: Final = re.compile(r"([+-])(\d\d):(\d\d):(\d\d)\.(\d{6})")


def _fine_offset(text: str) -> tuple[str, timezone | None]:
    """``text`` without an offset that has microseconds, and that offset; ``(text, None)`` for any other.

    Python 3.11's fromisoformat reads ``+00:00:00.000001`` as UTC, dropping the microsecond; real zones
    never have such offsets, but a typed token promises the value back exactly.
    """
    match = _FINE_OFFSET.search(text, len(text) - 16)
    if match is None:
        return text, None
    sign, hours, minutes, seconds, micro = match.groups()
    offset = timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds), microseconds=int(micro))
    return text[: match.start()], timezone(-offset if sign == "-" else offset)


def _datetime(item: Any) -> datetime:
    text, fold = _folded(item)
    text, zone = _fine_offset(text)
    parsed = datetime.fromisoformat(text)
    return parsed.replace(fold=fold) if zone is None else parsed.replace(tzinfo=zone, fold=fold)


def _time(item: Any) -> time:
    text, fold = _folded(item)
    text, zone = _fine_offset(text)
    parsed = time.fromisoformat(text)
    return parsed.replace(fold=fold) if zone is None else parsed.replace(tzinfo=zone, fold=fold)


def _timedelta(item: Any) -> timedelta:
    if type(item) is not list or len(item) != 3 or any(type(part) is not int for part in item):
        raise TypeError("a timedelta is [days, seconds, microseconds]")
    return timedelta(days=item[0], seconds=item[1], microseconds=item[2])


def _uuid(item: Any) -> UUID:
    text = _text(item)
    if len(text) != 32:
        raise ValueError("a UUID is 32 hex digits")
    return UUID(hex=text)


def _bytes(item: Any) -> bytes:
    return pybase64.b64decode(_text(item), validate=True)


def _escaped(item: Any) -> Any:
    if type(item) is not dict or len(item) != 1:
        raise TypeError("an escaped dict has exactly one key")
    key, inner = next(iter(item.items()))
    if not key.startswith(TAG_PREFIX):
        raise ValueError("only a dict that looks like a tag is escaped")
    if type(inner) in _CONTAINERS:
        item[key] = _untag(inner)
    return item


def _markup(item: Any) -> Any:
    """Markup, from markupsafe (Jinja's and Flask's dependency): a token holding one needs it to be read."""
    try:
        from markupsafe import Markup
    except ImportError:  # pragma: no cover - markupsafe comes with every framework that writes Markup
        raise ValueError("a Markup value needs the markupsafe package") from None
    # Safe: decoded only from a verified token, so the text is what this application itself marked safe.
    return Markup(_text(item))  # noqa: S704


_TAGS: Final[dict[str, Callable[[Any], Any]]] = {
    TUPLE: lambda item: tuple(_decode_items(item)),
    SET: lambda item: set(_decode_items(item)),
    FROZENSET: lambda item: frozenset(_decode_items(item)),
    BYTES: _bytes,
    UUID_TAG: _uuid,
    DECIMAL: lambda item: Decimal(_text(item)),
    DATETIME: _datetime,
    DATE: lambda item: date.fromisoformat(_text(item)),
    TIME: _time,
    TIMEDELTA: _timedelta,
    ESCAPE: _escaped,
    MARKUP: _markup,
}


#: Exact types json writes as they are: checked by identity, the common case.
_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
#: Containers visited before giving up on a value (a cycle, or a huge one): json then decides.
_MAX_CONTAINERS: Final = 100_000


def refuse_non_json(value: Any) -> None:
    """NotJSON (a TypeError) for any value Python's json module would refuse, naming where it is.

    orjson writes datetimes, dates, UUIDs, enums and dataclasses natively, and they would read
    back as strings or dicts, far from the cause; Django's and Starlette's session serializers
    (json) raise TypeError at save instead, and so does this. Subclasses of str, int, float,
    dict, list and tuple are accepted, as json accepts them (an IntEnum is written as its int).
    Dict keys are left to the serializers (json refuses the same keys). One loop without
    recursion: about 2 us for a login-sized session on the reference machine.
    """
    pending = [value]
    visited = 0
    while pending and visited < _MAX_CONTAINERS:
        container = pending.pop()
        visited += 1
        if type(container) in _JSON_SCALARS:
            continue
        if isinstance(container, dict):
            items: Any = container.values()
        elif isinstance(container, (list, tuple)):
            items = container
        elif isinstance(container, (str, int, float)):
            continue
        else:
            raise _locate(value, ())
        for item in items:
            if type(item) not in _JSON_SCALARS:
                pending.append(item)


def _locate(value: Any, path: tuple[object, ...]) -> NotJSON:
    """The slow path, once something was refused: find the first such value and say where it is."""
    stack: list[tuple[Any, tuple[object, ...]]] = [(value, path)]
    visited = 0
    while stack and visited < _MAX_CONTAINERS:
        item, where = stack.pop()
        visited += 1
        if type(item) in _JSON_SCALARS:
            continue
        if isinstance(item, dict):
            stack.extend((child, (*where, key)) for key, child in reversed(item.items()))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, (*where, index)) for index, child in reversed(list(enumerate(item))))
        elif not isinstance(item, (str, int, float)):
            return NotJSON(type(item).__qualname__, "".join(f"[{key!r}]" for key in where), _typed_option(item))
    return NotJSON(type(value).__qualname__, "", _typed_option(value))


#: What names typed tokens for the core's own callers: adapters rename it (``NotJSON.name_option``).
TYPED_OPTION: Final = "SerializerSigner(typed=True)"


def _typed_option(value: Any) -> str | None:
    """``TYPED_OPTION`` when a typed token would keep ``value`` as itself (a datetime, a UUID...), else None."""
    from .typed import HOLDS  # here: only a refused value needs it, and typed.py is not imported with the package

    return TYPED_OPTION if isinstance(value, HOLDS) else None


def python_json(obj: Any) -> bytes:
    """``obj`` as ASCII JSON by Python's json module, NaN and infinities written as null as orjson does."""
    try:
        return json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
    except (ValueError, RecursionError) as error:  # a cycle, a NaN dict key, too deep, too many digits
        raise TypeError(f"value is not JSON serializable: {error}") from None


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None, in lists, tuples and dict values."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
