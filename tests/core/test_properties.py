"""Properties over arbitrary input: round trips for any JSON value, rejection of any change."""

from __future__ import annotations

import base64
import contextlib
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SerializerSigner, Signer, URLSigner

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

# What Python's json module carries and orjson does not: integers of any size, strings with lone surrogates.
python_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=())),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(st.characters(exclude_categories=()), max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
# Any text at all (lone surrogates, controls, non-characters) and text shaped like tokens and URLs.
any_text = st.text(st.characters(exclude_categories=()), max_size=300)
url_pieces = st.sampled_from(
    ["/", "//", "?", "&", "=", "#", "%", "%2F", "%2e", ".", "..", "signature=", "expires=", "A" * 43]
)
url_like = st.lists(st.one_of(url_pieces, st.text(st.characters(exclude_categories=()), max_size=8)), max_size=12).map(
    "".join
)

very_long = st.builds(
    lambda piece, n: piece * n, st.sampled_from(["A", "\ud800", "é", "%2F", "/?"]), st.integers(2000, 9000)
)

SIGNERS = {
    name: SerializerSigner("a secret for property tests", purpose="properties", compression_threshold=32, **options)
    for name, options in {
        "zstd": {"dictionary": 1},  # format 2, the session dictionary, as the session adapters use it
        None: {"compression": None},
        "plain zstd": {},  # the core's default
        "tag 32": {"tag_size": 32},
        "format 1": {"format": 1},
    }.items()
}
COMPRESSIONS = st.sampled_from(list(SIGNERS))
RAW = Signer("a secret for property tests", purpose="properties")
URLS = [
    URLSigner("a secret for property tests", purpose="properties", **options)  # type: ignore[arg-type]
    for options in ({}, {"bind_host": True, "ignore": ("utm_*",)})
]
TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~:"


@given(json_values, COMPRESSIONS)
def test_any_json_value_round_trips(value: Any, compression: str | None) -> None:
    signer = SIGNERS[compression]
    assert signer.loads(signer.dumps(value)) == value


@given(st.binary(max_size=500))
def test_any_bytes_round_trip(data: bytes) -> None:
    assert RAW.unsign(RAW.sign(data)) == data


@settings(max_examples=300)
@given(json_values, COMPRESSIONS, st.data())
def test_any_single_character_change_is_rejected(value: Any, compression: str | None, data: st.DataObject) -> None:
    signer = SIGNERS[compression]
    token = signer.dumps(value, session_id=None if compression == "format 1" else b"\x00" * 8)
    index = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(st.sampled_from(TOKEN_ALPHABET).filter(lambda c: c != token[index]))
    changed = token[:index] + replacement + token[index + 1 :]
    try:
        signer.loads(changed)
    except BadSignature:
        return
    raise AssertionError(f"changed token accepted at index {index}")


@given(python_json_values, COMPRESSIONS)
def test_any_value_pythons_json_carries_round_trips_exactly(value: Any, compression: str | None) -> None:
    signer = SIGNERS[compression]
    loaded = signer.loads(signer.dumps(value))
    assert loaded == value
    assert json.dumps(loaded) == json.dumps(value)  # big integers stay integers


@settings(max_examples=300)
@given(st.one_of(any_text, url_like, st.binary(max_size=300), very_long))
@example("/a\ud800?signature=" + "A" * 43)
@example("https://h\udc80st/a?signature=" + "A" * 43)
@example(b"/a?signature=" + b"\xff" * 43)
def test_arbitrary_input_only_ever_raises_bad_signature(token: str | bytes) -> None:
    for signer in SIGNERS.values():
        with contextlib.suppress(BadSignature):
            signer.loads(token)
        with contextlib.suppress(BadSignature):
            signer.load_token(token)
    with contextlib.suppress(BadSignature):
        RAW.unsign(token)
    for url_signer in URLS:
        with contextlib.suppress(BadSignature):
            url_signer.verify(token)
        with contextlib.suppress(BadSignature):
            url_signer.verify_url(token)
        with contextlib.suppress(BadSignature):
            url_signer.unsign(token)


@settings(max_examples=500)
@given(st.sampled_from(b"0123456789aABQRgYZwz-_"), st.binary(max_size=300), COMPRESSIONS)
@example(ord("4"), b"\x00\x00\x00\x01" + b"[" * 2500, None)
@example(ord("5"), b"\x00\x00\x00\x01(\xb5/\xfd", None)
@example(ord("Q"), b"\x00\x00\x00\x01\x07(\xb5/\xfd", None)  # an unknown dictionary id
@example(ord("Q"), b"\x00\x00\x00\x01\x01", None)  # a dictionary id and no frame
def test_any_body_under_a_valid_mac_only_ever_raises_bad_signature(
    marker: int, body: bytes, compression: str | None
) -> None:
    # What only a key holder could make: checks everything after the MAC, in either format's keys.
    signer = SIGNERS[compression]
    for keys in (signer._format1, signer._format2):
        token = signer._seal(bytes([marker]) + base64.urlsafe_b64encode(body).rstrip(b"="), keys)
        with contextlib.suppress(BadSignature):
            signer.loads(token)
    with contextlib.suppress(BadSignature):
        RAW.unsign(RAW._seal(bytes([marker]) + base64.urlsafe_b64encode(body).rstrip(b"=")))
