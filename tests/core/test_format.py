"""docs/format.md's test vectors, checked against the code so the document cannot drift."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web import SerializerSigner, Signer
from blake2sign_web.signing.keys import derive_key
from blake2sign_web.signing.serializer import LAYOUTS, NO_COMPRESSION

FORMAT_DOC = Path(__file__).resolve().parents[2] / "docs" / "format.md"
VECTORS: list[dict[str, Any]] = json.loads(
    re.search(r"```json\n(.*?)```", FORMAT_DOC.read_text(), re.DOTALL).group(1)  # type: ignore[union-attr]
)


def test_vectors_cover_every_hasher_and_marker() -> None:
    assert {v["hasher"] for v in VECTORS} == {"blake2b", "blake2s", "blake3"}
    format_1 = [v for v in VECTORS if v["format"] == 1]
    format_2 = [v for v in VECTORS if v["format"] == 2]
    assert {v["token"][0] for v in format_1 if v["kind"] == "SerializerSigner"} == {"0", "1", "2", "4"}
    assert {v["hasher"] for v in format_2} == {"blake2b", "blake2s", "blake3"}
    layouts = [LAYOUTS[v["token"][:1].encode()] for v in format_2]
    assert {layout.compression for layout in layouts} == {0, 1, 2}  # none, zstd, zstd with a dictionary
    assert {layout.tag_size for layout in layouts} == {16, 32}
    assert all(any(getattr(layout, flag) for layout in layouts) for flag in ("expires", "python_json", "session_id"))


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['kind']}-{v['format']}-{v['hasher']}-{v['token'][0]}")
def test_vector(vector: dict[str, Any]) -> None:
    if vector["kind"] == "Signer":
        signer = Signer(vector["secret"], purpose=vector["purpose"], hasher=vector["hasher"])
        assert signer.sign(vector["input"]) == vector["token"]
        assert signer.unsign(vector["token"]) == vector["input"].encode()
        return
    issued_at = vector["issued_at"]
    value_signer = SerializerSigner(
        vector["secret"],
        purpose=vector["purpose"],
        hasher=vector["hasher"],
        compression_threshold=vector.get("compression_threshold", 512),
        dictionary=vector.get("dictionary", 1),
        tag_size=vector.get("tag_size", 16),
        format=vector["format"],
        clock=lambda: issued_at,
    )
    session_id = bytes.fromhex(vector["session_id"]) if "session_id" in vector else None
    loaded = value_signer.load_token(vector["token"])
    assert loaded.session_id == session_id
    assert loaded.value == vector["input"]
    assert json.dumps(loaded.value) == json.dumps(vector["input"])  # big integers stay integers
    assert loaded.issued_at == issued_at
    if "expires_in" in vector:
        assert loaded.expires_at == issued_at + vector["expires_in"]
    if LAYOUTS[vector["token"][:1].encode()].compression == NO_COMPRESSION:  # zstd releases may compress otherwise
        token = value_signer.dumps(vector["input"], expires_in=vector.get("expires_in"), session_id=session_id)
        assert token == vector["token"]
    # Every reader with the default options reads every vector of its tag size.
    if vector.get("tag_size", 16) == 16 or vector["format"] == 1:
        reader = SerializerSigner(
            vector["secret"], purpose=vector["purpose"], hasher=vector["hasher"], clock=lambda: issued_at
        )
        assert reader.loads(vector["token"]) == vector["input"]
    if vector["format"] == 2:
        assert vector["token"][1] == key_id_by_hand(vector, f"serializer.format2.tag{vector.get('tag_size', 16)}")


def key_id_by_hand(vector: dict[str, Any], domain: str) -> str:
    """The first character of docs/format.md's "Key ids", from hashlib alone (and the key of "Keys")."""
    key = derive_key(vector["secret"].encode(), domain=domain, purpose=vector["purpose"], hasher=vector["hasher"])
    digest = hashlib.sha256(b"blake2sign_web key id v1\x00" + vector["hasher"].encode() + b"\x00" + key).digest()
    return base64.urlsafe_b64encode(digest).decode()[0]
