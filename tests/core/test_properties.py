"""Properties over arbitrary input: round trips for any JSON value, rejection of any change."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SerializerSigner, Signer

# What JSON (and orjson) can carry and bring back unchanged: 64-bit integers, finite floats.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)

SIGNERS = {
    compression: SerializerSigner(
        "property secret", purpose="properties", compression=compression, compression_threshold=32
    )
    for compression in ("zstd", None)
}
RAW = Signer("property secret", purpose="properties")
TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~:"


@given(json_values, st.sampled_from(["zstd", None]))
def test_any_json_value_round_trips(value: Any, compression: str | None) -> None:
    signer = SIGNERS[compression]
    assert signer.loads(signer.dumps(value)) == value


@given(st.binary(max_size=500))
def test_any_bytes_round_trip(data: bytes) -> None:
    assert RAW.unsign(RAW.sign(data)) == data


@settings(max_examples=300)
@given(json_values, st.data())
def test_any_single_character_change_is_rejected(value: Any, data: st.DataObject) -> None:
    signer = SIGNERS["zstd"]
    token = signer.dumps(value)
    index = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(st.sampled_from(TOKEN_ALPHABET).filter(lambda c: c != token[index]))
    changed = token[:index] + replacement + token[index + 1 :]
    try:
        signer.loads(changed)
    except BadSignature:
        return
    raise AssertionError(f"changed token accepted at index {index}")


@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_arbitrary_input_only_ever_raises_bad_signature(token: str | bytes) -> None:
    for signer in SIGNERS.values():
        with contextlib.suppress(BadSignature):
            signer.loads(token)
    with contextlib.suppress(BadSignature):
        RAW.unsign(token)
