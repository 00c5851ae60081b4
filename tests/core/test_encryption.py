"""Encrypted tokens (``encrypt=True``): unreadable without the key, verified first, bad ones BadSignature."""

from __future__ import annotations

import base64
import subprocess
import sys
import zlib
from datetime import date
from typing import Any

import orjson
import pytest

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired, clear_signer_cache, get_signer
from blake2sign_web.signing import encryption as enc
from blake2sign_web.signing.serializer import ExtendedSerializerSigner

SECRET = "a secret for the encryption tests 01234567"
OLD_SECRET = "an older secret for the encryption tests 7654"
NOW = 1_790_000_000
SESSION = {
    "_auth_user_id": "42",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
    "cart": [{"sku": "A-100", "qty": 2}],
}


def make(**options: Any) -> ExtendedSerializerSigner:
    signer = plain(**options)
    assert isinstance(signer, ExtendedSerializerSigner)
    return signer


def plain(**options: Any) -> SerializerSigner:
    now = options.pop("now", NOW)
    return SerializerSigner(
        options.pop("secret", SECRET), purpose=options.pop("purpose", "sealed"), clock=lambda: now, **options
    )


def b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.mark.parametrize(
    "options",
    [
        {"encrypt": True},
        {"encrypt": True, "hasher": "blake2s"},
        {"encrypt": True, "hasher": "blake3"},
        {"encrypt": True, "tag_size": 32},
        {"encrypt": True, "compress_encrypted": True, "dictionary": 1},
        {"encrypt": True, "compress_encrypted": True, "compression_threshold": 0},
        {"encrypt": True, "typed": True},
    ],
)
def test_round_trip(options: dict[str, Any]) -> None:
    signer = make(**options)
    token = signer.dumps(SESSION, expires_in=60, session_id=b"\x01" * 8)
    assert token.startswith("x")
    loaded = signer.load_token(token)
    assert loaded.value == SESSION
    assert loaded.issued_at == NOW
    assert loaded.expires_at == NOW + 60
    assert loaded.session_id == b"\x01" * 8
    assert loaded.encrypted
    assert not loaded.used_fallback
    assert not loaded.outdated
    assert not loaded.rewrite


def test_the_token_reveals_nothing_of_the_value() -> None:
    token = make(encrypt=True).dumps({"secret": "hunter2"})
    body = b64(token[2:])
    assert b"hunter2" not in body
    assert b"secret" not in body
    assert "hunter2" not in token
    # A signed token, for contrast, carries its JSON readably.
    assert b"hunter2" in b64(plain().dumps({"secret": "hunter2"})[2:-22])


def test_every_token_has_a_fresh_nonce() -> None:
    signer = make(encrypt=True)
    tokens = {signer.dumps(SESSION) for _ in range(50)}
    assert len(tokens) == 50
    assert len({b64(token[2:])[: enc.NONCE_SIZE] for token in tokens}) == 50


def test_the_size_overhead() -> None:
    value = {"user": 42}
    signed = plain().dumps(value)  # format 2 signed: 22 characters of tag
    sealed = make(encrypt=True).dumps(value)
    json_size = len(orjson.dumps(value))
    # marker + key id + base64(nonce 24 + flags 1 + issued_at 4 + JSON + tag 16)
    assert len(sealed) == 2 + (4 * (24 + 1 + 4 + json_size + 16) + 2) // 3
    assert len(sealed) - len(signed) == 33  # 25 bytes more: the nonce and the flags byte


def test_encrypted_payloads_are_not_compressed_unless_asked() -> None:
    repetitive = {"history": ["/shop/item/1"] * 100}
    default = make(encrypt=True, dictionary=1)  # the dictionary, as the session adapters pass it, is not used
    compressed = make(encrypt=True, dictionary=1, compress_encrypted=True)
    assert len(default.dumps(repetitive)) > len(orjson.dumps(repetitive)) * 4 // 3
    assert len(compressed.dumps(repetitive)) < len(orjson.dumps(repetitive)) // 4
    assert compressed.loads(default.dumps(repetitive)) == repetitive
    assert default.loads(compressed.dumps(repetitive)) == repetitive  # a reader decompresses whatever it gets


