"""Every token kind round-trips any value it can carry, and rejects every change with BadSignature alone.

Token kinds: ``Signer``; ``SerializerSigner`` in format 2 (plain, zstandard, the session dictionary, 32-byte
tags, each hasher, a session id, an expiry) and format 1 (plain and zstandard); the session cookies of the
Django engine and of the Starlette middleware, made by their own signers. A change is any of
``strategies.mutated_tokens``, or the same text under a MAC of another key: another secret, purpose, hasher,
tag size or token kind. Another exception than BadSignature (or SignatureExpired) fails the property.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings as django_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SerializerSigner, SignatureExpired, Signer
from blake2sign_web.django.conf import PURPOSE as DJANGO_PURPOSE
from blake2sign_web.django.conf import session_config
from blake2sign_web.signing.serializer import CLOCK_SKEW, LAYOUTS
from blake2sign_web.starlette import SessionMiddleware
from tests.longrun import examples

from .strategies import any_json, mutated_tokens, sessions, shaped_json

SECRET = "a secret for the token properties 0123456789"
OTHER_SECRET = "another secret for the token properties 987"
#: A fixed issue time: the same value signed by two signers gives the same text, so only their MACs differ.
ISSUED = 1_790_000_000
#: Long enough for any drawn value: the core's own limit is not what these properties are about.
LONG = 64 * 1024


def fixed_clock() -> float:
    return ISSUED


@dataclass(frozen=True)
class Kind:
    """One kind of token: how to make one of a value, read it back, and how long its MAC is."""

    dump: Callable[[Any], str]
    load: Callable[[str], Any]
    tag_chars: int
    #: Any value the kind carries, and cheaper ones for properties about the token's shape.
    values: st.SearchStrategy[Any]
    shaped_values: st.SearchStrategy[Any]
    #: What ``dumps`` is given besides the value (an expiry, a session id).
    dump_options: dict[str, Any]


def serializer_kind(signer: SerializerSigner, **dump_options: Any) -> Kind:
    return Kind(
        lambda value: signer.dumps(value, **dump_options),
        signer.loads,
        (signer.tag_size * 8 + 5) // 6 if signer.format == 2 else 43,
        any_json,
        shaped_json,
        dump_options,
    )


def serializer(**options: Any) -> SerializerSigner:
    options = {"purpose": "properties", "clock": fixed_clock, "max_token_length": LONG, **options}
    return SerializerSigner(options.pop("secret", SECRET), **options)


SERIALIZER_OPTIONS: dict[str, dict[str, Any]] = {
    "format 2": {"compression": None},
    "format 2 zstd": {"compression_threshold": 0},
    "format 2 dictionary": {"dictionary": 1},
    "format 2 tag 32": {"dictionary": 1, "tag_size": 32},
    "format 2 blake2s": {"dictionary": 1, "hasher": "blake2s"},
    "format 2 blake3": {"dictionary": 1, "hasher": "blake3"},
    "format 2 max_age": {"dictionary": 1, "max_age": 60},
    "format 1": {"format": 1, "compression": None},
    "format 1 zstd": {"format": 1, "compression_threshold": 0},
    "format 1 blake3": {"format": 1, "hasher": "blake3"},
}
STARLETTE = SessionMiddleware(lambda scope, receive, send: None, SECRET)  # type: ignore[arg-type,return-value]
RAW = Signer(SECRET, purpose="properties", max_token_length=LONG)
KINDS: dict[str, Kind] = {
    "signer": Kind(RAW.sign, RAW.unsign, 43, st.binary(max_size=300), st.binary(max_size=200), {}),
    **{name: serializer_kind(serializer(**options)) for name, options in SERIALIZER_OPTIONS.items()},
    "format 2 session id": serializer_kind(serializer(dictionary=1), session_id=b"\x00\xff" * 4),
    "format 2 expiry": serializer_kind(serializer(dictionary=1), expires_in=3600),
    # The session cookies, made and read by the adapters' own signers (the session dictionary, 16-byte tags,
    # the 4096-byte browser limit checked before any hashing); Django's is read when used: settings may change.
    "django session": Kind(
        lambda value: session_config().signer.dumps(value),
        lambda token: session_config().signer.loads(token),
        22,
        sessions,
        shaped_json,
        {},
    ),
    "starlette session": serializer_kind(STARLETTE.signer),
}
SESSION_PURPOSES = {"django session": DJANGO_PURPOSE, "starlette session": STARLETTE.signer.purpose}


def session_secret(name: str) -> str:
    return str(django_settings.SECRET_KEY) if name == "django session" else SECRET


@pytest.mark.parametrize("name", sorted(SESSION_PURPOSES))
def test_the_session_signers_are_the_ones_their_foreign_signers_vary(name: str) -> None:
    # Otherwise a "foreign" signer could differ in more than the one option it names.
    same = SerializerSigner(session_secret(name), purpose=SESSION_PURPOSES[name], dictionary=1)
    assert same.loads(KINDS[name].dump({"user": 42})) == {"user": 42}


@functools.cache
def foreign_signers(name: str) -> dict[str, Any]:
    """Signers that must not accept ``name``'s tokens: one option changed, or another token kind."""
    if name == "signer":
        return {
            "secret": Signer(OTHER_SECRET, purpose="properties"),
            "purpose": Signer(SECRET, purpose="other"),
            "hasher blake2s": Signer(SECRET, purpose="properties", hasher="blake2s"),
            "hasher blake3": Signer(SECRET, purpose="properties", hasher="blake3"),
            "serializer": serializer(format=1, compression=None),  # format 1's "0" marker, another domain's key
        }
    if name in SESSION_PURPOSES:  # the adapter's own secret and purpose, one of them (or the hasher) changed
        secret, purpose = session_secret(name), SESSION_PURPOSES[name]
        return {
            "secret": SerializerSigner(OTHER_SECRET, purpose=purpose, dictionary=1),
            "purpose": SerializerSigner(secret, purpose="properties", dictionary=1),
            "hasher blake3": SerializerSigner(secret, purpose=purpose, dictionary=1, hasher="blake3"),
        }
    options = SERIALIZER_OPTIONS.get(name, {"dictionary": 1})
    others = {
        "secret": serializer(**options, secret=OTHER_SECRET),
        "purpose": serializer(**{**options, "purpose": "other"}),
        "tag size": serializer(**{**options, "tag_size": 16 if options.get("tag_size") == 32 else 32}),
    }
    for hasher in ("blake2b", "blake2s", "blake3"):
        if options.get("hasher", "blake2b") != hasher:
            others[f"hasher {hasher}"] = serializer(**{**options, "hasher": hasher})
    if options.get("format") == 1:
        del others["tag size"]  # format 1 has one tag size
    return others


