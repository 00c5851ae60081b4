"""Format 2: markers, session ids, tag sizes, dictionaries, keys apart from format 1, and format 1 still read."""

from __future__ import annotations

import base64
import struct
from typing import Any

import pytest

from blake2sign_web import BadSignature, SerializerSigner, dictionaries
from blake2sign_web.signing.serializer import LAYOUTS, NO_COMPRESSION, ZSTD, ZSTD_DICTIONARY

NOW = 1_800_000_000
SECRET = "a test secret, long enough: 0123456789"
OLD = "the old secret, being rotated out"
LOGIN = {
    "_auth_user_id": "42",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
}
SESSION_ID = bytes.fromhex("0123456789abcdef")


def make(**options: Any) -> SerializerSigner:
    """A signer as the session adapters configure it: with the session dictionary."""
    options.setdefault("dictionary", dictionaries.SESSION)
    return SerializerSigner(SECRET, purpose="test", clock=lambda: NOW, **options)


def test_the_core_default_is_format_2_without_a_dictionary() -> None:
    signer = SerializerSigner(SECRET, purpose="test", clock=lambda: NOW)
    assert (signer.format, signer.tag_size, signer.dictionary, signer.compression_threshold) == (2, 16, None, 512)
    assert signer.dumps(LOGIN)[0] == "A"  # under the threshold: uncompressed
    assert signer.dumps({"items": ["same text again"] * 50})[0] == "g"  # plain zstd


def test_marker_table() -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    format_2 = {marker.decode() for marker, layout in LAYOUTS.items() if layout.format == 2}
    assert format_2 == set(alphabet[:48])  # "A" to "v"
    assert {marker.decode() for marker, layout in LAYOUTS.items() if layout.format == 1} == set("01234567")
    for index, marker in enumerate(alphabet[:48]):
        layout = LAYOUTS[marker.encode()]
        assert layout.tag_size == (32 if index & 1 else 16)
        assert layout.expires == bool(index & 2)
        assert layout.python_json == bool(index & 4)
        assert layout.session_id == bool(index & 8)
        assert layout.compression == (NO_COMPRESSION, ZSTD_DICTIONARY, ZSTD)[index >> 4]
        assert layout.header_size == 4 + 4 * layout.expires + 8 * layout.session_id + (index >> 4 == 1)


def test_login_session_is_dictionary_compressed_with_a_16_byte_tag() -> None:
    signer = make()
    token = signer.dumps(LOGIN)
    assert token[0] == "Q"  # dictionary, no expiry, orjson, no session id, 16-byte tag
    assert token[1] == signer._format2_id.decode()  # the key id
    body = base64.urlsafe_b64decode(token[2:-22] + "==")
    assert struct.unpack(">I", body[:4])[0] == NOW
    assert body[4] == dictionaries.SESSION
    assert len(token) <= 111  # 175 bytes of JSON, against 231 characters from signed_cookies
    assert signer.loads(token) == LOGIN


@pytest.mark.parametrize("hasher", ["blake2b", "blake2s", "blake3"])
@pytest.mark.parametrize("tag_size", [16, 32])
@pytest.mark.parametrize("expires_in", [None, 3600])
def test_session_id_round_trips(hasher: str, tag_size: int, expires_in: int | None) -> None:
    signer = make(hasher=hasher, tag_size=tag_size)
    token = signer.dumps(LOGIN, session_id=SESSION_ID, expires_in=expires_in)
    assert LAYOUTS[token[:1].encode()].session_id
    loaded = signer.load_token(token)
    assert loaded.session_id == SESSION_ID
    assert loaded.value == LOGIN
    assert loaded.expires_at == (None if expires_in is None else NOW + expires_in)
    value, issued_at, expires_at, used_fallback = loaded  # still four items
    assert (value, issued_at, expires_at, used_fallback) == (LOGIN, NOW, loaded.expires_at, False)
    assert signer.load_token(signer.dumps(LOGIN)).session_id is None