def test_the_length_of_an_uncompressed_token_depends_only_on_the_length_of_the_value() -> None:
    # What compression would break (and why it is off): equal lengths in, equal lengths out.
    signer = make(encrypt=True)
    assert len(signer.dumps({"q": "a" * 100})) == len(signer.dumps({"q": "qwertyuiopasdfghjklzxcvbnm" * 3 + "a" * 22}))


@pytest.mark.parametrize(
    ("other", "why"),
    [
        ({"secret": "another secret for the encryption tests 000"}, "secret"),
        ({"purpose": "other"}, "purpose"),
        ({"hasher": "blake2s"}, "hasher"),
        ({"hasher": "blake3"}, "hasher"),
    ],
)
def test_another_key_does_not_decrypt(other: dict[str, Any], why: str) -> None:
    token = make(encrypt=True).dumps(SESSION)
    reader = make(encrypt=True, **other)
    # Its key id names no key of the reader's, or (a chance in 64 of keys) one that cannot open the token.
    named = reader._encryption.named[ord(token[1])] is not None
    with pytest.raises(BadSignature, match="does not decrypt" if named else "unknown key id"):
        reader.loads(token)


def test_every_changed_character_is_a_bad_signature() -> None:
    signer = make(encrypt=True)
    token = signer.dumps({"user": 42})
    for index in range(len(token)):
        for replacement in "AQgw-_x0.":
            if replacement == token[index]:
                continue
            changed = token[:index] + replacement + token[index + 1 :]
            with pytest.raises(BadSignature):
                signer.loads(changed)


def test_truncated_or_extended_tokens_are_bad_signatures() -> None:
    signer = make(encrypt=True)
    token = signer.dumps({"user": 42})
    for cut in range(len(token)):
        with pytest.raises(BadSignature):
            signer.loads(token[:cut])
    for extra in ("A", "AA", "AAA", "AAAA", "=", "."):
        with pytest.raises(BadSignature):
            signer.loads(token + extra)


def test_a_second_spelling_of_the_same_bytes_is_refused() -> None:
    # Unpadded base64url has spare bits in its last character; pybase64 ignores them, the reader must not.
    signer = make(encrypt=True)
    for value in range(6):  # bodies of every length modulo 3
        token = signer.dumps("x" * value)
        body = token[2:]
        if len(body) % 4 == 0:
            continue
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        last = alphabet.index(body[-1])
        respelled = token[:-1] + alphabet[last + 1]  # the same bytes, a spare bit set
        assert b64(respelled[2:]) == b64(body)
        with pytest.raises(BadSignature, match="malformed"):
            signer.loads(respelled)


def test_fallback_secrets_decrypt_and_ask_for_a_rewrite() -> None:
    old = make(encrypt=True, secret=OLD_SECRET)
    signer = make(encrypt=True, fallbacks=[OLD_SECRET])
    loaded = signer.load_token(old.dumps(SESSION))
    assert loaded.value == SESSION
    assert loaded.used_fallback
    assert loaded.rewrite
    rewritten = signer.dumps(loaded.value)
    with pytest.raises(BadSignature):
        old.loads(rewritten)  # written under the current secret


def test_a_signed_token_from_before_encryption_loads_and_asks_for_a_rewrite() -> None:
    plain = make(encrypt=False, typed=True).dumps({"d": date(2026, 1, 1)})
    for signer in (make(encrypt=True, typed=True), make(encrypt=True, typed=True, fallbacks=[OLD_SECRET])):
        loaded = signer.load_token(plain)
        assert loaded.value == {"d": date(2026, 1, 1)}
        assert not loaded.encrypted
        assert loaded.outdated
        assert loaded.rewrite
        assert not loaded.used_fallback
    signed = SerializerSigner(SECRET, purpose="sealed", clock=lambda: NOW).dumps(SESSION)
    assert make(encrypt=True).load_token(signed).rewrite


def test_a_signer_without_decryption_refuses_encrypted_tokens() -> None:
    token = make(encrypt=True).dumps(SESSION)
    plain = SerializerSigner(SECRET, purpose="sealed", clock=lambda: NOW)
    with pytest.raises(BadSignature, match="encrypted one, and this signer does not decrypt"):
        plain.loads(token)
    with pytest.raises(BadSignature, match="does not decrypt"):
        make(typed=True).loads(token)


