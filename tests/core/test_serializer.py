"""SerializerSigner: values, timestamps, expiry, compression, limits, rotation and bad input."""

from __future__ import annotations

import base64
import json
import math
import random
from datetime import timedelta
from typing import Any

import pytest

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired
from blake2sign_web.serializer import CLOCK_SKEW

NOW = 1_800_000_000.0


class Clock:
    """A settable clock, so expiry is tested without sleeping."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(clock: Clock | None = None, **options: Any) -> SerializerSigner:
    return SerializerSigner("secret", purpose="test", clock=clock or Clock(), **options)


SESSION = {
    "_auth_user_id": "42",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
    "cart": [{"sku": "A-100", "qty": 2}],
}


@pytest.mark.parametrize("hasher", ["blake2b", "blake2s", "blake3"])
@pytest.mark.parametrize("compression", ["zstd", None])
def test_round_trip(hasher: str, compression: str | None) -> None:
    signer = make(hasher=hasher, compression=compression, compression_threshold=0)
    for value in (SESSION, [], {}, None, True, 0, -1.5, "text", "é☃", [1, [2, [3]]], 2**63 - 1):
        assert signer.loads(signer.dumps(value)) == value


def test_non_json_values_fail_at_dumps_with_type_error() -> None:
    signer = make()
    for value in ({1: "int key"}, {"s": {1, 2}}, object(), b"bytes", 2**70, {"f": math.sqrt}):
        with pytest.raises(TypeError):
            signer.dumps(value)


def test_smart_compression_only_when_large_enough_and_worth_it() -> None:
    signer = make(compression_threshold=128)
    small = signer.dumps({"a": 1})
    assert small[0] == "0"  # uncompressed, no expiry
    repetitive = {"items": ["same text again"] * 50}
    token = signer.dumps(repetitive)
    assert token[0] == "1"  # compressed
    assert len(token) < len(make(compression=None).dumps(repetitive)) / 3
    assert signer.loads(token) == repetitive
    random_like = {"k": base64.b64encode(random.Random(1).randbytes(150)).decode()}
    assert signer.dumps(random_like)[0] == "0"  # compression would not gain enough
    assert make(compression=None).dumps(repetitive)[0] == "0"


def test_default_threshold_leaves_session_sized_payloads_uncompressed() -> None:
    token = make().dumps(SESSION)
    assert token[0] == "0"
    assert make().dumps({"items": ["same text again"] * 50})[0] == "1"


def test_max_age_from_constructor_and_from_loads() -> None:
    clock = Clock()
    signer = make(clock, max_age=60)
    token = signer.dumps("v")
    clock.now += 60
    assert signer.loads(token) == "v"
    clock.now += 1
    with pytest.raises(SignatureExpired) as caught:
        signer.loads(token)
    assert caught.value.expired_at == int(NOW) + 60
    assert caught.value.expired_at_datetime.timestamp() == int(NOW) + 60
    assert signer.loads(token, max_age=timedelta(minutes=5)) == "v"
    with pytest.raises(SignatureExpired):
        make(clock).loads(token, max_age=30)


def test_expires_in_is_signed_inside_the_token() -> None:
    clock = Clock()
    signer = make(clock)
    token = signer.dumps({"a": 1}, expires_in=timedelta(seconds=10))
    loaded = signer.load_token(token)
    assert loaded.expires_at == int(NOW) + 10
    assert loaded.issued_at == int(NOW)
    clock.now += 9.5
    assert signer.loads(token) == {"a": 1}
    clock.now += 0.5
    with pytest.raises(SignatureExpired) as caught:
        signer.loads(token)
    assert caught.value.expired_at == int(NOW) + 10


def test_expiry_and_max_age_both_apply() -> None:
    clock = Clock()
    signer = make(clock, max_age=5)
    token = signer.dumps(1, expires_in=100)
    clock.now += 6
    with pytest.raises(SignatureExpired):
        signer.loads(token)


def test_future_tokens_beyond_clock_skew_rejected() -> None:
    clock = Clock()
    future = make(Clock(NOW + CLOCK_SKEW)).dumps("x")
    assert make(clock).loads(future) == "x"
    far_future = make(Clock(NOW + CLOCK_SKEW + 2)).dumps("x")
    with pytest.raises(BadSignature, match="future"):
        make(clock).loads(far_future)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), timedelta(0), "10", True, 2**32])
def test_bad_durations_rejected(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        make().dumps(1, expires_in=bad)
    with pytest.raises((ValueError, TypeError)):
        make(max_age=bad)


def test_fractional_durations_round_up() -> None:
    clock = Clock()
    token = make(clock).dumps(1, expires_in=0.2)
    assert make(clock).load_token(token).expires_at == int(NOW) + 1


def test_rotation_reports_fallback_use() -> None:
    old = SerializerSigner("old", purpose="p")
    new = SerializerSigner("new", purpose="p", fallbacks=["old"])
    assert new.load_token(old.dumps(1)).used_fallback is True
    assert new.load_token(new.dumps(1)).used_fallback is False
    with pytest.raises(BadSignature):
        old.loads(new.dumps(1))


def test_serializer_and_raw_signer_tokens_are_not_interchangeable() -> None:
    from blake2sign_web import Signer

    raw = Signer("secret", purpose="p").sign(b"1")
    with pytest.raises(BadSignature):
        SerializerSigner("secret", purpose="p").loads(raw)
    value = SerializerSigner("secret", purpose="p").dumps(1)
    with pytest.raises(BadSignature):
        Signer("secret", purpose="p").unsign(value)


def test_token_size_limit_enforced_both_ways() -> None:
    signer = make(max_token_length=200, compression=None)
    with pytest.raises(ValueError, match="exceeds max_token_length=200"):
        signer.dumps("x" * 300)
    big = make(compression=None).dumps("x" * 300)
    with pytest.raises(BadSignature, match="too long"):
        signer.loads(big)


def test_decompressed_size_is_bounded() -> None:
    bomb = {"z": "0" * 200_000}
    token = make(max_decompressed_size=300_000).dumps(bomb)
    assert len(token) < 1000
    assert token[0] == "1"
    with pytest.raises(BadSignature, match="over the limit"):
        make(max_decompressed_size=100_000).loads(token)
    with pytest.raises(ValueError, match="max_decompressed_size"):
        make(max_decompressed_size=100).dumps(bomb)


def test_uncompressed_payload_size_is_bounded_too() -> None:
    token = make(compression=None).dumps("x" * 1000)
    with pytest.raises(BadSignature):
        make(compression=None, max_decompressed_size=500).loads(token)


def forge(signer: SerializerSigner, marker: bytes, body: bytes) -> str:
    """A correctly MACed token with a chosen body: what only a key holder could make."""
    encoded = base64.urlsafe_b64encode(body).rstrip(b"=")
    return signer._seal(marker + encoded)


@pytest.mark.parametrize(
    ("marker", "body"),
    [
        (b"4", b"\x00" * 8),  # unknown marker
        (b"a", b"\x00" * 8),
        (b"0", b"\x00\x00"),  # too short for the timestamp
        (b"2", b"\x00" * 6),  # too short for the expiry
        (b"0", int(NOW).to_bytes(4, "big") + b"{not json"),
        (b"1", int(NOW).to_bytes(4, "big") + b"not zstd at all"),
        (b"0", int(NOW).to_bytes(4, "big") + b"\xff\xfe"),
    ],
)
def test_verified_but_malformed_bodies_are_bad_signature(marker: bytes, body: bytes) -> None:
    signer = make()
    with pytest.raises(BadSignature):
        signer.loads(forge(signer, marker, body))


def test_nothing_is_decoded_before_verification() -> None:
    # A forged compression bomb with a wrong MAC must fail on the MAC, not in zstd.
    signer = make()
    token = signer.dumps({"z": "0" * 100_000})
    tampered = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(BadSignature, match="signature does not match"):
        signer.loads(tampered)


def test_json_semantics_documented_edge_cases() -> None:
    signer = make()
    # orjson writes NaN as null; the value that comes back is what JSON can carry.
    assert signer.loads(signer.dumps([float("nan")])) == [None]
    assert json.loads(json.dumps(signer.loads(signer.dumps({"a": [1, "b"]})))) == {"a": [1, "b"]}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"compression": "gzip"}, "compression must be 'zstd' or None"),
        ({"compression_threshold": -1}, "compression_threshold"),
        ({"max_decompressed_size": 0}, "max_decompressed_size"),
        ({"clock": 5}, "clock must be a callable"),
        ({"max_age": "1h"}, "max_age must be seconds"),
    ],
)
def test_bad_configuration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        SerializerSigner("secret", purpose="p", **kwargs)
