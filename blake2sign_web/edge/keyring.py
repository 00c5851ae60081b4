"""The keyring file: what a front server needs to check one purpose's links, and nothing that signs anything else.

It holds the purpose's derived link keys (HMAC-SHA-256, domain ``url``), each with its key id, the current key
first; the names of the link's parameters, the ignored ones and whether links bind the host. Never a secret:
a link key cannot sign a session, a token or another purpose's link (docs/link-format.md, "Keyring").
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

from ..links.signer import MAX_URL_LENGTH, URLSigner
from ..links.text import LINK_PARAMETERS, check_link_parameters
from ..signing.keys import derive_key, fallback_secrets, key_id, to_bytes

#: The value of a keyring's ``keyring`` field: its layout's version.
VERSION: Final = 1
#: The only algorithm a keyring holds: the one every edge runtime computes.
ALGORITHM: Final = "hmac-sha256"
#: ``URLSigner``'s parameter keywords as a keyring names them: ``signature_param`` is ``signature``.
PARAMETER_KEYS: Final = {option: option.removesuffix("_param") for option in LINK_PARAMETERS}


class Key(NamedTuple):
    id: str
    key: bytes


class Keyring(NamedTuple):
    """One purpose's link keys (the current one first) and the link options a verifier must know."""

    purpose: str
    keys: tuple[Key, ...]
    parameters: Mapping[str, str]  # URLSigner's keywords (signature_param, ...) and their names
    ignore: tuple[str, ...] = ()
    bind_host: bool = False
    max_url_length: int = MAX_URL_LENGTH

    def to_json(self) -> dict[str, Any]:
        return {
            "keyring": VERSION,
            "algorithm": ALGORITHM,
            "purpose": self.purpose,
            "keys": [{"id": k.id, "key": _b64(k.key)} for k in self.keys],
            "parameters": {PARAMETER_KEYS[option]: name for option, name in self.parameters.items()},
            "ignore": list(self.ignore),
            "bind_host": self.bind_host,
            "max_url_length": self.max_url_length,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def signer_options(self) -> dict[str, Any]:
        """``URLSigner``'s keywords for links these keys check (less the secrets)."""
        return {
            "purpose": self.purpose,
            "hasher": ALGORITHM,
            "ignore": self.ignore,
            "bind_host": self.bind_host,
            "max_url_length": self.max_url_length,
            **self.parameters,
        }


def make(
    secret: str | bytes,
    *,
    purpose: str,
    fallbacks: Iterable[str | bytes] = (),
    ignore: Iterable[str] = (),
    bind_host: bool = False,
    max_url_length: int = MAX_URL_LENGTH,
    **parameters: str,
) -> Keyring:
    """The keyring of the links ``URLSigner(secret, purpose=purpose, hasher="hmac-sha256", ...)`` signs: the same
    keywords, checked by the signer's own rules."""
    names: dict[str, Any] = {**LINK_PARAMETERS, **parameters}
    fallbacks = fallback_secrets(fallbacks)
    unknown = set(names) - set(LINK_PARAMETERS)
    if unknown:
        raise TypeError(f"unknown parameter keywords {sorted(unknown)}; the known ones: {', '.join(LINK_PARAMETERS)}")
    patterns = check_link_parameters(names, ignore)
    for pattern in patterns:
        if "[" in pattern:  # the verifiers read "*" and "?" only
            raise ValueError(f"ignore pattern {pattern!r}: an edge keyring takes '*' and '?' patterns, not '[...]'")
    # The signer checks the rest (the purpose, the URL limit) as it would for the origin.
    URLSigner(secret, purpose=purpose, fallbacks=fallbacks, hasher=ALGORITHM, max_url_length=max_url_length, **names)
    secrets = [to_bytes(secret)] + [to_bytes(old, "fallbacks") for old in fallbacks]
    keys = []
    for raw in secrets:
        key = derive_key(raw, domain=URLSigner.domain, purpose=purpose, hasher=ALGORITHM)
        keys.append(Key(key_id(key, ALGORITHM), key))
    return Keyring(purpose, tuple(keys), names, patterns, bool(bind_host), max_url_length)


def for_signer(signer: URLSigner, secret: str | bytes, fallbacks: Iterable[str | bytes] = ()) -> Keyring:
    """The keyring of ``signer``'s links (its purpose, parameter names, ignored names, host binding), given the
    secrets it was built with; ValueError unless it signs with HMAC-SHA-256 (no front server checks the others)."""
    if signer.hasher != ALGORITHM:
        raise ValueError(f"its links are signed with {signer.hasher!r}: a front server checks {ALGORITHM!r} only")
    names = {option: getattr(signer, option) for option in LINK_PARAMETERS}
    return make(
        secret,
        purpose=signer.purpose,
        fallbacks=fallbacks,
        ignore=signer.ignore,
        bind_host=signer.bind_host,
        max_url_length=signer.max_url_length,
        **names,
    )


def write(keyring: Keyring, path: Path) -> None:
    """Write ``keyring`` to ``path``, readable by its owner only: a link key signs that purpose's links."""
    path.touch(mode=0o600)
    os.chmod(path, 0o600)
    path.write_text(keyring.dumps())


def load(source: str | Path | Mapping[str, Any]) -> Keyring:
    """A keyring from its file, its JSON text's parsed value; ValueError for anything ``dumps`` would not write."""
    data = json.loads(Path(source).read_text()) if isinstance(source, (str, Path)) else source
    if not isinstance(data, Mapping) or data.get("keyring") != VERSION or data.get("algorithm") != ALGORITHM:
        raise ValueError(f"not a keyring of version {VERSION} for {ALGORITHM}")
    keys = tuple(Key(str(k["id"]), base64.urlsafe_b64decode(k["key"] + "==")) for k in data["keys"])
    if not keys or any(len(k.key) != 32 or key_id(k.key, ALGORITHM) != k.id for k in keys):
        raise ValueError("a keyring needs at least one key, each 32 bytes under its own id")
    by_name = {name: option for option, name in PARAMETER_KEYS.items()}
    parameters = {by_name[key]: value for key, value in data["parameters"].items()}
    return Keyring(
        str(data["purpose"]),
        keys,
        parameters,
        tuple(data.get("ignore", ())),
        bool(data.get("bind_host", False)),
        int(data.get("max_url_length", MAX_URL_LENGTH)),
    )


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
