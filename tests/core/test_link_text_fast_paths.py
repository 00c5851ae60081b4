"""The written-out query parsing and encoding of ``link_text`` give exactly what the standard library's would."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote

from hypothesis import given
from hypothesis import strategies as st

from blake2sign_web.link_text import QUERY_SAFE, encode, parse_query

#: Pieces a query is made of, the tricky ones included: escapes valid, broken and not UTF-8, '+', ';', NUL.
PIECES = ["a", "Z9", "=", "&", "+", "%2F", "%", "%zz", "%C3", "%A9", "%FF", "%0", ";", "~", " ", "%41", "%e9", "\x00"]


@given(st.lists(st.sampled_from([*PIECES, "\u00e9", "\udcff"]), max_size=12).map("".join))
def test_parse_query_is_parse_qsl(query: str) -> None:
    assert parse_query(query) == parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")


@given(st.text(alphabet=st.characters(max_codepoint=0x10FFFF), max_size=20) | st.from_regex("[a-z0-9/._~-]*"))
def test_encode_is_quote(text: str) -> None:
    assert encode(text) == quote(text, safe=QUERY_SAFE, encoding="utf-8", errors="surrogateescape")
