"""Typed and encrypted tokens: exact round trips of any nested typed value, tag-shaped dicts unharmed, every
change to an encrypted token a BadSignature, every foreign key refused, and times as in signed tokens."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired
from blake2sign_web.signing.serializer import CLOCK_SKEW
from tests.core.test_typed import same
from tests.longrun import examples

from .strategies import any_json, mutated_tokens, shaped_json

SECRET = "a secret for the typed and encrypted properties"
OTHER_SECRET = "another secret for the typed and encrypted ones"
ISSUED = 1_790_000_000
LONG = 64 * 1024


def fixed_clock() -> float:
    return ISSUED


def signer(**options: Any) -> SerializerSigner:
    options = {"purpose": "properties", "clock": fixed_clock, "max_token_length": LONG, **options}
    return SerializerSigner(options.pop("secret", SECRET), **options)


# Values. Offsets strictly within a day, to the microsecond, as timezone() takes them.
offsets = st.builds(
    timezone,
    st.timedeltas(min_value=timedelta(hours=-24, microseconds=1), max_value=timedelta(hours=24, microseconds=-1)),
)
zones = st.none() | st.just(timezone.utc) | offsets
datetimes = st.builds(lambda d, zone, fold: d.replace(tzinfo=zone, fold=fold), st.datetimes(), zones, st.integers(0, 1))
times = st.builds(lambda t, zone, fold: t.replace(tzinfo=zone, fold=fold), st.times(), zones, st.integers(0, 1))
texts = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates too
#: Keys that look like tags, and any others.
keys = (
    st.sampled_from([" t", " s", " f", " b", " u", " n", " dt", " d", " tm", " td", " e", " zz", " ", "t", ""]) | texts
)
hashable_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
    | st.binary(max_size=16)
    | st.uuids()
    | st.dates()
    | datetimes
    | times
    | st.timedeltas()
    | st.decimals(allow_nan=False)
)
hashables = st.recursive(
    hashable_scalars, lambda children: st.tuples(children, children) | st.frozensets(children, max_size=3), max_leaves=4
)
typed_values = st.recursive(
    hashable_scalars | st.decimals(allow_nan=True),  # a NaN cannot be in a set, but can be anywhere else
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
        | st.dictionaries(keys, children, max_size=3)
    ),
    max_leaves=10,
)
#: Plain JSON in which many dicts look like tags: what an untyped application may already store.
tag_shaped_json = st.recursive(
    st.none() | st.booleans() | st.integers() | texts | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=2),
    max_leaves=8,
)

TYPED_OPTIONS: dict[str, dict[str, Any]] = {
    "typed": {},
    "typed dictionary": {"dictionary": 1},
    "typed zstd": {"compression_threshold": 0},
    "typed blake3 tag 32": {"hasher": "blake3", "tag_size": 32},
    "typed encrypted": {"encrypt": True},
    "typed encrypted compressed": {"encrypt": True, "compress_encrypted": True, "dictionary": 1},
}
TYPED_SIGNERS = {name: signer(typed=True, **options) for name, options in TYPED_OPTIONS.items()}
#: The same options without typed=True: what wrote the tokens before typed was turned on.
UNTYPED_SIGNERS = {name: signer(**options) for name, options in TYPED_OPTIONS.items()}


@settings(max_examples=examples(800), deadline=None)
@given(st.sampled_from(sorted(TYPED_SIGNERS)), typed_values)
def test_any_nested_typed_value_comes_back_exactly(name: str, value: Any) -> None:
    typed = TYPED_SIGNERS[name]
    assert same(typed.loads(typed.dumps(value)), value)


@settings(max_examples=examples(500), deadline=None)
@given(st.sampled_from(sorted(TYPED_SIGNERS)), tag_shaped_json)
def test_plain_json_that_looks_like_tags_survives(name: str, value: Any) -> None:
    typed = TYPED_SIGNERS[name]
    assert same(typed.loads(typed.dumps(value)), value)
    # A token an untyped signer wrote before typed=True was turned on reads as it was written.
    assert same(typed.loads(UNTYPED_SIGNERS[name].dumps(value)), value)


ENCRYPTED = {
    "encrypted": signer(encrypt=True),
    "encrypted blake2s": signer(encrypt=True, hasher="blake2s"),
    "encrypted blake3": signer(encrypt=True, hasher="blake3"),
    "encrypted compressed": signer(encrypt=True, compress_encrypted=True, compression_threshold=0),
    "encrypted dictionary": signer(encrypt=True, compress_encrypted=True, dictionary=1),
    "encrypted typed": signer(encrypt=True, typed=True),
}
#: What ``dumps`` is given besides the value, per kind of token.
DUMP_OPTIONS: dict[str, dict[str, Any]] = {
    "encrypted": {},
    "encrypted blake2s": {"expires_in": 3600},
    "encrypted blake3": {"session_id": b"\x00\xff" * 4},
    "encrypted compressed": {},
    "encrypted dictionary": {"expires_in": 60, "session_id": b"12345678"},
    "encrypted typed": {},
}


@settings(max_examples=examples(800), deadline=None)
@given(st.sampled_from(sorted(ENCRYPTED)), any_json)
def test_encrypted_tokens_round_trip_any_json(name: str, value: Any) -> None:
    sealed = ENCRYPTED[name]
    loaded = sealed.load_token(sealed.dumps(value, **DUMP_OPTIONS[name]))
    assert loaded.value == value
    assert loaded.encrypted
    assert not loaded.rewrite


@settings(max_examples=examples(3000), deadline=None)
@given(st.sampled_from(sorted(ENCRYPTED)), shaped_json, st.data())
def test_every_change_to_an_encrypted_token_is_rejected_with_bad_signature(
    name: str, value: Any, data: st.DataObject
) -> None:
    sealed = ENCRYPTED[name]
    token = sealed.dumps(value, **DUMP_OPTIONS[name])
    _, changed = data.draw(mutated_tokens(token, 22))
    if changed == token:
        assert sealed.loads(changed) == value
        return
    with pytest.raises(BadSignature):
        sealed.loads(changed)


def foreign_readers(name: str) -> dict[str, SerializerSigner]:
    """Readers that must refuse ``name``'s tokens: one thing changed, or no decryption at all."""
    options = {"encrypted typed": {"typed": True}}.get(name, {})
    hasher = {"encrypted blake2s": "blake2s", "encrypted blake3": "blake3"}.get(name, "blake2b")
    readers = {
        "secret": signer(encrypt=True, hasher=hasher, secret=OTHER_SECRET, **options),
        "purpose": signer(encrypt=True, hasher=hasher, purpose="other", **options),
        "hasher": signer(encrypt=True, hasher="blake2s" if hasher != "blake2s" else "blake3", **options),
        "signed only": signer(hasher=hasher, **options),
    }
    if options:
        readers["not typed"] = signer(encrypt=True, hasher=hasher)
    return readers


