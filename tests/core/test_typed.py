"""Typed tokens (``typed=True``): the types JSON lacks come back as themselves, and no user dict is taken for a tag."""

from __future__ import annotations

import collections
import enum
import time as time_module
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, NamedTuple
from uuid import UUID

import pytest
from markupsafe import Markup

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired, clear_signer_cache, get_signer
from blake2sign_web.exceptions import NotJSON, SignatureMismatch
from blake2sign_web.signing.serializer import ExtendedSerializerSigner
from blake2sign_web.signing.typed import TypedNotJSON, decode, encode

SECRET = "a secret for the typed tests 0123456789"
OLD_SECRET = "an older secret for the typed tests 9876"
NOW = 1_790_000_000
PARIS_SUMMER = timezone(timedelta(hours=2))


def make(**options: Any) -> SerializerSigner:
    return SerializerSigner(options.pop("secret", SECRET), purpose="typed", clock=lambda: NOW, **options)


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1 == 1.0 == True`` and ``{1} == frozenset({1})``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (set, frozenset)):
        return a == b and {type(x) for x in a} == {type(x) for x in b}
    if isinstance(a, (datetime, time)):
        return (
            a == b and a.utcoffset() == b.utcoffset() and a.fold == b.fold and (a.tzinfo is None) == (b.tzinfo is None)
        )
    if isinstance(a, Decimal):
        return a.compare_total(b) == 0  # the same sign, digits and exponent; NaN included
    return bool(a == b)


VALUES = {
    "aware datetime": datetime(2026, 7, 1, 12, 30, 45, 123456, tzinfo=PARIS_SUMMER),
    "utc datetime": datetime(2026, 1, 1, tzinfo=timezone.utc),
    "naive datetime": datetime(2026, 7, 1, 12, 30, 45, 1),
    "folded naive datetime": datetime(2026, 10, 25, 2, 30, fold=1),
    "odd offset": datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=-23, minutes=-59, seconds=-59, microseconds=-1))),
    "far future": datetime(9999, 12, 31, 23, 59, 59, 999999),
    # Found by the property: Python 3.11's fromisoformat reads "+00:00:00.000001" as UTC.
    "offset under a second": datetime(2000, 1, 1, tzinfo=timezone(timedelta(microseconds=1))),
    "negative offset under a second": datetime(2000, 1, 1, tzinfo=timezone(timedelta(microseconds=-999999))),
    "time offset under a second": time(1, 2, tzinfo=timezone(timedelta(microseconds=1)), fold=1),
    "local mean time offset": datetime(1900, 1, 1, tzinfo=timezone(timedelta(minutes=19, seconds=32))),
    "date": date(2026, 2, 28),
    "time": time(23, 59, 59, 999999),
    "aware time": time(8, 0, tzinfo=PARIS_SUMMER),
    "folded time": time(1, 30, fold=1),
    "timedelta": timedelta(days=-3, seconds=5, microseconds=7),
    "big timedelta": timedelta.max,
    "uuid": UUID("12345678-1234-5678-1234-567812345678"),
    "decimal": Decimal("-1.10E+5"),
    "decimal zero": Decimal("-0.000"),
    "decimal nan": Decimal("NaN"),
    "decimal snan": Decimal("-sNaN12"),
    "decimal infinity": Decimal("-Infinity"),
    "bytes": bytes(range(256)),
    "empty bytes": b"",
    "tuple": (1, "a", None, (2.5, ())),
    "set": {1, "a", (1, 2), frozenset({3})},
    "frozenset": frozenset({b"x", UUID(int=1), date(2026, 1, 1)}),
    "empty set": set(),
    "nested": {"cart": [{"added": datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc), "qty": Decimal("2")}]},
}


@pytest.mark.parametrize("name", sorted(VALUES))
@pytest.mark.parametrize("options", [{}, {"dictionary": 1}, {"hasher": "blake3", "tag_size": 32}])
def test_every_type_comes_back_as_itself(name: str, options: dict[str, Any]) -> None:
    signer = make(typed=True, **options)
    value = {"v": VALUES[name]}
    assert same(signer.loads(signer.dumps(value)), value)


def test_a_naive_datetime_stays_naive_and_an_aware_one_keeps_its_offset() -> None:
    # Flask's tagged serializer turned naive datetimes into aware UTC ones and dropped microseconds (flask#4466).
    signer = make(typed=True)
    naive, aware = datetime(2026, 7, 1, 12, 0, 0, 5), datetime(2026, 7, 1, 12, 0, 0, 5, tzinfo=PARIS_SUMMER)
    loaded = signer.loads(signer.dumps([naive, aware]))
    assert loaded[0].tzinfo is None
    assert loaded[0] == naive
    assert loaded[1].utcoffset() == timedelta(hours=2)
    assert loaded[1] == aware
    assert loaded[1].microsecond == 5


