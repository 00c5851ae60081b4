"""Which Python values a token's JSON carries, and JSON text for the values orjson refuses.

Both signers (``serializer.py``: signed and encrypted tokens) refuse what Python's json module refuses, as
Django's and Starlette's session serializers do, and write with Python's json what orjson cannot.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from .exceptions import NotJSON

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
