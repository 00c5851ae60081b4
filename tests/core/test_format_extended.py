"""docs/format.md's vectors of typed and encrypted tokens, checked step by step against the code."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web import SerializerSigner
from blake2sign_web.signing import encryption as enc
from blake2sign_web.signing.formats import PLAINTEXT_LAYOUTS
from blake2sign_web.signing.keys import keyed_hash
from blake2sign_web.signing.serializer import ExtendedSerializerSigner
from blake2sign_web.signing.typed import decode

from .test_format import key_id_by_hand

FORMAT_DOC = Path(__file__).resolve().parents[2] / "docs" / "format.md"
BLOCKS = re.findall(r"```json\n(.*?)```", FORMAT_DOC.read_text(), re.DOTALL)
VECTORS: list[dict[str, Any]] = [vector for block in BLOCKS[1:] for vector in json.loads(block)]


def signer_of(vector: dict[str, Any]) -> ExtendedSerializerSigner:
    issued_at = vector["issued_at"]
    signer = SerializerSigner(
        vector["secret"],
        purpose=vector["purpose"],
        hasher=vector["hasher"],
        typed=vector.get("typed", False),
        encrypt=vector["kind"] == "encrypted",
        compress_encrypted=vector.get("compress_encrypted", False),
        dictionary=vector.get("dictionary"),
        clock=lambda: issued_at,
    )
    assert isinstance(signer, ExtendedSerializerSigner)
    return signer


def test_the_vectors_cover_every_hasher_and_flag() -> None:
    encrypted = [v for v in VECTORS if v["kind"] == "encrypted"]
    assert {v["hasher"] for v in encrypted} == {"blake2b", "blake2s", "blake3"}
    flags = [bytes.fromhex(v["plaintext"])[0] for v in encrypted]
    layouts = [PLAINTEXT_LAYOUTS[flag] for flag in flags]
    for fact in ("typed", "expires", "python_json", "session_id"):
        assert any(getattr(layout, fact) for layout in layouts), fact
    assert {layout.compression for layout in layouts} >= {0, 2}
    assert {v["kind"] for v in VECTORS} == {"encrypted", "typed"}


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['kind']}-{v['hasher']}-{v['token'][:6]}")
def test_vector(vector: dict[str, Any]) -> None:
    signer = signer_of(vector)
    value = decode(vector["input"]) if vector.get("typed") else vector["input"]
    session_id = bytes.fromhex(vector["session_id"]) if "session_id" in vector else None
    loaded = signer.load_token(vector["token"])
    assert loaded.value == value
    assert json.dumps(loaded.value, default=repr) == json.dumps(value, default=repr)  # big integers stay integers
    assert loaded.issued_at == vector["issued_at"]
    assert loaded.session_id == session_id
    if "expires_in" in vector:
        assert loaded.expires_at == vector["issued_at"] + vector["expires_in"]
    if vector["kind"] == "typed":
        assert vector["token"][1] == key_id_by_hand(vector, "serializer.typed.format2.tag16")
    if vector["kind"] == "encrypted":
        check_steps(vector)
        nonce = bytes.fromhex(vector["nonce"])
        signer._random_bytes = lambda size: nonce
        assert loaded.encrypted
    token = signer.dumps(value, expires_in=vector.get("expires_in"), session_id=session_id)
    if not vector.get("compress_encrypted"):  # another zstd release may compress otherwise
        assert token == vector["token"]
    assert signer.loads(token) == value


def check_steps(vector: dict[str, Any]) -> None:
    """Each step of docs/format.md's "Encrypted tokens", done here by hand (cryptography's AESGCM alone)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce, plaintext = bytes.fromhex(vector["nonce"]), bytes.fromhex(vector["plaintext"])
    state = keyed_hash(
        vector["secret"].encode(), domain="serializer.encrypted.x1", purpose=vector["purpose"], hasher=vector["hasher"]
    )
    state.update(nonce)
    subkey = state.digest()[:32]
    assert subkey.hex() == vector["subkey"]
    aad = b"blake2sign_web x1\x00" + vector["purpose"].encode()
    body = nonce + AESGCM(subkey).encrypt(bytes(12), plaintext, aad)
    kid = key_id_by_hand(vector, "serializer.encrypted.x1")
    assert vector["token"] == "x" + kid + base64.urlsafe_b64encode(body).decode().rstrip("=")
    assert plaintext[1:5] == vector["issued_at"].to_bytes(4, "big")
    assert enc.unseal(signer_of(vector)._encryption, body, ord(kid)) == (plaintext, False)
