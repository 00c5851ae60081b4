"""One signer per configuration per process.

Building a signer derives keys and checks options; a web process that did it per request would spend more
time there than signing. ``get_signer`` and its siblings return the same instance for the same arguments,
build each one once even under concurrent first calls, and can be cleared when settings change. At most
``MAX_SIGNERS`` configurations are kept (docs/core.md, "The cache: build each signer once per process").
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from typing import Any, NamedTuple, TypeVar

from .keys import fallback_secrets
from .serializer import SerializerSigner
from .signer import Signer

S = TypeVar("S", bound=Signer)

#: Most distinct configurations kept; the least recently built or re-spelled one is evicted first.
MAX_SIGNERS = 256
#: Most spellings of the arguments ("as given" keys) remembered per configuration for the fast path.
MAX_SPELLINGS = 8

Key = tuple[Any, ...]


class _Entry(NamedTuple):
    signer: Signer
    spellings: list[Key]


_lock = threading.Lock()
#: Canonical key -> entry, oldest first. Read and written only under the lock.
_entries: OrderedDict[Key, _Entry] = OrderedDict()
#: The arguments as given -> signer. Written under the lock, read without it (one dict look-up).
_fast: dict[Key, Signer] = {}
_constructed = 0
_evicted = 0
_warned = False


class CacheInfo(NamedTuple):
    """What ``signer_cache_info()`` reports: ``constructed`` (signers built since start, never reset),
    ``size`` (held now), ``evicted`` (dropped to stay within ``max_size``) and ``max_size`` (``MAX_SIGNERS``).
    """

    constructed: int
    size: int
    evicted: int = 0
    max_size: int = MAX_SIGNERS


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
        instance = _fast.get((cls, secret, *options.items()))
    except TypeError:  # an unhashable option, such as fallbacks given as a list
        instance = None
    if instance is None:
        instance = _construct(cls, secret, options)
    return instance  # type: ignore[return-value]


def _construct(cls: type[S], secret: str | bytes, options: dict[str, Any]) -> S:
    """Build (or find under its canonical key) the instance, and remember it as asked for."""
    global _constructed, _evicted, _warned
    as_given = (cls, secret, *options.items())
    canonical = _canonical_key(cls, secret, options)
    warn = False
    with _lock:
        entry = _entries.get(canonical)
        if entry is None:
            entry = _Entry(cls(canonical[1], **dict(canonical[2:])), [])
            _entries[canonical] = entry
            _constructed += 1
            while len(_entries) > max(MAX_SIGNERS, 1):
                _, evicted = _entries.popitem(last=False)
                for spelling in evicted.spellings:
                    _fast.pop(spelling, None)
                _evicted += 1
                warn, _warned = not _warned, True
        else:
            _entries.move_to_end(canonical)
        if len(entry.spellings) < MAX_SPELLINGS and _is_hashable(as_given) and as_given not in _fast:
            entry.spellings.append(as_given)
            _fast[as_given] = entry.signer
    if warn:
        warnings.warn(
            f"blake2sign_web built more than MAX_SIGNERS={MAX_SIGNERS} signer configurations and is evicting "
            "the oldest: options that vary per call (a purpose per user, per-request max_age) build a signer "
            "per call. Keep the options fixed and put the user in the token instead (URLSigner.sign(bind=...), "
            "or the user in the payload), or raise blake2sign_web.signing.cache.MAX_SIGNERS.",
            RuntimeWarning,
            stacklevel=4,
        )
    return entry.signer  # type: ignore[return-value]


def _canonical_key(cls: type[Signer], secret: str | bytes, options: dict[str, Any]) -> Key:
    """The configuration the arguments mean: options sorted, sequences as tuples.

    ``fallbacks`` given as one str is refused here, before any look-up: turned into a
    tuple it would make every character a fallback secret.
    """
    options = dict(options)
    if "fallbacks" in options:
        options["fallbacks"] = fallback_secrets(options["fallbacks"])
    ignore = options.get("ignore")
    if ignore is not None and not isinstance(ignore, (str, bytes)):  # a str is refused by URLSigner itself
        options["ignore"] = tuple(ignore)
    if isinstance(secret, (bytearray, memoryview)):
        secret = bytes(secret)
    canonical = (cls, secret, *sorted(options.items()))
    if not _is_hashable(canonical):
        raise TypeError("signer options must be hashable (use tuples, not lists)")
    return canonical


def _is_hashable(key: Key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def clear_signer_cache() -> None:
    """Forget every cached signer; the next call for each configuration builds it anew."""
    global _warned
    with _lock:
        _entries.clear()
        _fast.clear()
        _warned = False


def signer_cache_info() -> CacheInfo:
    """How many signers were built, are held, were evicted, and the bound."""
    with _lock:
        return CacheInfo(_constructed, len(_entries), _evicted, MAX_SIGNERS)
