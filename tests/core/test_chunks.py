"""Tokens over one cookie: split within the browser limit, joined back exactly, and never into another session."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from blake2sign_web import BadSignature, SerializerSigner
from blake2sign_web.sessions.chunks import (
    CHUNK_LIMIT,
    COOKIE_LIMIT,
    MAX_CHUNKS,
    MIN_CHUNKS,
    IncompleteChunks,
    TooManyChunks,
    chunk_name,
    join_chunks,
    max_chunks_problem,
    split_token,
    stale_chunks,
)

SECRET = "a secret for the chunking tests 0123456789"
ATTRIBUTES = "; Path=/; Max-Age=1209600; Secure; HttpOnly; SameSite=Lax"
NOW = 1_790_000_000
#: A cap over the default (2), for the tests of sessions in three and four cookies.
FOUR = 4


def signer(**options: Any) -> SerializerSigner:
    options.setdefault("compression", None)  # the sizes below are the tokens' sizes
    return SerializerSigner(SECRET, purpose="chunks", max_token_length=64 * 1024, clock=lambda: NOW, **options)


def session(size: int, seed: int = 0) -> dict[str, str]:
    """A session whose token is about ``size`` characters (random text: it does not compress)."""
    rng = random.Random(seed)
    return {"blob": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size * 3 // 4))}


def cookie_size(name: str, value: str, attributes: str = ATTRIBUTES) -> int:
    return len(name.encode()) + 1 + len(value.encode()) + len(attributes.encode())


def test_a_token_that_fits_is_one_cookie_as_it_always_was() -> None:
    token = signer().dumps({"user": 42})
    assert split_token("session", token, attributes_length=len(ATTRIBUTES)) == [("session", token)]
    assert join_chunks("session", {"session": token}) == token


def test_the_largest_token_that_fits_one_cookie() -> None:
    room = COOKIE_LIMIT - len(ATTRIBUTES) - len("session=")
    assert len(split_token("session", "A" * room, attributes_length=len(ATTRIBUTES))) == 1
    assert len(split_token("session", "A" * (room + 1), attributes_length=len(ATTRIBUTES))) == 2


@pytest.mark.parametrize("size", [4100, 8000, 12000, 15000])
@pytest.mark.parametrize("name", ["session", "__Host-session", "my.session"])
def test_every_chunk_fits_and_the_chunks_join_back(size: int, name: str) -> None:
    value = session(size)
    token = signer().dumps(value)
    cookies = split_token(name, token, attributes_length=len(ATTRIBUTES), max_chunks=FOUR)
    assert len(cookies) >= 2
    assert [cookie for cookie, _ in cookies] == [chunk_name(name, i) for i in range(len(cookies))]
    assert all(cookie_size(cookie, piece) <= COOKIE_LIMIT for cookie, piece in cookies)
    assert cookies[0][1].startswith(f".{len(cookies)}.")
    joined = join_chunks(name, dict(cookies), max_chunks=FOUR)
    assert joined == token
    assert signer().loads(joined) == value
    # Fewest cookies: one fewer would not hold it.
    rooms = sum(COOKIE_LIMIT - len(ATTRIBUTES) - len(cookie) - 1 for cookie, _ in cookies[:-1]) - 3
    assert rooms < len(token)


def test_every_chunk_is_filled_before_the_next() -> None:
    cookies = split_token("s", "A" * 5000, attributes_length=0)
    assert [len(piece) for _, piece in cookies] == [COOKIE_LIMIT - 2, 5000 - (COOKIE_LIMIT - 5)]


def test_past_the_cap_the_error_says_how_many() -> None:
    with pytest.raises(TooManyChunks) as raised:
        split_token("session", "A" * 17000, attributes_length=len(ATTRIBUTES), max_chunks=FOUR)
    assert raised.value.needed == 5
    assert isinstance(raised.value, ValueError)
    assert str(raised.value) == "a token would take 5 cookies of at most 4096 bytes; max_chunks allows 4"
    assert len(split_token("session", "A" * 17000, attributes_length=len(ATTRIBUTES), max_chunks=5)) == 5
    with pytest.raises(TooManyChunks, match="would take 3 cookies"):
        split_token("session", "A" * 9000, attributes_length=0)  # the default cap: two


def test_the_message_names_the_cap_as_each_framework_sets_it() -> None:
    # Issue 27 item 6: Starlette said "more than max_chunks=4,, over the browser limit...".
    with pytest.raises(TooManyChunks) as raised:
        split_token("session", "A" * 9000, attributes_length=0, limit=4000)
    assert raised.value.problem("max_chunks") == "would take 3 cookies of at most 4000 bytes; max_chunks allows 2"
    assert raised.value.problem("MAX_CHUNKS") == "would take 3 cookies of at most 4000 bytes; MAX_CHUNKS allows 2"


@pytest.mark.parametrize("max_chunks", [0, 1, 10, -1, True, 2.0, "4", None])
def test_the_cap_is_2_to_9_everywhere(max_chunks: Any) -> None:
    message = f"max_chunks must be an int from 2 to 9 (cookies of one session); got {max_chunks!r}"
    with pytest.raises(ValueError, match="must be an int from 2 to 9") as split:
        split_token("s", "A", attributes_length=0, max_chunks=max_chunks)
    assert str(split.value) == message
    with pytest.raises(ValueError, match="must be an int from 2 to 9") as joined:
        join_chunks("s", {"s": "A"}, max_chunks=max_chunks)
    assert str(joined.value) == message
    assert max_chunks_problem(max_chunks, "SessionMiddleware max_chunks") == f"SessionMiddleware {message}"
    assert (MIN_CHUNKS, CHUNK_LIMIT) == (2, 9)
    assert [max_chunks_problem(cap, "x") for cap in range(2, 10)] == [None] * 8


def test_attributes_that_leave_no_room_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="leaves no room"):
        split_token("session", "A" * 5000, attributes_length=4090)


def test_a_value_that_starts_like_a_header_is_refused() -> None:
    with pytest.raises(ValueError, match=r"never starts with '\.'"):
        split_token("s", ".2.abc", attributes_length=0)


def test_the_size_counts_bytes_of_the_name() -> None:
    name = "s\u00e9ssion"  # not a valid cookie name, but counted in bytes all the same
    cookies = split_token(name, "A" * 5000, attributes_length=0)
    assert all(cookie_size(cookie, piece, "") <= COOKIE_LIMIT for cookie, piece in cookies)


# What a browser can send back.


def chunked(value: Any, name: str = "session") -> dict[str, str]:
    return dict(split_token(name, signer().dumps(value), attributes_length=len(ATTRIBUTES), max_chunks=FOUR))


def test_no_cookie_is_no_token() -> None:
    assert join_chunks("session", {}) is None
    assert join_chunks("session", {"other": "x", "session.x": "y", "sessionid.1": "z"}) is None


@pytest.mark.parametrize("missing", [1, 2])
def test_a_missing_chunk_is_incomplete_and_names_every_cookie_sent(missing: int) -> None:
    cookies = chunked(session(10000))
    assert len(cookies) == 3
    del cookies[chunk_name("session", missing)]
    with pytest.raises(IncompleteChunks, match=f"'session.{missing}' is missing") as raised:
        join_chunks("session", {**cookies, "session.7": "stale", "other": "x"}, max_chunks=FOUR)
    assert isinstance(raised.value, BadSignature)
    assert raised.value.cookies == ["session", *(f"session.{n}" for n in (1, 2) if n != missing), "session.7"]


def test_chunks_without_their_first_cookie_are_incomplete_not_no_cookie() -> None:
    # Issue 27 item 5: curl (7.88) caps its Cookie header near 8 KB and sends the longest names first, so
    # it dropped "session" and sent "session.1" and "session.2": read as no cookie, silently, and never deleted.
    cookies = chunked(session(10000))
    del cookies["session"]
    with pytest.raises(IncompleteChunks) as raised:
        join_chunks("session", {**cookies, "other": "x"}, max_chunks=FOUR)
    # "session" too: the client dropped it from its Cookie header, and still holds it.
    assert raised.value.cookies == ["session", "session.1", "session.2"]
    assert str(raised.value) == (
        "cookie 'session' is missing and 'session.1', 'session.2' of it came without it (a client that caps its "
        "Cookie header, such as curl at about 8 KB, drops cookies)"
    )


def test_chunks_past_the_count_are_never_read() -> None:
    cookies = chunked(session(6000))
    assert len(cookies) == 2
    with_stale = {**cookies, "session.2": "stale piece of a longer session", "session.3": "x"}
    assert signer().loads(join_chunks("session", with_stale)) == session(6000)  # type: ignore[arg-type]
    assert join_chunks("session", {"session": "a whole token", "session.1": "stale"}) == "a whole token"


def test_any_mix_of_two_sessions_chunks_is_a_bad_signature_never_the_other_session() -> None:
    # A browser may keep a chunk of an older session (a lost Set-Cookie, two responses racing): whatever
    # it sends back, the result is one of the two sessions whole, or BadSignature.
    old, new = chunked(session(11000, seed=1)), chunked(session(11000, seed=2))
    assert len(old) == len(new) == 3
    names = list(old)
    for picks in itertools.product((old, new), repeat=3):
        cookies = {cookie: pick[cookie] for cookie, pick in zip(names, picks, strict=True)}
        token = join_chunks("session", cookies, max_chunks=FOUR)
        assert token is not None
        if all(pick is old for pick in picks):
            assert signer().loads(token) == session(11000, seed=1)
        elif all(pick is new for pick in picks):
            assert signer().loads(token) == session(11000, seed=2)
        else:
            with pytest.raises(BadSignature):
                signer().loads(token)


def test_a_shorter_older_session_mixed_in_is_a_bad_signature() -> None:
    # Now 3 cookies; the browser still has the first cookie of an older 2-cookie session.
    older, now = chunked(session(6000, seed=1)), chunked(session(11000, seed=2))
    for cookie in older:
        with pytest.raises(BadSignature):
            signer().loads(join_chunks("session", {**now, cookie: older[cookie]}, max_chunks=FOUR))  # type: ignore[arg-type]


def test_swapped_chunks_are_a_bad_signature() -> None:
    cookies = chunked(session(11000))
    cookies["session.1"], cookies["session.2"] = cookies["session.2"], cookies["session.1"]
    with pytest.raises(BadSignature):
        signer().loads(join_chunks("session", cookies, max_chunks=FOUR))  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [2, 3, 9])
def test_a_client_that_cuts_its_own_token_anywhere_gets_that_token_and_nothing_else(count: int) -> None:
    # The header is not under the MAC, and needs not be: the pieces, in order, are the token or not.
    token = signer().dumps({"user": 42})
    rng = random.Random(count)
    cuts = sorted(rng.sample(range(1, len(token)), count - 1))
    pieces = [token[a:b] for a, b in itertools.pairwise([0, *cuts, len(token)])]
    cookies = {"session": f".{count}.{pieces[0]}", **{f"session.{i}": piece for i, piece in enumerate(pieces) if i}}
    assert join_chunks("session", cookies, max_chunks=9) == token
    cookies["session.1"] = cookies["session.1"][::-1]
    if cookies["session.1"] != pieces[1]:
        with pytest.raises(BadSignature):
            signer().loads(join_chunks("session", cookies, max_chunks=9))  # type: ignore[arg-type]


def test_more_chunks_than_the_reader_allows_is_incomplete() -> None:
    cookies = dict(split_token("s", "A" * 9000, attributes_length=0, max_chunks=3))
    with pytest.raises(IncompleteChunks, match="'s' is in 3 chunks, more than the 2 allowed") as raised:
        join_chunks("s", cookies, max_chunks=2)
    assert raised.value.cookies == ["s", "s.1", "s.2"]


@pytest.mark.parametrize("value", [".eJxVj0EKwjAQRe9_SpTrbr", ".x.abc", ".1.abc", ".0.abc", ".10.abc", "..abc", "."])
def test_values_that_do_not_match_the_header_are_tokens_as_they_are(value: str) -> None:
    # Django's compressed signed cookies start with "." (ours never do): still read whole, then verified.
    assert join_chunks("session", {"session": value}) == value


@pytest.mark.parametrize("options", [{"encrypt": True}, {"dictionary": 1}, {"typed": True}, {"format": 1}])
def test_every_token_kind_chunks(options: dict[str, Any]) -> None:
    value = session(9000)
    token = signer(**options).dumps(value)
    assert not token.startswith(".")
    cookies = dict(split_token("session", token, attributes_length=len(ATTRIBUTES), max_chunks=FOUR))
    assert signer(**options).loads(join_chunks("session", cookies, max_chunks=FOUR)) == value  # type: ignore[arg-type]


# Which cookies to delete.


@pytest.mark.parametrize(
    ("written", "stale"),
    [
        (3, ["session.3"]),
        (2, ["session.2", "session.3"]),
        (1, ["session.1", "session.2", "session.3"]),
        (0, ["session.1", "session.2", "session.3"]),
        (4, []),
    ],
)
def test_stale_chunks_are_those_past_what_was_written(written: int, stale: list[str]) -> None:
    request = ["session", "session.2", "csrftoken", "session.1", "session.3", "sessionid", "session.x", "session.01"]
    assert stale_chunks("session", written, request) == stale


def test_stale_chunks_of_names_with_dots_and_prefixes() -> None:
    assert stale_chunks("my.session", 1, ["my.session.1", "my.session", "my-session.1", "myXsession.1"]) == [
        "my.session.1"
    ]
    assert stale_chunks("__Host-s", 0, ["__Host-s.1", "__host-s.1"]) == ["__Host-s.1"]


def test_stale_chunks_ignore_names_no_writer_makes() -> None:
    huge = "session." + "1" * 5000  # int() would refuse it: never parsed
    assert stale_chunks("session", 1, [huge, "session.1000", "session.999"]) == ["session.999"]


def test_the_defaults() -> None:
    assert MAX_CHUNKS == 2  # two fit nginx's and gunicorn's 8 KB Cookie header line, and curl's cap
    assert COOKIE_LIMIT == 4096
