"""Shortcuts taken on each request by a link give exactly what the rule they shorten gives: ``link_text``'s query
parsing and encoding (the standard library's), and a file's download name (``files``)."""

from __future__ import annotations

import unicodedata
from urllib.parse import parse_qsl, quote

from hypothesis import given
from hypothesis import strategies as st

from blake2sign_web.links.files import content_disposition
from blake2sign_web.links.text import QUERY_SAFE, encode, parse_query

#: Pieces a query is made of, the tricky ones included: escapes valid, broken and not UTF-8, '+', ';', NUL.
PIECES = ["a", "Z9", "=", "&", "+", "%2F", "%", "%zz", "%C3", "%A9", "%FF", "%0", ";", "~", " ", "%41", "%e9", "\x00"]


@given(st.lists(st.sampled_from([*PIECES, "\u00e9", "\udcff"]), max_size=12).map("".join))
def test_parse_query_is_parse_qsl(query: str) -> None:
    assert parse_query(query) == parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")


@given(st.text(alphabet=st.characters(max_codepoint=0x10FFFF), max_size=20) | st.from_regex("[a-z0-9/._~-]*"))
def test_encode_is_quote(text: str) -> None:
    assert encode(text) == quote(text, safe=QUERY_SAFE, encoding="utf-8", errors="surrogateescape")


@given(st.text(alphabet=st.characters(max_codepoint=0x2100), max_size=12))
def test_a_download_name_is_written_as_the_rule_per_character_writes_it(name: str) -> None:
    base = "".join(c for c in name.replace("\\", "/").rsplit("/", 1)[-1] if unicodedata.category(c)[0] != "C")
    base = base.strip().strip(".")
    safe = " !#$&+-.^_`{}~()[]@,;="
    fallback = "".join(c if c.isascii() and (c.isalnum() or c in safe) else "_" for c in base)
    expected = f'attachment; filename="{fallback}"' if base else "attachment"
    if base and fallback != base:
        expected += f"; filename*=UTF-8''{quote(base, safe='')}"
    assert content_disposition(name) == expected
