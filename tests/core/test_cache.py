"""The per-process cache: one construction per configuration, shared across threads, clearable."""

from __future__ import annotations

import itertools
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from blake2sign_web import (
    SerializerSigner,
    Signer,
    URLSigner,
    cached,
    clear_signer_cache,
    get_raw_signer,
    get_signer,
    get_url_signer,
    signer_cache_info,
)
from blake2sign_web.signing import cache as signer_cache

SECRET = "a test secret, long enough: 0123456789"
OTHER = "another test secret: 0123456789"
OLD = "the old secret, being rotated out"
OLDER = "an even older secret, retired"


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    clear_signer_cache()
    yield
    clear_signer_cache()


def test_same_arguments_same_instance() -> None:
    before = signer_cache_info().constructed
    first = get_signer(SECRET, purpose="p", max_age=60, fallbacks=[OLD, OLDER])
    for _ in range(100):
        assert get_signer(SECRET, max_age=60, purpose="p", fallbacks=(OLD, OLDER)) is first
    assert signer_cache_info().constructed == before + 1
    assert isinstance(first, SerializerSigner)


def test_different_arguments_different_instances() -> None:
    a = get_signer(SECRET, purpose="p")
    assert get_signer(SECRET, purpose="q") is not a
    assert get_signer(OTHER, purpose="p") is not a
    assert get_signer(SECRET, purpose="p", hasher="blake3") is not a
    assert get_raw_signer(SECRET, purpose="p") is not a
    assert type(get_raw_signer(SECRET, purpose="p")) is Signer
    assert signer_cache_info().size == 5


def test_clear_forces_a_new_construction() -> None:
    first = get_signer(SECRET, purpose="p")
    clear_signer_cache()
    assert signer_cache_info().size == 0
    assert get_signer(SECRET, purpose="p") is not first


def test_concurrent_first_calls_construct_once() -> None:
    before = signer_cache_info().constructed
    barrier = threading.Barrier(8)
    results: list[SerializerSigner] = []

    def worker() -> None:
        barrier.wait()
        results.append(get_signer("a secret for the threaded test", purpose="p"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(r) for r in results}) == 1
    assert signer_cache_info().constructed == before + 1


def test_bad_configuration_is_not_cached_and_still_raises() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="hasher"):
            get_signer(SECRET, purpose="p", hasher="md5")
    assert signer_cache_info().size == 0


def test_unhashable_option_gets_a_clear_error() -> None:
    with pytest.raises(TypeError, match="hashable"):
        cached(SerializerSigner, SECRET, purpose="p", max_age=[1])


def test_cached_signers_work_across_threads() -> None:
    signer = get_signer(SECRET, purpose="p", compression_threshold=0)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(200):
                value = {"n": n, "i": i, "pad": "x" * (i % 50)}
                assert signer.loads(signer.dumps(value)) == value
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


CONSTRUCTORS: list[Callable[..., Signer]] = [
    get_signer,
    get_raw_signer,
    get_url_signer,
    lambda secret, **options: cached(Signer, secret, **options),
    lambda secret, **options: cached(URLSigner, secret, **options),
    SerializerSigner,
    Signer,
    URLSigner,
]


@pytest.mark.parametrize("construct", CONSTRUCTORS)
@pytest.mark.parametrize("single", ["old", "the old secret, being rotated out", b"the old secret, being rotated out"])
def test_a_single_fallback_secret_is_refused_by_every_constructor(
    construct: Callable[..., Signer], single: Any
) -> None:
    for _ in range(2):  # and the refusal is not cached
        with pytest.raises(TypeError, match="not a single secret"):
            construct(SECRET, purpose="p", fallbacks=single)
    assert signer_cache_info().size == 0


@pytest.mark.parametrize("construct", CONSTRUCTORS)
@pytest.mark.parametrize(
    ("secret", "fallbacks", "named"), [("secret", (), "secret"), (SECRET, ["old"], r"fallbacks\[0\]")]
)
def test_short_secrets_are_refused_by_every_constructor(
    construct: Callable[..., Signer], secret: str, fallbacks: Any, named: str
) -> None:
    with pytest.raises(ValueError, match=rf"{named} is \d bytes long.*token_urlsafe"):
        construct(secret, purpose="p", fallbacks=fallbacks)


