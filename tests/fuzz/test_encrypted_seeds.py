"""The encrypted targets' seeds are what the fuzzer needs: tokens that decrypt, so it starts behind the GCM tag."""

from __future__ import annotations

from base64 import urlsafe_b64encode

from blake2sign_web.signing.encryption import seal
from blake2sign_web.signing.serializer import LoadedToken

from . import targets
from .test_seeds import seed_paths


def test_the_encrypted_token_seeds_decrypt() -> None:
    signers = targets.encrypted_signers()
    loaded = []
    for path in seed_paths("encrypted_loads"):
        data = path.read_bytes()
        if data[2:] == b"x":  # the one malformed seed
            continue
        token = signers[data[0] % len(signers)].load_token(data[2:])
        assert isinstance(token, LoadedToken), path.name
        assert token.encrypted
        loaded.append(token)
    assert len(loaded) >= 25
    assert any(token.used_fallback for token in loaded)
    assert any(token.session_id for token in loaded)


def test_most_plaintext_seeds_load() -> None:
    signers = targets.encrypted_signers()
    loaded = 0
    for path in seed_paths("encrypted_plaintext"):
        data = path.read_bytes()
        signer = signers[data[0] % len(signers)]
        sealed = seal(signer._encryption, data[2:], targets.FUZZ_NONCE)  # type: ignore[attr-defined]
        token = "x" + signer._encryption.key_id.decode() + urlsafe_b64encode(sealed).decode().rstrip("=")  # type: ignore[attr-defined]
        loaded += targets.refused(lambda signer=signer, token=token: signer.loads(token)) is not None
    assert loaded >= 20
