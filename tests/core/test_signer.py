"""Signer: round trips, tampering, purposes, hashers, rotation, limits and bad input."""

from __future__ import annotations

import pytest

from blake2sign_web import BadSignature, Signer
from blake2sign_web.signing.signer import MAC_LENGTH

HASHERS = ["blake2b", "blake2s", "blake3"]
SECRET = "a test secret, long enough: 0123456789"
OTHER = "another test secret: 0123456789"
OLD = "the old secret, being rotated out"
NEW = "the new secret, replacing the old one"


@pytest.mark.parametrize("hasher", HASHERS)
def test_round_trip_bytes_and_str(hasher: str) -> None:
    signer = Signer(SECRET, purpose="test", hasher=hasher)
    assert signer.unsign(signer.sign(b"\x00\xffdata")) == b"\x00\xffdata"
    assert signer.unsign(signer.sign("héllo")) == "héllo".encode()
    assert signer.unsign(signer.sign(b"")) == b""


def test_token_uses_only_cookie_and_url_safe_characters() -> None:
    token = Signer(SECRET, purpose="test").sign(bytes(range(256)))
    allowed = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:")
    assert set(token) <= allowed


def test_signing_is_deterministic_and_secret_dependent() -> None:
    a = Signer(SECRET, purpose="test")
    assert a.sign(b"x") == a.sign(b"x")
    assert Signer(OTHER, purpose="test").sign(b"x") != a.sign(b"x")


@pytest.mark.parametrize("hasher", HASHERS)
def test_bytes_token_accepted(hasher: str) -> None:
    signer = Signer(SECRET, purpose="test", hasher=hasher)
    assert signer.unsign(signer.sign(b"abc").encode()) == b"abc"


def test_every_single_character_change_is_rejected() -> None:
    signer = Signer(SECRET, purpose="test")
    token = signer.sign(b"some data to protect")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~:"
    for index, original in enumerate(token):
        for replacement in alphabet:
            if replacement == original:
                continue
            changed = token[:index] + replacement + token[index + 1 :]
            with pytest.raises(BadSignature):
                signer.unsign(changed)


def test_truncation_and_extension_rejected() -> None:
    signer = Signer(SECRET, purpose="test")
    token = signer.sign(b"payload")
    for end in range(len(token)):
        with pytest.raises(BadSignature):
            signer.unsign(token[:end])
    for extra in ("A", ".", "=", "==", " "):
        with pytest.raises(BadSignature):
            signer.unsign(token + extra)
        with pytest.raises(BadSignature):
            signer.unsign(extra + token)


def test_purposes_separate_keys() -> None:
    token = Signer(SECRET, purpose="a").sign(b"x")
    with pytest.raises(BadSignature):
        Signer(SECRET, purpose="b").unsign(token)


@pytest.mark.parametrize(("signing", "verifying"), [(a, b) for a in HASHERS for b in HASHERS if a != b])
def test_hashers_do_not_verify_each_other(signing: str, verifying: str) -> None:
    token = Signer(SECRET, purpose="p", hasher=signing).sign(b"x")
    with pytest.raises(BadSignature):
        Signer(SECRET, purpose="p", hasher=verifying).unsign(token)


def test_purpose_and_secret_boundaries_are_unambiguous() -> None:
    # Concatenation must not let ("ab", "c") and ("a", "bc") share a key.
    token = Signer("c" + SECRET, purpose="ab").sign(b"x")
    with pytest.raises(BadSignature):
        Signer("bc" + SECRET, purpose="a").unsign(token)


def test_rotation_signs_with_current_and_verifies_fallbacks() -> None:
    old = Signer(OLD, purpose="p")
    rotated = Signer(NEW, purpose="p", fallbacks=["an older secret, retired", OLD.encode()])
    assert rotated.unsign(old.sign(b"x")) == b"x"
    assert rotated.sign(b"x") == Signer(NEW, purpose="p").sign(b"x")
    with pytest.raises(BadSignature):
        old.unsign(rotated.sign(b"x"))


@pytest.mark.parametrize(
    "token",
    [
        "",
        ".",
        "0",
        "0.",
        "x" * 10,
        "0" + "." + "A" * MAC_LENGTH,
        "A" * MAC_LENGTH,  # a MAC without a marker
        "0!!!." + "A" * MAC_LENGTH,
        "0abc\u00e9." + "A" * MAC_LENGTH,
        "\x00" * 60,
        "A" * 5000,
        "☃" * 50,
    ],
)
def test_malformed_tokens_raise_bad_signature(token: str) -> None:
    with pytest.raises(BadSignature):
        Signer(SECRET, purpose="test").unsign(token)