def test_session_id_is_covered_by_the_mac() -> None:
    signer = make(compression=None)
    token = signer.dumps({"a": 1}, session_id=SESSION_ID)
    body = bytearray(base64.urlsafe_b64decode(token[1:-22] + "=="))
    body[4] ^= 1  # another session id, same MAC
    forged = token[0] + base64.urlsafe_b64encode(bytes(body)).decode().rstrip("=") + token[-22:]
    assert forged != token
    with pytest.raises(BadSignature, match="signature does not match"):
        signer.loads(forged)


@pytest.mark.parametrize("bad", [b"", b"1234567", b"123456789", "01234567", bytearray(8), 12345678])
def test_session_id_must_be_8_bytes(bad: Any) -> None:
    with pytest.raises(ValueError, match="session_id must be exactly 8 bytes"):
        make().dumps({}, session_id=bad)


def test_format_1_cannot_carry_a_session_id() -> None:
    with pytest.raises(ValueError, match="format 1 tokens cannot carry a session_id"):
        make(format=1).dumps({}, session_id=SESSION_ID)


def test_tag_sizes() -> None:
    short, long = make(tag_size=16), make(tag_size=32)
    assert len(long.dumps(LOGIN)) - len(short.dumps(LOGIN)) == 43 - 22
    assert long.dumps(LOGIN)[0] == "R"  # bit 1: a 32-byte tag
    assert long.loads(long.dumps(LOGIN)) == LOGIN


@pytest.mark.parametrize("hasher", ["blake2b", "blake2s", "blake3"])
def test_a_verifier_accepts_format_2_only_at_its_own_tag_size(hasher: str) -> None:
    short, long = make(tag_size=16, hasher=hasher), make(tag_size=32, hasher=hasher)
    with pytest.raises(BadSignature):
        short.loads(long.dumps(LOGIN))
    with pytest.raises(BadSignature):
        long.loads(short.dumps(LOGIN))
    # Keys differ by tag size: the first 16 bytes of a 32-byte tag are not the 16-byte tag.
    text = short.dumps(LOGIN)[:-22]
    assert long._seal(text.encode(), long._format2)[len(text) : len(text) + 21] != short.dumps(LOGIN)[-22:][:21]


def test_a_marker_claiming_another_tag_size_is_refused_after_the_mac() -> None:
    signer = make(compression=None)
    token = signer.dumps("x")
    claiming_32 = "B" + token[1:-22]  # what only the key holder could MAC
    with pytest.raises(BadSignature, match="another tag size"):
        signer.loads(signer._seal(claiming_32.encode(), signer._format2))


def test_format_1_and_format_2_keys_are_unrelated() -> None:
    signer = make(compression=None)
    text = signer.dumps("x", expires_in=None)[:-22]
    format_1_tag = signer._seal(b"0" + text[1:].encode(), signer._format1)[-43:]
    format_2_tag = signer._seal(text.encode(), signer._format2)[-22:]
    assert format_1_tag[:21] != format_2_tag[:21]
    # A format-1 token re-marked as format 2, with its tag cut to 22 characters, does not verify.
    old = make(format=1, compression=None).dumps("x")
    with pytest.raises(BadSignature):
        signer.loads("A" + old[1:-43] + old[-43:-21])


@pytest.mark.parametrize("hasher", ["blake2b", "blake2s", "blake3"])
@pytest.mark.parametrize("value", [LOGIN, {"items": ["same text again"] * 50}, {}, "x" * 600])
def test_format_1_tokens_load_under_the_new_defaults(hasher: str, value: Any) -> None:
    old = make(hasher=hasher, format=1, compression_threshold=0)
    token = old.dumps(value, expires_in=60)
    assert token[0] in "01234567"
    assert len(token) > 43
    loaded = make(hasher=hasher).load_token(token)
    assert (loaded.value, loaded.expires_at, loaded.session_id) == (value, NOW + 60, None)
    # and the other way: an old-format writer still reads what the new default writes
    assert old.loads(make(hasher=hasher).dumps(value)) == value


