"""SerializerSigner: values, timestamps, expiry, compression, limits, rotation and bad input."""

from __future__ import annotations

import base64
import json
import math
import random
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired
from blake2sign_web.signing.serializer import CLOCK_SKEW, LAYOUTS, NO_COMPRESSION, ZSTD, ZSTD_DICTIONARY, Layout

NOW = 1_800_000_000.0
SECRET = "a test secret, long enough: 0123456789"
OLD = "the old secret, being rotated out"
NEW = "the new secret, replacing the old one"


class Clock:
    """A settable clock, so expiry is tested without sleeping."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(clock: Clock | None = None, **options: Any) -> SerializerSigner:
    return SerializerSigner(SECRET, purpose="test", clock=clock or Clock(), **options)


def layout(token: str) -> Layout:
    """What the token's marker says."""
    return LAYOUTS[token[:1].encode()]


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


def test_values_no_json_serializer_accepts_fail_at_dumps_with_type_error() -> None:
    signer = make()
    cycle: list[Any] = []
    cycle.append(cycle)
    too_deep: list[Any] = []
    for _ in range(100_000):
        too_deep = [too_deep]
    for value in (
        {"s": {1, 2}},
        object(),
        b"bytes",
        {"f": math.sqrt},
        Decimal("1.5"),
        cycle,
        too_deep,
        10**5000,  # more digits than int-to-str conversion allows
        [2**70, datetime(2026, 1, 1)],  # each needs a different serializer
        {float("nan"): 2**70},
    ):
        with pytest.raises(TypeError):
            signer.dumps(value)


BIG = 2**70  # 1180591620717411303424: orjson refuses to write it, and reads it back as a float


@pytest.mark.parametrize("compression", ["zstd", None])
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (BIG, BIG),
        (-BIG, -BIG),
        ({"n": [BIG, 1.5, "x"]}, {"n": [BIG, 1.5, "x"]}),
        ("lone \ud800 surrogate", "lone \ud800 surrogate"),
        ({"\udfff": "key"}, {"\udfff": "key"}),
        ({1: "int key", None: "none key"}, {"1": "int key", "null": "none key"}),  # as json.dumps writes them
        ((BIG, (1, 2)), [BIG, [1, 2]]),
        ({"nan": float("nan"), "inf": [float("-inf")], "big": BIG}, {"nan": None, "inf": [None], "big": BIG}),
        ({"pad": "x" * 600, "big": BIG}, {"pad": "x" * 600, "big": BIG}),
    ],
)
def test_values_only_pythons_json_accepts_round_trip_exactly(
    value: Any, expected: Any, compression: str | None
) -> None:
    signer = make(compression=compression)
    token = signer.dumps(value)
    assert layout(token).python_json  # read back with json, not orjson
    loaded = signer.loads(token)
    assert loaded == expected
    assert json.dumps(loaded) == json.dumps(expected)  # 2**70, not 1.1805916207174113e+21


def test_deep_nesting_orjson_refuses_round_trips() -> None:
    deep: list[Any] = ["bottom"]
    for _ in range(300):
        deep = [deep]
    signer = make(dictionary=1)
    token = signer.dumps(deep)
    assert layout(token).python_json
    assert layout(token).compression == ZSTD_DICTIONARY
    assert signer.loads(token) == deep


@pytest.mark.parametrize(("format", "compressed"), [(1, ZSTD), (2, ZSTD_DICTIONARY)])
def test_python_json_marker_combines_with_compression_and_expiry(format: int, compressed: int) -> None:
    signer = make(compression_threshold=0, format=format, dictionary=1)
    assert layout(signer.dumps({"items": [BIG] * 50}))[:6] == (
        format,
        32 if format == 1 else 16,
        False,
        True,
        False,
        compressed,
    )
    assert layout(signer.dumps(BIG, expires_in=10))[:6] == (
        format,
        32 if format == 1 else 16,
        True,
        True,
        False,
        NO_COMPRESSION,
    )
    token = signer.dumps({"items": [BIG] * 50}, expires_in=10)
    assert layout(token)[:6] == (format, 32 if format == 1 else 16, True, True, False, compressed)
    assert signer.loads(token) == {"items": [BIG] * 50}
    if format == 1:
        assert [signer.dumps({"items": [BIG] * 50})[0], signer.dumps(BIG, expires_in=10)[0], token[0]] == [
            "5",
            "6",
            "7",
        ]


@pytest.mark.parametrize(("format", "marker"), [(1, "0"), (2, "A")])
def test_values_orjson_writes_keep_their_marker(format: int, marker: str) -> None:
    signer = make(compression=None, format=format)
    assert signer.dumps(SESSION)[0] == marker
    assert signer.dumps(2**64 - 1)[0] == marker
    with pytest.raises(TypeError, match="value is datetime"):  # orjson would write it, and read back a str
        signer.dumps(datetime(2026, 1, 1))


@pytest.mark.parametrize(("format", "plain", "packed"), [(1, "0", "1"), (2, "A", "g")])
def test_without_a_dictionary_compression_only_when_large_enough_and_worth_it(
    format: int, plain: str, packed: str
) -> None:
    signer = make(compression_threshold=128, dictionary=None, format=format)
    small = signer.dumps({"a": 1})
    assert small[0] == plain  # uncompressed, no expiry
    repetitive = {"items": ["same text again"] * 50}
    token = signer.dumps(repetitive)
    assert token[0] == packed  # compressed
    assert len(token) < len(make(compression=None, format=format).dumps(repetitive)) / 3
    assert signer.loads(token) == repetitive
    random_like = {"k": base64.b64encode(random.Random(1).randbytes(150)).decode()}
    assert signer.dumps(random_like)[0] == plain  # compression would not gain enough
    assert make(compression=None, format=format).dumps(repetitive)[0] == plain