def assert_rejected(load: Callable[[str], Any], token: str) -> None:
    with pytest.raises(BadSignature):
        load(token)


@settings(max_examples=examples(1500), deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.data())
def test_every_kind_round_trips_any_value(name: str, data: st.DataObject) -> None:
    kind = KINDS[name]
    value = data.draw(kind.values)
    assert kind.load(kind.dump(value)) == value


@settings(max_examples=examples(6500), deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.data())
def test_every_change_to_a_token_is_rejected_with_bad_signature(name: str, data: st.DataObject) -> None:
    kind = KINDS[name]
    value = data.draw(kind.shaped_values)
    token = kind.dump(value)
    _, changed = data.draw(mutated_tokens(token, kind.tag_chars))
    if changed == token:  # no change after all (a digit's case): still the token it was
        assert kind.load(changed) == value
        return
    assert_rejected(kind.load, changed)


@settings(max_examples=examples(1500), deadline=None)
@given(st.sampled_from(sorted(KINDS)), st.data())
def test_a_mac_of_another_key_is_rejected(name: str, data: st.DataObject) -> None:
    kind = KINDS[name]
    value = data.draw(kind.shaped_values)
    token = kind.dump(value)
    others = foreign_signers(name)
    other_name = data.draw(st.sampled_from(sorted(others)))
    other = others[other_name]
    if isinstance(other, SerializerSigner):
        foreign = other.dumps(value.hex() if name == "signer" else value, **kind.dump_options)
    else:
        foreign = other.sign(value)
    if other_name.startswith(("secret", "purpose", "hasher")) and name not in SESSION_PURPOSES:
        # The same text under another key: only the MAC differs, and a format-2 token's key id.
        named = LAYOUTS.get(token[:1].encode()) is not None and LAYOUTS[token[:1].encode()].format == 2
        assert foreign[0] == token[0]
        assert foreign[1 + named : -kind.tag_chars] == token[1 + named : -kind.tag_chars]
    assert foreign != token
    assert_rejected(kind.load, foreign)


@settings(max_examples=examples(2000), deadline=None)
@given(
    max_age=st.integers(1, 10**6),
    expires_in=st.none() | st.integers(1, 10**6),
    age=st.integers(-2 * CLOCK_SKEW, 2 * 10**6),
    value=shaped_json,
)
def test_a_dated_token_loads_exactly_while_it_is_valid(
    max_age: int, expires_in: int | None, age: int, value: Any
) -> None:
    now = [float(ISSUED)]
    signer = SerializerSigner(SECRET, purpose="dated", max_age=max_age, clock=lambda: now[0], max_token_length=LONG)
    token = signer.dumps(value, expires_in=expires_in)
    now[0] = ISSUED + age
    if age < -CLOCK_SKEW:
        with pytest.raises(BadSignature) as refused:
            signer.loads(token)
        assert not isinstance(refused.value, SignatureExpired)
    elif age > max_age or (expires_in is not None and age >= expires_in):
        with pytest.raises(SignatureExpired) as expired:
            signer.loads(token)
        limits = [ISSUED + max_age] if age > max_age else []
        limits += [ISSUED + expires_in] if expires_in is not None and age >= expires_in else []
        assert expired.value.expired_at in limits
    else:
        assert signer.loads(token) == value
