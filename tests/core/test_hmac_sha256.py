"""HMAC-SHA-256 as docs/link-format.md writes it: the key derivation, the tag and the key id, computed here from
the page's formulas with hashlib and hmac alone, must be what the signers compute."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from blake2sign_web.exceptions import BadSignature, SignatureMismatch
from blake2sign_web.links.signer import URLSigner
from blake2sign_web.signing.keys import HASHERS, derive_key, key_id
from blake2sign_web.signing.serializer import SerializerSigner

SECRET = "hmac-sha256 test secret, not short"


def material(domain: str, purpose: str, secret: str) -> bytes:
    parts = (domain.encode(), purpose.encode(), secret.encode())
    return b"".join(len(part).to_bytes(4, "big") + part for part in parts)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_the_link_key_is_hkdf_extract_of_the_key_material() -> None:
    expected = hmac.digest(b"blake2sign_web hmac-sha256 key v1", material("url", "downloads", SECRET), "sha256")
    assert derive_key(SECRET.encode(), domain="url", purpose="downloads", hasher="hmac-sha256") == expected


def test_a_links_signature_is_hmac_sha256_of_its_canonical_text() -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256", clock=lambda: 1_800_000_000)
    link = signer.sign("/files/a b.pdf?x=2", expires_in=60)
    key = hmac.digest(b"blake2sign_web hmac-sha256 key v1", material("url", "downloads", SECRET), "sha256")
    kid = b64(hashlib.sha256(b"blake2sign_web key id v1\x00hmac-sha256\x00" + key).digest())[:6]
    assert signer.key_id == kid
    text = f"url1\n\n/files/a%20b.pdf\nexpires=1800000060&kid={kid}&x=2\n".encode()
    assert (
        link == f"/files/a%20b.pdf?x=2&expires=1800000060&kid={kid}&signature={b64(hmac.digest(key, text, 'sha256'))}"
    )


def test_session_tokens_under_hmac_sha256_are_apart_from_every_other_hasher() -> None:
    token = SerializerSigner(SECRET, purpose="sessions", hasher="hmac-sha256").dumps({"user": 1})
    assert SerializerSigner(SECRET, purpose="sessions", hasher="hmac-sha256").loads(token) == {"user": 1}
    for other in set(HASHERS) - {"hmac-sha256"}:
        with pytest.raises(BadSignature):
            SerializerSigner(SECRET, purpose="sessions", hasher=other).loads(token)


def test_key_ids_name_keys_and_nothing_else() -> None:
    keys = {hasher: derive_key(SECRET.encode(), domain="url", purpose="p", hasher=hasher) for hasher in HASHERS}
    ids = {key_id(key, hasher) for hasher, key in keys.items()}
    assert len(ids) == len(HASHERS)
    assert all(len(name) == 6 for name in ids)
    old = URLSigner(SECRET + " old", purpose="p", hasher="hmac-sha256")
    rotated = URLSigner(SECRET, purpose="p", hasher="hmac-sha256", fallbacks=[SECRET + " old"])
    assert rotated.verify_url(old.sign("/a")) is True  # the old key, picked by its id
    with pytest.raises(SignatureMismatch, match="unknown key id"):
        URLSigner(SECRET, purpose="p", hasher="hmac-sha256").verify(old.sign("/a"))