def test_decrypt_reads_encrypted_tokens_and_writes_signed_ones() -> None:
    # The first step of turning encryption on across a fleet, and the way back.
    reader = make(decrypt=True)
    assert reader.loads(make(encrypt=True).dumps(SESSION)) == SESSION
    token = reader.dumps(SESSION)
    assert not token.startswith("x")
    assert SerializerSigner(SECRET, purpose="sealed", clock=lambda: NOW).loads(token) == SESSION
    loaded = reader.load_token(make(encrypt=True).dumps(SESSION))
    assert loaded.encrypted
    assert not loaded.rewrite


def test_a_typed_encrypted_token_is_refused_by_an_untyped_reader() -> None:
    token = make(encrypt=True, typed=True).dumps({"d": date(2026, 1, 1)})
    with pytest.raises(BadSignature, match="typed token"):
        make(encrypt=True).loads(token)
    # and an untyped encrypted token is read by a typed reader as the JSON it holds
    assert make(encrypt=True, typed=True).loads(make(encrypt=True).dumps({" t": [1]})) == {" t": [1]}


@pytest.mark.parametrize(
    ("age", "max_age", "expires_in", "outcome"),
    [
        (0, None, None, "loads"),
        (-60, None, None, "loads"),  # another server's clock, within CLOCK_SKEW
        (-61, None, None, "future"),
        (60, 60, None, "loads"),
        (61, 60, None, "expired"),
        (29, None, 30, "loads"),
        (30, None, 30, "expired"),
    ],
)
def test_times_as_in_signed_tokens(age: int, max_age: int | None, expires_in: int | None, outcome: str) -> None:
    token = make(encrypt=True).dumps(SESSION, expires_in=expires_in)
    reader = make(encrypt=True, max_age=max_age, now=NOW + age)
    if outcome == "loads":
        assert reader.loads(token) == SESSION
    elif outcome == "expired":
        with pytest.raises(SignatureExpired):
            reader.loads(token)
    else:
        with pytest.raises(BadSignature, match="future") as refused:
            reader.loads(token)
        assert not isinstance(refused.value, SignatureExpired)


def test_max_age_given_to_loads_overrides() -> None:
    token = make(encrypt=True).dumps(SESSION)
    reader = make(encrypt=True, now=NOW + 100)
    with pytest.raises(SignatureExpired) as expired:
        reader.loads(token, max_age=50)
    assert expired.value.expired_at == NOW + 50


def sealed_token(signer: ExtendedSerializerSigner, plaintext: bytes) -> str:
    """A token of any plaintext under the signer's key: what only the key's holder can make."""
    keys = signer._encryption
    return "x" + keys.key_id.decode() + base64.urlsafe_b64encode(enc.seal(keys, plaintext)).decode().rstrip("=")


ISSUED = NOW.to_bytes(4, "big")


@pytest.mark.parametrize(
    ("plaintext", "reason"),
    [
        (b"", "too short"),
        (bytes([0]) + ISSUED[:3], "too short"),
        (bytes([64]) + ISSUED + b"{}", "unknown encrypted token flags"),
        (bytes([128]) + ISSUED + b"{}", "unknown encrypted token flags"),
        (bytes([48]) + ISSUED + b"{}", "unknown encrypted token flags"),
        (bytes([2]) + ISSUED + b"{}", "too short"),  # an expiry flagged, three bytes of it
        (bytes([8]) + ISSUED + b"1234", "too short"),
        (bytes([0]) + ISSUED + b"{", "unreadable payload"),
        (bytes([0]) + ISSUED + b"\xff", "unreadable payload"),
        (bytes([4]) + ISSUED + "\u00e9".encode(), "unreadable payload"),  # Python json payloads are ASCII
        (bytes([32]) + ISSUED + b"not zstd", "unreadable payload"),
        (bytes([16]) + ISSUED + bytes([200]) + b"x", "unreadable payload"),
        (bytes([32]) + ISSUED + zlib.compress(b"{}"), "unreadable payload"),
        (bytes([1]) + ISSUED + b"{}", "typed token"),
        (bytes([0]) + (NOW + 3600).to_bytes(4, "big") + b"{}", "future"),
    ],
)
def test_a_malformed_plaintext_is_a_bad_signature(plaintext: bytes, reason: str) -> None:
    signer = make(encrypt=True)
    with pytest.raises(BadSignature, match=reason):
        signer.loads(sealed_token(signer, plaintext))