@pytest.mark.parametrize("format", [1, 2])
def test_default_threshold_without_a_dictionary_leaves_session_sized_payloads_uncompressed(format: int) -> None:
    assert layout(make(dictionary=None, format=format).dumps(SESSION)).compression == NO_COMPRESSION
    assert layout(make(dictionary=None, format=format).dumps({"items": ["same text again"] * 50})).compression == ZSTD


def test_with_the_dictionary_a_session_is_compressed_at_any_size_when_that_is_shorter() -> None:
    signer = make(dictionary=1)
    token = signer.dumps(SESSION)
    assert layout(token).compression == ZSTD_DICTIONARY
    assert len(token) < len(make(compression=None).dumps(SESSION)) * 0.75
    assert signer.loads(token) == SESSION
    # Too short to gain from it: left as it is, not made longer by a frame header and dictionary id.
    assert layout(signer.dumps({})).compression == NO_COMPRESSION
    assert signer.dumps({}) == make(compression=None).dumps({})
    for n in range(0, 300, 7):  # kept only when that is shorter, so never longer than without
        value = {"k": base64.b64encode(random.Random(n).randbytes(n)).decode(), "n": "ab" * (n % 13)}
        assert len(signer.dumps(value)) <= len(make(compression=None).dumps(value))
        assert signer.loads(signer.dumps(value)) == value


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
    old = SerializerSigner(OLD, purpose="p")
    new = SerializerSigner(NEW, purpose="p", fallbacks=[OLD])
    assert new.load_token(old.dumps(1)).used_fallback is True
    assert new.load_token(new.dumps(1)).used_fallback is False
    with pytest.raises(BadSignature):
        old.loads(new.dumps(1))


def test_serializer_and_raw_signer_tokens_are_not_interchangeable() -> None:
    from blake2sign_web import Signer

    raw = Signer(SECRET, purpose="p").sign(b"1")
    with pytest.raises(BadSignature):
        SerializerSigner(SECRET, purpose="p").loads(raw)
    value = SerializerSigner(SECRET, purpose="p").dumps(1)
    with pytest.raises(BadSignature):
        Signer(SECRET, purpose="p").unsign(value)


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
    assert layout(token).compression == ZSTD
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
        (b"8", b"\x00" * 8),  # unknown marker
        (b"a", b"\x00" * 8),
        (b"4", int(NOW).to_bytes(4, "big") + b"{not json"),
        (b"4", int(NOW).to_bytes(4, "big") + '"caf\u00e9"'.encode()),  # json module payloads are ASCII
        (b"4", int(NOW).to_bytes(4, "big") + b"\xff\xfe\x00\x00"),
        (b"4", int(NOW).to_bytes(4, "big") + b"9" * 5000),  # over int's max_str_digits
        (b"4", int(NOW).to_bytes(4, "big") + b"[" * 100_000 + b"]" * 100_000),  # deeper than the stack
        (b"0", int(NOW).to_bytes(4, "big") + b"[" * 100_000 + b"]" * 100_000),
        (b"5", int(NOW).to_bytes(4, "big") + b"not zstd at all"),
        (b"0", b"\x00\x00"),  # too short for the timestamp
        (b"2", b"\x00" * 6),  # too short for the expiry
        (b"0", int(NOW).to_bytes(4, "big") + b"{not json"),
        (b"1", int(NOW).to_bytes(4, "big") + b"not zstd at all"),
        (b"0", int(NOW).to_bytes(4, "big") + b"\xff\xfe"),
    ],
)
def test_verified_but_malformed_bodies_are_bad_signature(marker: bytes, body: bytes) -> None:
    signer = make(max_token_length=2**20, max_decompressed_size=2**20)
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
        SerializerSigner(SECRET, purpose="p", **kwargs)


def test_values_json_refuses_are_refused_naming_where_they_are() -> None:
    import dataclasses
    import datetime
    import enum
    import uuid

    from blake2sign_web.signing.serializer import NotJSON

    class Colour(enum.Enum):
        RED = 1

    @dataclasses.dataclass
    class Item:
        sku: str

    signer = SerializerSigner("k" * 32, purpose="values")
    for value, where in [
        ({"seen": datetime.datetime(2026, 1, 1)}, "value at ['seen'] is datetime"),
        ({"cart": [1, {"id": uuid.UUID(int=1)}]}, "value at ['cart'][1]['id'] is UUID"),
        ([Colour.RED], "value at [0] is test_values_json_refuses_are_refused_naming_where_they_are.<locals>.Colour"),
        ({"item": Item("a")}, "value at ['item'] is"),
        (datetime.date(2026, 1, 1), "value is date"),
        ({"tags": {"a"}}, "value at ['tags'] is set"),
    ]:
        with pytest.raises(NotJSON) as raised:
            signer.dumps(value)
        assert str(raised.value).startswith(where), raised.value
        assert isinstance(raised.value, TypeError)


def test_what_json_accepts_is_still_written_as_json_writes_it() -> None:
    import enum

    class Size(enum.IntEnum):
        LARGE = 3

    class Name(str):
        pass

    signer = SerializerSigner("k" * 32, purpose="values")
    value = {"size": Size.LARGE, "name": Name("x"), "pair": (1, 2), 1: True, None: 0.5}
    assert signer.loads(signer.dumps(value)) == {"size": 3, "name": "x", "pair": [1, 2], "1": True, "null": 0.5}
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(TypeError):
        signer.dumps(cycle)