FOREIGN = {name: foreign_readers(name) for name in ENCRYPTED}


@settings(max_examples=examples(1000), deadline=None)
@given(st.sampled_from(sorted(ENCRYPTED)), shaped_json, st.data())
def test_a_reader_with_another_key_refuses_encrypted_tokens(name: str, value: Any, data: st.DataObject) -> None:
    token = ENCRYPTED[name].dumps(value, **DUMP_OPTIONS[name])
    reader = data.draw(st.sampled_from(sorted(FOREIGN[name])))
    with pytest.raises(BadSignature):
        FOREIGN[name][reader].loads(token)


@settings(max_examples=examples(1500), deadline=None)
@given(
    max_age=st.integers(1, 10**6),
    expires_in=st.none() | st.integers(1, 10**6),
    age=st.integers(-2 * CLOCK_SKEW, 2 * 10**6),
    value=shaped_json,
)
def test_encrypted_tokens_expire_exactly_as_signed_ones(
    max_age: int, expires_in: int | None, age: int, value: Any
) -> None:
    now = [float(ISSUED)]
    common: dict[str, Any] = {"purpose": "dated", "max_age": max_age, "clock": lambda: now[0], "max_token_length": LONG}
    signed, sealed = SerializerSigner(SECRET, **common), SerializerSigner(SECRET, encrypt=True, **common)
    tokens = signed.dumps(value, expires_in=expires_in), sealed.dumps(value, expires_in=expires_in)
    now[0] = ISSUED + age
    outcomes = []
    for reader, token in zip((signed, sealed), tokens, strict=True):
        try:
            outcomes.append(("loads", reader.loads(token)))
        except SignatureExpired as error:
            outcomes.append(("expired", error.expired_at))
        except BadSignature as error:
            outcomes.append(("bad", str(error)))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=examples(300), deadline=None)
@given(value=typed_values)
def test_a_plain_reader_never_reads_a_typed_token(value: Any) -> None:
    with pytest.raises(BadSignature):
        signer().loads(TYPED_SIGNERS["typed"].dumps(value))
    with pytest.raises(BadSignature):
        signer(encrypt=True).loads(TYPED_SIGNERS["typed encrypted"].dumps(value))
