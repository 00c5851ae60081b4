"""The shipped zstd dictionaries: pinned bytes, lookup by id, round trips, and reproducible training."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest
import zstandard

from blake2sign_web import dictionaries

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"

#: A shipped dictionary never changes: tokens name it by id. Add a line per new id; never edit one.
PINNED = {
    1: "0682bbab954a10f731ee6be6a697325e6fcef54097d62614c513d6d155ac2ed0",
}
#: The libzstd the shipped dictionary was trained with; another version may train other bytes.
TRAINED_WITH = (1, 5, 7)
FRAME = {
    "format": zstandard.FORMAT_ZSTD1_MAGICLESS,
    "write_content_size": True,
    "write_checksum": False,
    "write_dict_id": False,
}


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = load_script("session_corpus")


def compressor(dictionary_id: int, level: int = 3) -> zstandard.ZstdCompressor:
    params = zstandard.ZstdCompressionParameters.from_level(level, **FRAME)
    return zstandard.ZstdCompressor(
        dict_data=dictionaries.for_compression(dictionary_id, level), compression_params=params
    )


def decompressor(dictionary_id: int | None) -> zstandard.ZstdDecompressor:
    if dictionary_id is None:
        return zstandard.ZstdDecompressor(format=zstandard.FORMAT_ZSTD1_MAGICLESS)
    return zstandard.ZstdDecompressor(
        dict_data=dictionaries.load(dictionary_id), format=zstandard.FORMAT_ZSTD1_MAGICLESS
    )


def test_every_shipped_dictionary_is_pinned() -> None:
    assert set(dictionaries.FILES) == set(PINNED)
    for dictionary_id, digest in PINNED.items():
        assert hashlib.sha256(dictionaries.data(dictionary_id)).hexdigest() == digest


def test_session_dictionary_is_id_1_and_small_enough_to_ship() -> None:
    assert dictionaries.SESSION == 1
    dictionary = dictionaries.load(dictionaries.SESSION)
    assert isinstance(dictionary, zstandard.ZstdCompressionDict)
    assert len(dictionary) == len(dictionaries.data(1)) <= 16 * 1024
    assert dictionary.dict_id() != 0  # a trained dictionary, with entropy tables, not raw content


def test_dictionaries_are_built_once() -> None:
    assert dictionaries.load(1) is dictionaries.load(1)
    assert dictionaries.for_compression(1, 3) is dictionaries.for_compression(1, 3)
    assert dictionaries.for_compression(1, 1) is not dictionaries.for_compression(1, 3)


@pytest.mark.parametrize("bad", [0, 2, -1, 10**6, True, "1", 1.0, None])
def test_unknown_id_is_a_value_error_naming_the_shipped_ids(bad: object) -> None:
    for lookup in (dictionaries.load, dictionaries.data, lambda i: dictionaries.for_compression(i, 3)):
        with pytest.raises(ValueError, match=r"unknown dictionary id .*; shipped ids: 1"):
            lookup(bad)  # type: ignore[operator]


@pytest.mark.parametrize("kind", list(corpus.KINDS))
@pytest.mark.parametrize("level", [1, 3, 19])
def test_corpus_samples_round_trip(kind: str, level: int) -> None:
    samples = corpus.payloads(kind, seed=7, count=40, pools="evaluation")
    compress = compressor(1, level).compress
    decompress = decompressor(1).decompress
    for sample in samples:
        frame = compress(sample)
        assert zstandard.get_frame_parameters(frame, format=zstandard.FORMAT_ZSTD1_MAGICLESS).content_size == len(
            sample
        )
        assert decompress(frame) == sample


def test_the_dictionary_halves_a_login_session() -> None:
    """Sessions it never saw (other seed, other names and backends) still shrink by more than half."""
    samples = corpus.payloads("django_login", seed=11, count=200, pools="evaluation")
    plain = zstandard.ZstdCompressor(compression_params=zstandard.ZstdCompressionParameters.from_level(3, **FRAME))
    with_dictionary = sum(len(compressor(1).compress(sample)) for sample in samples)
    without = sum(len(plain.compress(sample)) for sample in samples)
    assert with_dictionary < 0.6 * without
    assert with_dictionary < 0.45 * sum(map(len, samples))


def test_frames_cannot_be_read_without_their_dictionary() -> None:
    sample = corpus.payloads("django_login", seed=3, count=1)[0]
    with pytest.raises(zstandard.ZstdError):
        decompressor(None).decompress(compressor(1).compress(sample))


def test_corpus_is_deterministic_per_seed() -> None:
    assert corpus.payloads("mix", seed=5, count=50) == corpus.payloads("mix", seed=5, count=50)
    assert corpus.payloads("mix", seed=5, count=50) != corpus.payloads("mix", seed=6, count=50)


def test_evaluation_pools_share_no_values_with_training() -> None:
    for field in corpus.Pools.__dataclass_fields__:
        training, evaluation = getattr(corpus.TRAINING, field), getattr(corpus.EVALUATION, field)
        assert not set(training) & set(evaluation), field


def test_django_sessions_have_djangos_shapes() -> None:
    """Login keys in auth.login's order; _messages exactly as the messages framework encodes it."""
    from django.contrib.messages.storage.cookie import MessageDecoder, MessageEncoder

    for session in corpus.sessions("django_login_messages", seed=2, count=100):
        assert list(session) == ["_auth_user_id", "_auth_user_backend", "_auth_user_hash", "_messages"]
        assert len(session["_auth_user_hash"]) in (40, 64)
        messages = json.loads(session["_messages"], cls=MessageDecoder)
        assert MessageEncoder().encode(messages) == session["_messages"]
        assert all(message.level in (10, 20, 25, 30, 40) for message in messages)


def test_oauth_state_has_authlibs_shape() -> None:
    states = [
        s for s in corpus.sessions("starlette_session", seed=4, count=400) if any(k.startswith("_state_") for k in s)
    ]
    assert states
    for session in states:
        key = next(k for k in session if k.startswith("_state_"))
        provider, state = key.removeprefix("_state_").split("_", 1)
        entry = session[key]
        assert list(entry) == ["data", "exp"]
        assert isinstance(entry["exp"], float)
        assert next(iter(entry["data"])) == "redirect_uri"
        assert list(entry["data"])[-1] == "url"
        assert f"state={state}" in entry["data"]["url"]
        assert provider in corpus.TRAINING.providers


def test_payloads_are_what_orjson_writes() -> None:
    sessions = corpus.sessions("mix", seed=8, count=100)
    assert corpus.payloads("mix", seed=8, count=100) == [orjson.dumps(session) for session in sessions]


def test_training_script_reproduces_the_shipped_dictionary(tmp_path: Path) -> None:
    if zstandard.ZSTD_VERSION != TRAINED_WITH:
        pytest.skip(f"trained with libzstd {TRAINED_WITH}; this zstandard bundles {zstandard.ZSTD_VERSION}")
    output = tmp_path / "session-1.zdict"
    subprocess.run(
        [sys.executable, str(SCRIPTS / "train_dictionary.py"), "--output", str(output)], check=True, capture_output=True
    )
    assert output.read_bytes() == dictionaries.data(1)
