"""How long the bounded attack and load tests run: short in CI, long with ``pytest --long``.

``pytest --long`` (or ``python3 scripts/test.py --long``) sets ``BLAKE2SIGN_LONG=1`` before any test module is
imported, so module-level settings may call these functions. ``BLAKE2SIGN_SCALE`` (a factor, default 1)
shortens the CI run where volume is not the point: tox's version matrix sets it, since the main environment
already runs the full counts and durations.
"""

from __future__ import annotations

import os

#: How many times the long run multiplies the example counts and durations.
LONG_FACTOR = 10


def is_long() -> bool:
    return os.environ.get("BLAKE2SIGN_LONG") == "1"


def scale() -> float:
    """The factor applied to every count and duration: 10 for ``--long``, else ``BLAKE2SIGN_SCALE`` or 1."""
    if is_long():
        return LONG_FACTOR
    value = os.environ.get("BLAKE2SIGN_SCALE", "1")
    try:
        factor = float(value)
    except ValueError:
        raise ValueError(f"BLAKE2SIGN_SCALE must be a number such as 0.25, not {value!r}") from None
    if not 0 < factor <= LONG_FACTOR:
        raise ValueError(f"BLAKE2SIGN_SCALE must be in (0, {LONG_FACTOR}], not {value!r}")
    return factor


def examples(ci: int) -> int:
    """Hypothesis examples for a property: ``ci`` in CI, ten times that in the long run."""
    return max(1, round(ci * scale()))


def seconds(ci: float, long: float | None = None) -> float:
    """A bounded duration: ``ci`` seconds in CI, ``long`` (default ten times ``ci``) in the long run."""
    if is_long() and long is not None:
        return long
    return ci * scale()