def test_format_1_with_the_old_level_15_frames_still_decompresses() -> None:
    import zstandard

    payload = b'{"_auth_user_id":"42","_auth_user_backend":"django.contrib.auth.backends.ModelBackend"}'
    params = zstandard.ZstdCompressionParameters.from_level(
        15,
        source_size=256,
        format=zstandard.FORMAT_ZSTD1_MAGICLESS,
        write_content_size=True,
        write_checksum=False,
        write_dict_id=False,
    )
    frame = zstandard.ZstdCompressor(compression_params=params).compress(payload)
    signer = make()
    body = base64.urlsafe_b64encode(struct.pack(">I", NOW) + frame).rstrip(b"=")
    assert signer.loads(signer._seal(b"1" + body, signer._format1)) == {
        "_auth_user_id": "42",
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    }


@pytest.mark.parametrize("format", [1, 2])
def test_fallback_secrets_verify_both_formats(format: int) -> None:
    old = SerializerSigner(OLD, purpose="test", clock=lambda: NOW, format=format, dictionary=1)
    new = SerializerSigner(SECRET, purpose="test", clock=lambda: NOW, fallbacks=[OLD])
    loaded = new.load_token(old.dumps(LOGIN))
    assert (loaded.value, loaded.used_fallback) == (LOGIN, True)
    assert new.load_token(new.dumps(LOGIN)).used_fallback is False


def test_unknown_dictionary_id_under_a_valid_mac_is_bad_signature() -> None:
    signer = make()
    token = signer.dumps(LOGIN)
    body = bytearray(base64.urlsafe_b64decode(token[2:-22] + "=="))
    assert body[4] == 1
    body[4] = 200
    forged = signer._seal(token[:2].encode() + base64.urlsafe_b64encode(bytes(body)).rstrip(b"="), signer._format2)
    with pytest.raises(BadSignature, match="unknown dictionary id 200"):
        signer.loads(forged)


@pytest.mark.parametrize("marker", "wxyz89-_")
def test_unused_markers_are_refused(marker: str) -> None:
    signer = make()
    token = signer.dumps("x")
    forged = signer._seal(marker.encode() + token[1:-22].encode(), signer._format2)
    with pytest.raises(BadSignature, match="unknown token format"):
        signer.loads(forged)


def test_format_1_writer_ignores_the_dictionary() -> None:
    token = make(format=1, compression_threshold=0).dumps(LOGIN)
    assert token[0] in "13"  # plain zstd or nothing, never a dictionary
    assert make().loads(token) == LOGIN


def test_compression_none_ignores_the_dictionary() -> None:
    assert make(compression=None).dumps(LOGIN)[0] == "A"
    assert make(dictionary=None).dumps(LOGIN)[0] == "A"  # below the threshold without a dictionary


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tag_size": 20}, "tag_size must be 16 or 32"),
        ({"tag_size": True}, "tag_size must be 16 or 32"),
        ({"format": 3}, "format must be 2, or 1"),
        ({"format": True}, "format must be 2, or 1"),
        ({"dictionary": 99}, "dictionary must be a shipped dictionary id or None: unknown dictionary id 99"),
        ({"dictionary": True}, "dictionary must be a shipped dictionary id or None"),
    ],
)
def test_bad_format_2_configuration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SerializerSigner(SECRET, purpose="p", **kwargs)


def test_repr_names_the_format_options() -> None:
    text = repr(make(tag_size=32, format=1, dictionary=None))
    assert "tag_size=32" in text
    assert "format=1" in text
    assert "dictionary=None" in text
    assert SECRET not in text


def test_every_single_character_change_is_rejected_with_session_id_and_dictionary() -> None:
    signer = make()
    token = signer.dumps(LOGIN, session_id=SESSION_ID, expires_in=60)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for index in range(len(token)):
        for replacement in alphabet:
            if replacement == token[index]:
                continue
            with pytest.raises(BadSignature):
                signer.loads(token[:index] + replacement + token[index + 1 :])


def test_zstd_without_dictionary_in_format_2() -> None:
    signer = make(dictionary=None, compression_threshold=0)
    value = {"items": ["same text again"] * 50}
    token = signer.dumps(value)
    assert LAYOUTS[token[:1].encode()].compression == ZSTD
    assert make().loads(token) == value  # any reader: the marker says which
