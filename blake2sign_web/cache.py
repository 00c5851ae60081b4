"""One signer per configuration per process.

Building a signer derives keys and checks options; a web process that did it per
request would spend more time there than signing. ``get_signer`` and its siblings
return the same instance for the same arguments, build each one once even under
concurrent first calls, and can be cleared when settings change (tests, Django's
``setting_changed``).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, NamedTuple, TypeVar

from .serializer import SerializerSigner
from .signer import Signer

S = TypeVar("S", bound=Signer)

_lock = threading.Lock()
_instances: dict[tuple[Any, ...], Signer] = {}
_constructed = 0


class CacheInfo(NamedTuple):
    #: Signers built since the process started (never reset by clearing).
    constructed: int
    #: Distinct signers held now.
    size: int


def get_signer(secret: str | bytes, **options: Any) -> SerializerSigner:
    """The cached ``SerializerSigner(secret, **options)``."""
    return cached(SerializerSigner, secret, **options)


def get_raw_signer(secret: str | bytes, **options: Any) -> Signer:
    """The cached ``Signer(secret, **options)``."""
    return cached(Signer, secret, **options)


def cached(cls: type[S], secret: str | bytes, **options: Any) -> S:
    """Return the one instance of ``cls(secret, **options)`` in this process."""
    # Fast path: the arguments exactly as given. Per-request callers pass the same
    # arguments in the same order every time, so this is one tuple and one dict look-up.
    try:
        instance = _instances.get((cls, secret, *options.items()))
    except TypeError:  # an unhashable option, such as fallbacks given as a list
        instance = None
    if instance is None:
        instance = _construct(cls, secret, options)
    return instance  # type: ignore[return-value]


def _construct(cls: type[S], secret: str | bytes, options: dict[str, Any]) -> S:
    """Build (or find under its canonical key) the instance, and remember it as asked for."""
    global _constructed
    given = dict(options)
    if "fallbacks" in options:
        options["fallbacks"] = tuple(options["fallbacks"])
    canonical = (cls, secret, *sorted(options.items()))
    try:
        hash(canonical)
    except TypeError:
        raise TypeError("signer options must be hashable (use tuples, not lists)") from None
    with _lock:
        instance = _instances.get(canonical)
        if instance is None:
            instance = cls(secret, **options)
            _instances[canonical] = instance
            _constructed += 1
        as_given = (cls, secret, *given.items())
        with contextlib.suppress(TypeError):  # unhashable as given: only the canonical key is stored
            _instances[as_given] = instance
    return instance  # type: ignore[return-value]


def clear_signer_cache() -> None:
    """Forget every cached signer; the next call for each configuration builds it anew."""
    with _lock:
        _instances.clear()


def signer_cache_info() -> CacheInfo:
    return CacheInfo(_constructed, len({id(signer) for signer in _instances.values()}))
