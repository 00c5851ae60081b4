"""The per-process cache: one construction per configuration, shared across threads, clearable."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from blake2sign_web import (
    SerializerSigner,
    Signer,
    cached,
    clear_signer_cache,
    get_raw_signer,
    get_signer,
    signer_cache_info,
)


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    clear_signer_cache()
    yield
    clear_signer_cache()


def test_same_arguments_same_instance() -> None:
    before = signer_cache_info().constructed
    first = get_signer("secret", purpose="p", max_age=60, fallbacks=["a", "b"])
    for _ in range(100):
        assert get_signer("secret", max_age=60, purpose="p", fallbacks=("a", "b")) is first
    assert signer_cache_info().constructed == before + 1
    assert isinstance(first, SerializerSigner)


def test_different_arguments_different_instances() -> None:
    a = get_signer("secret", purpose="p")
    assert get_signer("secret", purpose="q") is not a
    assert get_signer("other", purpose="p") is not a
    assert get_signer("secret", purpose="p", hasher="blake3") is not a
    assert get_raw_signer("secret", purpose="p") is not a
    assert type(get_raw_signer("secret", purpose="p")) is Signer
    assert signer_cache_info().size == 5


def test_clear_forces_a_new_construction() -> None:
    first = get_signer("secret", purpose="p")
    clear_signer_cache()
    assert signer_cache_info().size == 0
    assert get_signer("secret", purpose="p") is not first


def test_concurrent_first_calls_construct_once() -> None:
    before = signer_cache_info().constructed
    barrier = threading.Barrier(8)
    results: list[SerializerSigner] = []

    def worker() -> None:
        barrier.wait()
        results.append(get_signer("threaded", purpose="p"))

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
            get_signer("secret", purpose="p", hasher="md5")
    assert signer_cache_info().size == 0


def test_unhashable_option_gets_a_clear_error() -> None:
    with pytest.raises(TypeError, match="hashable"):
        cached(SerializerSigner, "secret", purpose="p", max_age=[1])


def test_cached_signers_work_across_threads() -> None:
    signer = get_signer("secret", purpose="p", compression_threshold=0)
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
