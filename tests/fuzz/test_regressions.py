"""Every input found crashing a target, replayed, and the bug it showed, tested directly."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette

from blake2sign_web import URLSigner
from blake2sign_web.sessions import chunks
from blake2sign_web.starlette import SessionMiddleware

from . import targets

#: (target, input): what the fuzzer saved as ``crash-<sha1>`` (copied as the repr it printed), or what
#: crashed a target while it was written.
CRASHES = [
    # URLSigner.sign returned a link longer than max_url_length (percent-encoding and the added
    # parameters grow it), which verify then refused as "URL too long": a link that never works.
    ("url_sign_verify", b"\xa2\x00\xff" + b"\xff" * 8 + b"\x00" * 51),
    # Found writing the target (two minutes of fuzzing did not reach it: json's C parser gives no
    # coverage feedback on depth). A Starlette-format cookie under a valid signature whose JSON nests
    # deeper than the stack: the migration reader let json's RecursionError out of the middleware.
    ("starlette_legacy_body", b"[" * 3000 + b"]" * 3000),
]


@pytest.mark.parametrize(("target", "data"), CRASHES, ids=[f"{target}-{i}" for i, (target, _) in enumerate(CRASHES)])
def test_crash_found_by_the_fuzzer_is_fixed(target: str, data: bytes) -> None:
    targets.build(target)(data)


def test_sign_refuses_a_link_longer_than_verify_accepts() -> None:
    signer = URLSigner("a secret for the regression tests", purpose="links", max_url_length=256)
    # 41 characters in; each é becomes %C3%A9, then expires=, kid= and signature= are added: over 256.
    with pytest.raises(ValueError, match="max_url_length"):
        signer.sign("/" + "\u00e9" * 40, expires_in=60)


@pytest.mark.parametrize("expires_in", [None, 60])
def test_every_link_sign_returns_verifies_around_the_length_limit(expires_in: int | None) -> None:
    signer = URLSigner("a secret for the regression tests", purpose="links", max_url_length=256)
    signed = 0
    for length in range(100, 257):
        try:
            link = signer.sign("/" + "a" * length, expires_in=expires_in)
        except ValueError:
            continue
        assert len(link) <= 256
        signer.verify(link)
        signed += 1
    assert signed > 50  # the limit still leaves room for ordinary links


def nested(depth: int) -> bytes:
    return b'{"a":' + b"[" * depth + b"]" * depth + b"}"


def test_a_deeply_nested_starlette_cookie_gives_an_empty_session() -> None:
    middleware = SessionMiddleware(Starlette(), secret_key=targets.SECRET, migrate_starlette_cookies=True)
    session, _ = middleware._load(targets.legacy_cookie(nested(3)))
    assert session == {"a": [[[]]]}  # the reader works; only what the stack cannot hold is refused
    session, _ = middleware._load(targets.legacy_cookie(nested(100_000)))
    assert session == {}


def test_split_token_counts_the_cookies_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found writing the chunk_cookies target: the fuzzer ran it at a few hundred inputs a second, on
    # attributes that leave a few bytes per cookie. split_token listed the rooms of every cookie again for
    # each count it tried, quadratic in the cookies needed (here 3779: 1.6 s to refuse a 20,000-character
    # token). Each count now adds one room.
    computed = []
    real_room = chunks._room

    def room(*args: object) -> int:
        computed.append(args)
        return real_room(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(chunks, "_room", room)
    with pytest.raises(chunks.TooManyChunks) as refused:
        chunks.split_token("session", "A" * 20_000, attributes_length=4096 - 18)
    assert refused.value.needed == 3779  # as many as before, found in one pass
    assert len(computed) <= refused.value.needed + 1