@pytest.mark.parametrize(
    ("value", "json"),
    [
        ((1, 2), {" t": [1, 2]}),
        ({1}, {" s": [1]}),
        (frozenset({1}), {" f": [1]}),
        (b"\x00\xff", {" b": "AP8="}),
        (UUID("12345678-1234-5678-1234-567812345678"), {" u": "12345678123456781234567812345678"}),
        (Decimal("1.10"), {" n": "1.10"}),
        (datetime(2026, 1, 1, 12, 0, 0, 5), {" dt": "2026-01-01T12:00:00.000005"}),
        (datetime(2026, 1, 1, tzinfo=PARIS_SUMMER), {" dt": "2026-01-01T00:00:00+02:00"}),
        (datetime(2026, 1, 1, fold=1), {" dt": ["2026-01-01T00:00:00", 1]}),
        (date(2026, 1, 1), {" d": "2026-01-01"}),
        (time(12, 30), {" tm": "12:30:00"}),
        (timedelta(days=1, seconds=2, microseconds=3), {" td": [1, 2, 3]}),
        (Markup("<b>hi</b>"), {" m": "<b>hi</b>"}),
        ({" t": "mine"}, {" e": {" t": "mine"}}),
        ({" t": (1,)}, {" e": {" t": {" t": [1]}}}),
        ({"t": "mine"}, {"t": "mine"}),
        ({" t": 1, "u": 2}, {" t": 1, "u": 2}),
    ],
)
def test_the_documented_encoding(value: Any, json: Any) -> None:
    assert encode(value) == json
    assert same(decode(json), value)


@pytest.mark.parametrize(
    "value",
    [
        {" t": [1, 2]},
        {" e": {" t": [1]}},
        {" e": "x"},
        {" dt": "2026-01-01T00:00:00"},
        {" zz": 1},
        {" ": 1},
        {"  t": 1},
        {" t": 1, " s": 2},
        [{" b": "AP8="}, {" u": "0" * 32}],
        {"outer": {" n": "1"}},
    ],
)
def test_dicts_that_look_like_tags_come_back_unchanged(value: Any) -> None:
    signer = make(typed=True)
    assert same(signer.loads(signer.dumps(value)), value)
    # and the same from a plain token: a typed reader reads it as the plain JSON it is
    assert same(signer.loads(make().dumps(value)), value)


class Colour(enum.IntEnum):
    RED = 1


class Point(NamedTuple):
    x: int
    y: int


def test_subclasses_are_written_as_their_base_type() -> None:
    signer = make(typed=True)
    value = {"colour": Colour.RED, "point": Point(1, 2), "ordered": collections.OrderedDict(a=1)}
    assert same(signer.loads(signer.dumps(value)), {"colour": 1, "point": (1, 2), "ordered": {"a": 1}})


class Custom:
    pass


@pytest.mark.parametrize(
    ("value", "path", "kind"),
    [
        (Custom(), "", "Custom"),
        ({"cart": [1, {"item": Custom()}]}, "['cart'][1]['item']", "Custom"),
        ({"t": (1, bytearray(b"x"))}, "['t'][1]", "bytearray"),
        ({"s": {1, Custom()}}, "['s'][<set element>]", "Custom"),
        ({"e": {" t": complex(1, 2)}}, "['e'][' t']", "complex"),
        ([object()], "[0]", "object"),
    ],
)
def test_a_type_it_cannot_hold_is_a_type_error_naming_where_and_what(value: Any, path: str, kind: str) -> None:
    with pytest.raises(TypedNotJSON) as raised:
        make(typed=True).dumps(value)
    assert isinstance(raised.value, NotJSON)
    assert isinstance(raised.value, TypeError)
    assert raised.value.path == path
    assert raised.value.kind == kind
    assert f"is {kind}, which a typed token cannot hold" in str(raised.value)
    assert "datetime" in str(raised.value)  # the message lists what it can hold


def test_a_cycle_is_a_type_error() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(TypeError, match="contains itself"):
        make(typed=True).dumps(cycle)


def test_plain_signers_still_refuse_these_types() -> None:
    with pytest.raises(NotJSON, match="which JSON cannot hold"):
        make().dumps({"when": datetime(2026, 1, 1)})


# How a typed token is marked: by the keys that sign it.


def test_a_plain_signer_refuses_a_typed_token() -> None:
    token = make(typed=True).dumps({"when": datetime(2026, 1, 1)})
    # Its key id names a typed key, which a plain signer lacks (or, for keys sharing a character, its tag fails).
    with pytest.raises(SignatureMismatch):
        make().loads(token)


def test_a_typed_token_without_typed_values_is_still_refused_by_a_plain_signer() -> None:
    # Otherwise {" t": [1]} written by a typed signer would be read by a plain one as a dict, not a tuple.
    token = make(typed=True).dumps({"x": {" t": [1]}})
    with pytest.raises(BadSignature):
        make().loads(token)


