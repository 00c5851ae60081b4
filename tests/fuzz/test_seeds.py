"""The seed corpus is what the fuzzer starts from: every seed runs through its target, and the tokens verify.

These need no atheris (they call the targets directly), so they run in every environment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from blake2sign_web.signing.serializer import LoadedToken

from . import targets
from .libfuzzer import CORPUS


def seed_paths(target: str) -> list[Path]:
    return sorted((CORPUS / target).iterdir())


@pytest.mark.parametrize("target", list(targets.BUILDERS))
def test_every_seed_runs_through_its_target(target: str) -> None:
    seeds = seed_paths(target)
    assert 1 <= len(seeds) <= 100, "a few dozen seeds per target: regenerate with python -m tests.fuzz.make_corpus"
    assert all(path.stat().st_size <= targets.max_len(target) for path in seeds)
    run = targets.build(target)
    for path in seeds:
        run(path.read_bytes())


def test_the_token_seeds_are_valid_tokens() -> None:
    # Real tokens reach the code behind the MAC; a corpus of refused ones would fuzz the MAC check only.
    loaded = 0
    for path in seed_paths("serializer_loads"):
        data = path.read_bytes()
        signer = targets.SERIALIZERS[data[0] % len(targets.SERIALIZERS)]
        assert isinstance(signer.load_token(data[2:]), LoadedToken), path.name
        loaded += 1
    assert loaded >= 40


def test_the_link_seeds_are_valid_links() -> None:
    for path in seed_paths("url_verify"):
        data = path.read_bytes()
        signer = targets.URL_SIGNERS[data[0] % len(targets.URL_SIGNERS)]
        signer.verify_link(data[3:].decode("utf-8"), bind=targets.BINDINGS[data[1] % len(targets.BINDINGS)])