@pytest.mark.parametrize("token", [None, 12, 1.5, ["x"], {"a": 1}, object()])
def test_wrong_types_raise_bad_signature(token: object) -> None:
    with pytest.raises(BadSignature):
        Signer(SECRET, purpose="test").unsign(token)  # type: ignore[arg-type]


def test_bytes_non_ascii_token_rejected() -> None:
    signer = Signer(SECRET, purpose="test")
    token = signer.sign(b"x").encode()
    with pytest.raises(BadSignature):
        signer.unsign(b"\xff" + token[1:])


def test_length_checked_before_hashing() -> None:
    signer = Signer(SECRET, purpose="test", max_token_length=100)
    with pytest.raises(BadSignature, match="too long"):
        signer.unsign("0" + "A" * 200 + "." + "A" * MAC_LENGTH)
    with pytest.raises(ValueError, match="max_token_length=100"):
        signer.sign(b"x" * 200)


def test_unknown_marker_rejected_even_with_valid_mac() -> None:
    # A text whose MAC is right but whose marker is not a format-1 raw marker.
    signer = Signer(SECRET, purpose="test")
    token = signer._seal(b"9AAAA")
    with pytest.raises(BadSignature, match="format"):
        signer.unsign(token)


def test_invalid_base64_body_with_valid_mac_is_bad_signature() -> None:
    signer = Signer(SECRET, purpose="test")
    token = signer._seal(b"0A")  # impossible base64 length
    with pytest.raises(BadSignature):
        signer.unsign(token)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"secret": ""}, ValueError, "secret is 0 bytes long, fewer than the minimum of 16"),
        ({"secret": b""}, ValueError, "secret is 0 bytes long"),
        ({"secret": "secret"}, ValueError, r"secret is 6 bytes long.*secrets.token_urlsafe\(50\)"),
        ({"secret": "x" * 15}, ValueError, "secret is 15 bytes long"),
        ({"secret": bytearray(b"x" * 15)}, ValueError, "secret is 15 bytes long"),
        ({"secret": None}, TypeError, "secret must be str or bytes"),
        ({"secret": 123}, TypeError, "secret must be str or bytes"),
        ({"purpose": ""}, ValueError, "purpose"),
        ({"purpose": None}, ValueError, "purpose"),
        ({"hasher": "sha256"}, ValueError, "hasher must be one of blake2b, blake2s, blake3"),
        ({"fallbacks": "single"}, TypeError, "fallbacks must be a list"),
        ({"fallbacks": "an old secret of more than 16 characters"}, TypeError, "not a single secret"),
        ({"fallbacks": b"an old secret of more than 16 bytes"}, TypeError, "not a single secret"),
        ({"fallbacks": bytearray(b"an old secret of more than 16 bytes")}, TypeError, "not a single secret"),
        ({"fallbacks": None}, TypeError, "fallbacks must be a list of secrets, not NoneType"),
        ({"fallbacks": [""]}, ValueError, r"fallbacks\[0\] is 0 bytes long"),
        ({"fallbacks": ["an old secret of more than 16 characters", "old"]}, ValueError, r"fallbacks\[1\] is 3 bytes"),
        ({"fallbacks": [None]}, TypeError, r"fallbacks\[0\] must be str or bytes"),
        ({"max_token_length": 10}, ValueError, "max_token_length"),
        ({"max_token_length": True}, ValueError, "max_token_length"),
    ],
)
def test_bad_configuration_fails_at_construction(kwargs: dict[str, object], error: type, message: str) -> None:
    options: dict[str, object] = {"secret": SECRET, "purpose": "p", **kwargs}
    secret = options.pop("secret")
    with pytest.raises(error, match=message):
        Signer(secret, **options)  # type: ignore[arg-type]


def test_repr_does_not_reveal_secret() -> None:
    text = repr(Signer("very-secret-value-0123456789", purpose="p", fallbacks=["old-secret-0123456789"]))
    assert "secret-value" not in text
    assert "old-secret" not in text
    assert "purpose='p'" in text
