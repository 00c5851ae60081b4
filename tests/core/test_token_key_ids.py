"""Key ids in session tokens: the character after a format-2 or encrypted token's marker picks the key to try."""

from __future__ import annotations

import base64
import itertools
from typing import Any

import pytest

from blake2sign_web import BadSignature, SerializerSigner, dictionaries
from blake2sign_web.exceptions import SignatureMismatch
from blake2sign_web.signing import encryption as enc
from blake2sign_web.signing.keys import derive_key, key_id

NOW = 1_800_000_000
SECRET = "a test secret for key ids, 0123456789"
OLD = "the old secret for key ids, 9876543210"
VALUE = {"_auth_user_id": "42", "cart": [1, 2, 3]}


def make(secret: str = SECRET, **options: Any) -> SerializerSigner:
    options.setdefault("dictionary", dictionaries.SESSION)
    return SerializerSigner(secret, purpose="sessions", clock=lambda: NOW, **options)


def id_char(secret: str, domain: str, hasher: str = "blake2b") -> str:
    return key_id(derive_key(secret.encode(), domain=domain, purpose="sessions", hasher=hasher), hasher)[0]


def sharing_id_with(secret: str, domain: str) -> str:
    """A secret whose key id starts with the same character as ``secret``'s (one in 64 does)."""
    wanted = id_char(secret, domain)
    return next(
        other
        for other in (f"another secret of the key id tests {n:06d}" for n in itertools.count())
        if id_char(other, domain) == wanted
    )


@pytest.mark.parametrize("hasher", ["blake2b", "blake2s", "blake3", "hmac-sha256"])
@pytest.mark.parametrize("tag_size", [16, 32])
def test_every_format_2_token_names_its_key(hasher: str, tag_size: int) -> None:
    token = make(hasher=hasher, tag_size=tag_size).dumps(VALUE)
    assert token[1] == id_char(SECRET, f"serializer.format2.tag{tag_size}", hasher)


def test_typed_and_encrypted_tokens_name_their_own_keys() -> None:
    assert make(typed=True).dumps(VALUE)[1] == id_char(SECRET, "serializer.typed.format2.tag16")
    assert make(encrypt=True).dumps(VALUE)[1] == id_char(SECRET, enc.DOMAIN)


def test_the_key_id_costs_one_character() -> None:
    # Against the same token without it: format 2's marker, body and tag, as docs/format.md had them before.
    for value in ({}, VALUE, {"text": "x" * 600}):
        token = make().dumps(value)
        assert len(token) == 1 + 1 + len(token[2:-22]) + 22
        assert base64.urlsafe_b64decode(token[2:-22] + "==")[:4] == NOW.to_bytes(4, "big")


@pytest.mark.parametrize("options", [{}, {"typed": True}, {"encrypt": True}])
def test_a_token_of_a_retired_key_is_read_and_marked_for_rewriting(options: dict[str, Any]) -> None:
    token = make(OLD, **options).dumps(VALUE)
    loaded = make(fallbacks=[OLD], **options).load_token(token)
    assert (loaded.value, loaded.used_fallback) == (VALUE, True)
    current = make(fallbacks=[OLD], **options).load_token(make(**options).dumps(VALUE))
    assert (current.value, current.used_fallback) == (VALUE, False)


def test_the_key_id_picks_the_key_instead_of_trying_each() -> None:
    # Text naming the current key but tagged by the retired one: a reader trying every key would accept it.
    reader = make(fallbacks=[OLD])
    old = make(OLD)
    assert reader._format2_id != old._format2_id  # these two secrets' ids differ
    text = old.dumps(VALUE)[:-22]
    renamed = (text[0] + reader._format2_id.decode() + text[2:]).encode()
    with pytest.raises(SignatureMismatch, match="signature does not match"):
        reader.loads(old._seal(renamed, old._format2))


@pytest.mark.parametrize("options", [{}, {"encrypt": True}])
def test_an_id_no_key_has_is_refused_before_any_hashing(options: dict[str, Any]) -> None:
    signer = make(**options)
    token = signer.dumps(VALUE)
    named = {token[1], id_char(SECRET, "serializer.typed.format2.tag16")}
    unknown = next(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" if c not in named)
    with pytest.raises(BadSignature, match="unknown key id"):
        signer.loads(token[0] + unknown + token[2:])


@pytest.mark.parametrize(("options", "domain"), [({}, "serializer.format2.tag16"), ({"encrypt": True}, enc.DOMAIN)])
def test_keys_sharing_an_id_are_both_tried_in_order(options: dict[str, Any], domain: str) -> None:
    twin = sharing_id_with(SECRET, domain)
    reader = make(fallbacks=[twin], **options)
    by_twin = make(twin, **options).dumps(VALUE)
    mine = make(**options).dumps(VALUE)
    assert by_twin[1] == mine[1]
    assert reader.load_token(by_twin).used_fallback
    assert not reader.load_token(mine).used_fallback
    # And with the twin current, the first key of the id is the twin's: a token of the other is a fallback's.
    swapped = make(twin, fallbacks=[SECRET], **options)
    assert swapped.load_token(mine).used_fallback
    assert not swapped.load_token(by_twin).used_fallback


def test_format_1_tokens_carry_no_id_and_are_tried_under_every_key() -> None:
    token = make(OLD, format=1).dumps(VALUE)
    assert token[0] in "01234567"
    loaded = make(fallbacks=["a third secret, long enough 000", OLD]).load_token(token)
    assert (loaded.value, loaded.used_fallback) == (VALUE, True)


@pytest.mark.parametrize("options", [{}, {"typed": True}, {"encrypt": True}])
def test_a_changed_token_naming_a_retired_key_is_refused(options: dict[str, Any]) -> None:
    # The key id picks the retired key; every character must still verify under it.
    reader = make(fallbacks=[OLD], **options)
    token = make(OLD, **options).dumps(VALUE)
    assert reader.load_token(token).used_fallback
    for index in range(2, len(token)):  # after the marker and the key id
        changed = token[:index] + ("A" if token[index] != "A" else "B") + token[index + 1 :]
        with pytest.raises(BadSignature):
            reader.loads(changed)


def test_the_id_tables_reuse_the_keyed_states_instead_of_keying_again() -> None:
    # Each secret's key is keyed once per signer: the table a token's id picks from holds the same hash states
    # as the keys a token is signed with, for signed tokens, encrypted tokens and links alike.
    from blake2sign_web import URLSigner

    signer = make(fallbacks=[OLD], encrypt=True)
    states = {id(signer._format2.current), *map(id, signer._format2.fallbacks)}
    named = {id(state) for entry in signer._format2_named if entry for state in (entry[1].current, *entry[1].fallbacks)}
    assert named == states
    sealing = signer._encryption  # type: ignore[attr-defined]
    assert {id(s) for entry in sealing.named if entry for s in entry[0]} == {
        id(sealing.current),
        *map(id, sealing.fallbacks),
    }
    links = URLSigner(SECRET, purpose="downloads", fallbacks=[OLD])
    by_id = {id(s) for keys, _ in links._by_key_id.values() for s in (keys.current, *keys.fallbacks)}
    assert by_id == {id(links._format1.current), *map(id, links._format1.fallbacks)}
