"""The mutation strategies draw the same choices whatever the token or URL they change.

Tokens and links made by the adapters hold the time and random nonces, so they differ each time hypothesis
replays an example. Draws shaped by them (a position bounded by the token's length, a skip decided by its
characters) made hypothesis fail with ``Flaky`` errors at random, in long runs most.
"""

from __future__ import annotations

import secrets

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.longrun import examples

from .strategies import TOKEN_MUTATIONS, URL_MUTATIONS, mutated_tokens, mutated_urls


def fresh_token() -> str:
    """A token that is different, and of a different length, at every call."""
    return secrets.token_urlsafe(30 + secrets.randbelow(40))


@settings(max_examples=examples(500), deadline=None)
@given(st.data())
def test_token_mutations_draw_the_same_choices_for_any_token(data: st.DataObject) -> None:
    token = fresh_token()
    kind, _ = data.draw(mutated_tokens(token, 22))
    assert kind in TOKEN_MUTATIONS


@settings(max_examples=examples(500), deadline=None)
@given(st.data())
def test_url_mutations_draw_the_same_choices_for_any_signature(data: st.DataObject) -> None:
    url = f"/files/a?expires={1_790_000_000 + secrets.randbelow(10**6)}&signature={fresh_token()[:43]}"
    kind, _ = data.draw(mutated_urls(url))
    assert kind in URL_MUTATIONS