@pytest.mark.parametrize("options", [{}, {"format": 1}, {"dictionary": 1}, {"compression_threshold": 0}])
def test_a_typed_signer_reads_plain_tokens_as_written(options: dict[str, Any]) -> None:
    value = {"tag": {" t": [1, 2]}, "list": [1, 2], "text": "x" * 600}
    loaded = make(typed=True).load_token(make(**options).dumps(value))
    assert same(loaded.value, value)
    assert not loaded.rewrite  # a plain session is rewritten typed when it changes, not before


def test_typed_signers_share_fallback_secrets() -> None:
    old = make(typed=True, secret=OLD_SECRET)
    signer = make(typed=True, fallbacks=[OLD_SECRET])
    loaded = signer.load_token(old.dumps({"d": date(2026, 1, 1)}))
    assert loaded.value == {"d": date(2026, 1, 1)}
    assert loaded.used_fallback
    assert loaded.rewrite
    # and plain tokens of the old secret too
    assert signer.load_token(make(secret=OLD_SECRET).dumps({"a": 1})).used_fallback


def test_an_expired_typed_token_is_expired_not_retried_as_plain() -> None:
    now = [float(NOW)]
    signer = SerializerSigner(SECRET, purpose="typed", typed=True, max_age=60, clock=lambda: now[0])
    token = signer.dumps({"d": date(2026, 1, 1)}, expires_in=30)
    now[0] += 45
    with pytest.raises(SignatureExpired) as expired:
        signer.loads(token)
    assert expired.value.expired_at == NOW + 30


def test_session_ids_and_expiry_travel_in_typed_tokens() -> None:
    signer = make(typed=True)
    loaded = signer.load_token(signer.dumps((1,), expires_in=60, session_id=b"\x00" * 8))
    assert loaded.value == (1,)
    assert loaded.expires_at == NOW + 60
    assert loaded.session_id == b"\x00" * 8


def forged(signer: SerializerSigner, payload: Any) -> str:
    """A typed token of ``payload`` as it stands, tags and all: what only a holder of the key can make."""
    assert isinstance(signer, ExtendedSerializerSigner)
    assert signer._typed_signer is not None
    return signer._typed_signer.dumps(payload)


@pytest.mark.parametrize(
    "payload",
    [
        {" zz": 1},
        {" t": 1},
        {" s": [[1]]},
        {" s": [{" s": []}]},
        {" u": "xyz"},
        {" u": "urn:uuid:12345678-1234-5678-1234-567812345678"},
        {" dt": "yesterday"},
        {" dt": ["2026-01-01T00:00:00", 2]},
        {" d": 20260101},
        {" tm": "25:00"},
        {" td": [1, 2]},
        {" td": [1, 2, "3"]},
        {" td": [10**10, 0, 0]},
        {" n": "one"},
        {" b": "not base64!"},
        {" e": {"a": 1}},
        {" e": {" a": 1, " b": 2}},
        {" e": [1]},
    ],
)
def test_a_malformed_tag_is_a_bad_signature(payload: Any) -> None:
    signer = make(typed=True)
    with pytest.raises(BadSignature, match="malformed typed value"):
        signer.loads(forged(signer, payload))


def test_typed_needs_format_2() -> None:
    with pytest.raises(ValueError, match="format=1"):
        make(typed=True, format=1)


@pytest.mark.parametrize("flag", [1, "yes", None])
def test_typed_is_a_bool(flag: Any) -> None:
    with pytest.raises(TypeError, match="typed must be True or False"):
        make(typed=flag)


def test_a_plain_signer_is_the_plain_class() -> None:
    # The typed and encrypted paths live in a subclass: the plain path carries no test for them.
    assert type(make()) is SerializerSigner
    assert type(make(typed=False, encrypt=False)) is SerializerSigner
    assert type(make(typed=True)) is ExtendedSerializerSigner
    assert isinstance(make(typed=True), SerializerSigner)
    assert "typed=True" in repr(make(typed=True))


def test_get_signer_caches_typed_signers_apart() -> None:
    clear_signer_cache()
    typed = get_signer(SECRET, purpose="typed", typed=True)
    assert get_signer(SECRET, purpose="typed", typed=True) is typed
    assert get_signer(SECRET, purpose="typed") is not typed
    assert typed.loads(typed.dumps({"at": date(2026, 1, 1)})) == {"at": date(2026, 1, 1)}
    clear_signer_cache()


def test_typed_round_trip_with_the_real_clock() -> None:
    signer = SerializerSigner(SECRET, purpose="typed", typed=True, max_age=60)
    stamp = datetime.now(timezone.utc)
    assert signer.loads(signer.dumps({"at": stamp})) == {"at": stamp}
    assert abs(signer.load_token(signer.dumps(1)).issued_at - time_module.time()) < 5