def test_iterables_of_fallbacks_are_one_configuration() -> None:
    before = signer_cache_info().constructed
    first = get_signer(SECRET, purpose="p", fallbacks=[OLD, OLDER])
    assert get_signer(SECRET, purpose="p", fallbacks=(OLD, OLDER)) is first
    assert get_signer(SECRET, purpose="p", fallbacks=iter([OLD, OLDER])) is first
    assert get_signer(SECRET, purpose="p", fallbacks=(s for s in (OLD, OLDER))) is first
    assert signer_cache_info().constructed == before + 1
    assert signer_cache_info().size == 1


def test_ignore_given_as_a_list_is_the_same_configuration() -> None:
    first = get_url_signer(SECRET, purpose="p", ignore=("utm_*",))
    assert get_url_signer(SECRET, purpose="p", ignore=["utm_*"]) is first


def test_distinct_configurations_stay_bounded_and_warn_once() -> None:
    before = signer_cache_info()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for user in range(60_000):
            get_signer(SECRET, purpose=f"invite:{user}")
    info = signer_cache_info()
    assert info.size == signer_cache.MAX_SIGNERS == info.max_size == 256
    assert info.constructed == before.constructed + 60_000
    assert info.evicted == before.evicted + 60_000 - 256
    assert len(signer_cache._fast) <= 256 * signer_cache.MAX_SPELLINGS
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1
    assert "MAX_SIGNERS=256" in messages[0]
    assert "bind=" in messages[0]
    assert "purpose per user" in messages[0]


def test_the_newest_configurations_are_kept_and_the_oldest_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signer_cache, "MAX_SIGNERS", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        signers = [get_signer(SECRET, purpose=f"p{i}") for i in range(5)]
        assert signer_cache_info().size == 3
        assert get_signer(SECRET, purpose="p4") is signers[4]
        assert get_signer(SECRET, purpose="p2") is signers[2]
        assert get_signer(SECRET, purpose="p0") is not signers[0]  # evicted, built again
    assert set(signer_cache._fast.values()) == {e.signer for e in signer_cache._entries.values()}


def test_many_spellings_of_one_configuration_do_not_grow_the_cache() -> None:
    options = {"purpose": "p", "max_age": 60, "hasher": "blake2b", "compression_threshold": 128}
    first = get_signer(SECRET, **options)
    for order in itertools.permutations(options.items()):
        assert get_signer(SECRET, **dict(order)) is first
    for _ in range(1000):  # a new generator each call: a new "as given" key each time
        assert get_signer(SECRET, fallbacks=(s for s in ()), **options) is not None
    assert signer_cache_info().size == 2
    assert len(signer_cache._fast) <= 2 * signer_cache.MAX_SPELLINGS


def test_cache_info_is_safe_while_other_threads_insert() -> None:
    errors: list[BaseException] = []
    sizes: list[int] = []
    done = threading.Event()
    barrier = threading.Barrier(5)

    def insert(worker: int) -> None:
        barrier.wait()
        try:
            for i in range(3000):
                get_raw_signer(SECRET, purpose=f"w{worker}:{i}")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    def read() -> None:
        barrier.wait()
        while not done.is_set():
            try:
                sizes.append(signer_cache_info().size)
            except BaseException as error:  # "dictionary changed size during iteration", before the fix
                errors.append(error)

    inserters = [threading.Thread(target=insert, args=(n,)) for n in range(4)]
    reader = threading.Thread(target=read)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for thread in [*inserters, reader]:
            thread.start()
        for thread in inserters:
            thread.join()
        done.set()
        reader.join()
    assert errors == []
    assert sizes
    assert max(sizes) <= signer_cache.MAX_SIGNERS == signer_cache_info().size