def test_a_payload_over_the_decompression_limit_is_refused() -> None:
    signer = make(encrypt=True, max_decompressed_size=64)
    with pytest.raises(BadSignature, match="too large"):
        signer.loads(sealed_token(signer, bytes([0]) + ISSUED + b'"' + b"a" * 100 + b'"'))
    with pytest.raises(ValueError, match="max_decompressed_size"):
        signer.dumps("a" * 100)


def test_a_well_formed_plaintext_of_every_flag_loads() -> None:
    signer = make(encrypt=True, typed=True)
    header = ISSUED + (NOW + 60).to_bytes(4, "big") + b"sessid!!"
    assert signer.load_token(sealed_token(signer, bytes([1 | 2 | 8]) + header + b'{" t":[1]}')).value == (1,)
    assert signer.loads(sealed_token(signer, bytes([4]) + ISSUED + b"123456789012345678901234567890")) == int(
        "123456789012345678901234567890"
    )


def test_values_orjson_refuses_are_written_by_json_and_flagged() -> None:
    signer = make(encrypt=True)
    value = {"big": 2**70, "text": "lone \ud800"}
    assert signer.loads(signer.dumps(value)) == value


def test_the_token_length_limit_holds() -> None:
    signer = make(encrypt=True, max_token_length=100)
    with pytest.raises(ValueError, match="max_token_length=100"):
        signer.dumps({"v": "x" * 100})
    with pytest.raises(BadSignature, match="too long"):
        signer.loads("x" * 101)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"encrypt": True, "format": 1}, ValueError, "format=1"),
        ({"compress_encrypted": True}, ValueError, "encrypt=True"),
        ({"decrypt": True, "compress_encrypted": True}, ValueError, "encrypt=True"),
        ({"encrypt": 1}, TypeError, "encrypt must be True or False"),
        ({"decrypt": "yes"}, TypeError, "decrypt must be True or False"),
    ],
)
def test_configuration_mistakes(options: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        SerializerSigner(SECRET, purpose="sealed", **options)


def test_get_signer_caches_encrypting_signers_apart() -> None:
    clear_signer_cache()
    signer = get_signer(SECRET, purpose="sealed", encrypt=True)
    assert get_signer(SECRET, purpose="sealed", encrypt=True) is signer
    assert get_signer(SECRET, purpose="sealed") is not signer
    assert signer.loads(signer.dumps(SESSION)) == SESSION
    assert "encrypt=True" in repr(signer)
    clear_signer_cache()


def test_without_cryptography_an_encrypting_signer_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(ImportError, match=r"blake2sign-web\[encrypted\]"):
        SerializerSigner(SECRET, purpose="sealed", encrypt=True)
    with pytest.raises(ImportError, match="cryptography"):
        SerializerSigner(SECRET, purpose="sealed", decrypt=True)
    # Everything else works without it.
    assert SerializerSigner(SECRET, purpose="sealed", typed=True).loads(
        SerializerSigner(SECRET, purpose="sealed", typed=True).dumps((1,))
    ) == (1,)


def test_plain_and_typed_signers_never_import_cryptography() -> None:
    code = (
        "import sys\n"
        "from blake2sign_web import SerializerSigner\n"
        "s = SerializerSigner('x' * 32, purpose='p', typed=True)\n"
        "s.loads(s.dumps((1,)))\n"
        "assert not any(name.startswith('cryptography') for name in sys.modules), 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_standard_alphabet_is_refused() -> None:
    # Found by the mutation property: pybase64 reads "+" and "/" as "-" and "_" (a DeprecationWarning), so
    # without a check the same token had a second spelling that decrypted.
    signer = make(encrypt=True)
    token = next(t for t in (signer.dumps({"n": n}) for n in range(1000)) if "-" in t[2:] and "_" in t[2:])
    for respelled in (token.replace("-", "+"), token.replace("_", "/")):
        assert b64(respelled[2:].replace("+", "-").replace("/", "_")) == b64(token[2:])
        with pytest.raises(BadSignature, match="malformed"):
            signer.loads(respelled)
