"""One signer per configuration per process.

Building a signer derives keys and checks options; a web process that did it per
request would spend more time there than signing. ``get_signer`` and its siblings
return the same instance for the same arguments, build each one once even under
concurrent first calls, and can be cleared when settings change (tests, Django's
``setting_changed``).
"""

from __future__ import annotations

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
    #: Signers held now.
    size: int


def get_signer(secret: str | bytes, **options: Any) -> SerializerSigner:
    """The cached ``SerializerSigner(secret, **options)``."""
    return cached(SerializerSigner, secret, **options)


def get_raw_signer(secret: str | bytes, **options: Any) -> Signer:
    """The cached ``Signer(secret, **options)``."""
    return cached(Signer, secret, **options)


def cached(cls: type[S], secret: str | bytes, **options: Any) -> S:
    """Return the one instance of ``cls(secret, **options)`` in this process."""
    if "fallbacks" in options:
        options["fallbacks"] = tuple(options["fallbacks"])
    key = (cls, secret, *sorted(options.items()))
    try:
        instance = _instances.get(key)
    except TypeError:
        raise TypeError("signer options must be hashable (use tuples, not lists)") from None
    if instance is None:
        global _constructed
        with _lock:
            instance = _instances.get(key)
            if instance is None:
                instance = cls(secret, **options)
                _instances[key] = instance
                _constructed += 1
    return instance  # type: ignore[return-value]


def clear_signer_cache() -> None:
    """Forget every cached signer; the next call for each configuration builds it anew."""
    with _lock:
        _instances.clear()


def signer_cache_info() -> CacheInfo:
    return CacheInfo(_constructed, len(_instances))
