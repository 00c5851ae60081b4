"""Chunking: any token, any name, any attributes: every cookie fits, the fewest are used, they join back exactly,
and any cookies lost (the first among them) are IncompleteChunks naming those sent, never a shorter token."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web.sessions.chunks import (
    CHUNK_LIMIT,
    COOKIE_LIMIT,
    MIN_CHUNKS,
    IncompleteChunks,
    TooManyChunks,
    chunk_name,
    join_chunks,
    split_token,
    stale_chunks,
)
from tests.longrun import examples

from .strategies import URLSAFE

tokens = st.builds(
    lambda first, length, fill: (first + fill * length)[: length + 1],
    st.sampled_from("01234567ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvx"),
    st.integers(0, 40_000),
    st.text(st.sampled_from(URLSAFE), min_size=1, max_size=7),
)
names = st.text(st.sampled_from(URLSAFE + "._"), min_size=1, max_size=40)


@settings(max_examples=examples(1500), deadline=None)
@given(
    name=names, token=tokens, attributes=st.integers(0, 1000), cap=st.integers(MIN_CHUNKS, CHUNK_LIMIT), data=st.data()
)
def test_chunks_fit_are_fewest_and_join_back(
    name: str, token: str, attributes: int, cap: int, data: st.DataObject
) -> None:
    refused: TooManyChunks | None = None
    try:
        cookies = split_token(name, token, attributes_length=attributes, max_chunks=cap)
    except TooManyChunks as error:
        refused = error
    if refused is not None:
        assert refused.needed > cap
        return
    assert 1 <= len(cookies) <= cap
    assert [cookie for cookie, _ in cookies] == [chunk_name(name, i) for i in range(len(cookies))]
    for cookie, value in cookies:
        assert len(cookie) + 1 + len(value) + attributes <= COOKIE_LIMIT
    assert all(value for _, value in cookies)  # no empty piece: one cookie fewer would not do
    jar = dict(cookies)
    assert join_chunks(name, jar, max_chunks=cap) == token
    assert stale_chunks(name, len(cookies), jar) == []
    if len(cookies) > 1:
        # Any cookies lost, the first among them (curl drops it first): the set is named for deletion.
        lost = data.draw(st.sets(st.sampled_from(list(jar)), min_size=1, max_size=len(jar) - 1))
        partial = {cookie: value for cookie, value in jar.items() if cookie not in lost}
        with pytest.raises(IncompleteChunks) as raised:
            join_chunks(name, partial, max_chunks=cap)
        assert raised.value.cookies == [name, *(cookie for cookie in partial if cookie != name)]
