"""What the properties draw: JSON values, paths and queries, and the changes an attacker or a proxy makes.

The mutations are written once here and applied to every token kind and to signed URLs, through the core
and through both adapters, so that each kind faces the same attacks.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from hypothesis import strategies as st

#: The alphabet of tokens and signatures: unpadded base64url.
URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#: Characters a changed token may gain: its alphabet, the standard alphabet's, padding, separators of other formats.
TOKEN_NOISE = URLSAFE + "+/=.:~ %\t\x00é"

# What JSON (and orjson) carries and brings back unchanged: 64-bit integers, finite floats.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
# What Python's json module carries too (the adapters' session serializers accept it): big integers, lone surrogates.
python_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=()), max_size=20),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(st.characters(exclude_categories=()), max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
any_json = json_values | python_json_values
#: Sessions-like values of any length, compressible (repeated) or not, for properties about a token's shape
#: more than its content: a tenth of the cost of drawing ``any_json``, which matters at thousands of examples.
shaped_json = st.builds(
    lambda chunk, times: {"v": (chunk * times).decode("latin-1")}, st.binary(max_size=40), st.integers(1, 12)
)
#: Session contents: a dict of str keys, mostly small enough for a 4096-byte cookie (tests skip the others).
sessions = st.dictionaries(st.text(max_size=8), any_json, max_size=4)

#: Query names and values of any text (UTF-8 encodable: no URL can carry a lone surrogate), and ones shaped
#: like the signer's own parameters.
query_text = st.text(st.characters(codec="utf-8"), max_size=10) | st.sampled_from(
    ["", "+", "%", "%20", "=", "&", "signature", "expires", "once", "a b", "utm_x"]
)
queries = st.lists(st.tuples(query_text, query_text), max_size=4)
#: A path segment of any text but the query's and fragment's delimiters, and ones whose spelling decides their meaning.
segment_text = st.text(st.characters(codec="utf-8", exclude_characters="?#"), max_size=10) | st.sampled_from(
    ["", ".", "..", "%2F", "%2f", "%2E", "%", "%zz", "a b", "~", "@", ":", ";", "é", "%C3%A9"]
)
#: Paths that start with one "/" (a path starting with "//" is refused by ``sign``: its own examples test that).
paths = st.tuples(segment_text.filter(lambda text: text[:1] not in ("", "/")), st.lists(segment_text, max_size=3)).map(
    lambda segments: "/" + "/".join([segments[0], *segments[1]])
)


def url_from(path: str, pairs: list[tuple[str, str]]) -> str:
    """``path`` with its query written from ``pairs``, every character but the unreserved ones percent-encoded."""
    query = "&".join(f"{quote(k, safe='', encoding='utf-8')}={quote(v, safe='', encoding='utf-8')}" for k, v in pairs)
    return f"{path}?{query}" if query else path


def url_meaning(url: str, *, ignored: tuple[str, ...] = ("signature",)) -> tuple[Any, ...]:
    """What a link means to the application (docs/signed-urls.md, "What is signed").

    The path's segments, each percent-decoded once (so ``%2F`` stays inside its segment and ``.`` is ``%2E``);
    the query's pairs, decoded (``+`` is a space), stably sorted by name (a repeated name keeps its values'
    order), without the signature. An empty path is ``/``, as the signer reads it (no request has one).
    """
    rest = url.partition("#")[0]
    path, _, query = rest.partition("?")
    segments = tuple(unquote(s, errors="surrogateescape") for s in (path or "/").split("/"))
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True, errors="surrogateescape") if k not in ignored]
    return segments, tuple(sorted(pairs, key=lambda kv: kv[0]))


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _unb64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


#: A position in a token or URL, taken modulo its length (see ``mutated_tokens``).
positions = st.integers(0, 2**16)
TOKEN_MUTATIONS = (
    "character bit flip",
    "body bit flip",
    "MAC bit flip",
    "character replaced",
    "truncated",
    "extended",
    "prefixed",
    "character inserted",
    "case changed",
    "all case changed",
    "padding added",
    "padded body",
    "standard alphabet",
    "marker changed",
    "MAC swapped for its start",
    "body and MAC joined by a dot",
)


@st.composite
def mutated_tokens(draw: st.DrawFn, token: str, tag_chars: int) -> tuple[str, str]:
    """(kind, token) for ``token`` changed in one of the ways below; may return ``token`` itself.

    ``tag_chars``: the length of the encoded MAC at the end of the token. Every example draws the same
    choices whatever the token (positions are taken modulo its length): a token that holds the time or a
    random nonce differs when hypothesis replays an example, and draws shaped by it would make the replay
    differ too (``FlakyReplay``).
    """
    kind = draw(st.sampled_from(TOKEN_MUTATIONS))
    index, byte, cut = draw(positions), draw(positions), draw(positions)
    bit = draw(st.integers(0, 7))
    noise = draw(st.sampled_from(TOKEN_NOISE))
    noise_text = draw(st.text(st.sampled_from(TOKEN_NOISE), min_size=1, max_size=8))
    padding = "=" * draw(st.integers(1, 3))
    where = draw(st.sampled_from(["all", "body", "MAC"]))
    marker = draw(st.sampled_from(URLSAFE + "89."))
    text, tag = token[:-tag_chars], token[-tag_chars:]
    index %= len(token)
    if kind == "character bit flip":
        return kind, token[:index] + chr(ord(token[index]) ^ (1 << bit)) + token[index + 1 :]
    if kind in ("body bit flip", "MAC bit flip"):
        part = text[1:] if kind == "body bit flip" else tag
        try:
            data = bytearray(_b64(part))
        except (binascii.Error, ValueError):  # an empty or one-character body
            return kind, token
        if not data:
            return kind, token
        data[byte % len(data)] ^= 1 << bit
        if kind == "body bit flip":
            return kind, text[:1] + _unb64(bytes(data)) + tag
        return kind, text + _unb64(bytes(data))
    if kind == "character replaced":
        return kind, token[:index] + noise + token[index + 1 :]
    if kind == "truncated":
        return kind, token[: cut % len(token)]
    if kind == "extended":
        return kind, token + noise_text
    if kind == "prefixed":
        return kind, noise_text + token
    if kind == "character inserted":
        return kind, token[:index] + noise + token[index:]
    if kind == "case changed":
        return kind, token[:index] + token[index].swapcase() + token[index + 1 :]
    if kind == "all case changed":
        return kind, token.swapcase()
    if kind == "padding added":
        return kind, token + padding
    if kind == "padded body":
        body = text[1:]
        return kind, text[:1] + body + "=" * (-len(body) % 4) + tag
    if kind == "standard alphabet":
        table = str.maketrans("-_", "+/")
        if where == "all":
            return kind, token.translate(table)
        if where == "body":
            return kind, text.translate(table) + tag
        return kind, text + tag.translate(table)
    if kind == "marker changed":
        return kind, marker + token[1:]
    if kind == "MAC swapped for its start":
        return kind, text + tag[: cut % tag_chars]
    return kind, text + "." + tag  # another format's separator between body and MAC


URL_MUTATIONS = (
    "signature changed",
    "parameters reordered",
    "parameter duplicated",
    "parameter added",
    "parameter emptied",
    "parameter removed",
    "value changed",
    "unreserved percent-encoded",
    "plus for %20",
    "percent-escape case",
    "dot segment",
    "double slash",
    "path character changed",
    "path case changed",
    "trailing slash",
    "fragment added",
    "character bit flip",
)


@st.composite
def mutated_urls(draw: st.DrawFn, url: str) -> tuple[str, str]:
    """(kind, url) for a signed ``url`` changed in one way: its signature, path, or query, as a
    proxy re-encodes it or an attacker edits it. Some kinds keep the meaning (reordering across names,
    percent-encoding an unreserved character, ``+`` for ``%20``): those must verify as the same URL.

    As in ``mutated_tokens``, no draw depends on the time or nonce a link holds: positions in its text are
    taken modulo a length, and the other bounds (parameters, path segments) come from the drawn path and query.
    """
    path, _, query = url.partition("?")
    pairs = [tuple(p.partition("=")[::2]) for p in query.split("&")] if query else []
    signature_at = next(i for i, (k, _) in enumerate(pairs) if k == "signature")
    signature = pairs[signature_at][1]
    kind = draw(st.sampled_from(URL_MUTATIONS))

    def with_pairs(new_pairs: list[tuple[str, str]], new_path: str = path) -> str:
        return new_path + "?" + "&".join(f"{k}={v}" for k, v in new_pairs)

    if kind == "signature changed":
        _, changed = draw(mutated_tokens(signature, len(signature)))
        new = list(pairs)
        new[signature_at] = ("signature", quote(changed, safe="-_~.="))
        return kind, with_pairs(new)
    if kind == "parameters reordered":
        return kind, with_pairs(draw(st.permutations(pairs)))
    if kind == "parameter duplicated":
        index = draw(st.integers(0, len(pairs) - 1))
        return kind, with_pairs([*pairs[: index + 1], pairs[index], *pairs[index + 1 :]])
    if kind == "parameter added":
        name = draw(st.sampled_from(["x", "expires", "once", "signature", "kid", "utm_source"]) | query_text)
        value = draw(query_text)
        at = draw(st.integers(0, len(pairs)))
        return kind, with_pairs([*pairs[:at], (quote(name, safe=""), quote(value, safe="")), *pairs[at:]])
    index = draw(st.integers(0, len(pairs) - 1))
    if kind == "parameter emptied":
        new = list(pairs)
        new[index] = (pairs[index][0], "")
        return kind, with_pairs(new)
    if kind == "parameter removed":
        return kind, with_pairs(pairs[:index] + pairs[index + 1 :])
    if kind == "value changed":
        new = list(pairs)
        new[index] = (pairs[index][0], quote(draw(query_text), safe=""))
        return kind, with_pairs(new)
    if kind == "unreserved percent-encoded":
        where = draw(st.sampled_from(["path", "query"]))
        text = path if where == "path" else query
        pick = draw(positions)
        spots = [i for i, c in enumerate(text) if c.isascii() and (c.isalnum() or c in "-._~")]
        if not spots:
            return kind, url
        i = spots[pick % len(spots)]
        text = text[:i] + f"%{ord(text[i]):02X}" + text[i + 1 :]
        return kind, (text + "?" + query) if where == "path" else (path + "?" + text)
    if kind == "plus for %20":
        return kind, path + "?" + query.replace("%20", "+")
    if kind == "percent-escape case":
        return kind, _swap_escape_case(path) + "?" + _swap_escape_case(query)
    segments = path.split("/")
    at = draw(st.integers(1, len(segments)))
    if kind == "dot segment":
        dot = draw(st.sampled_from([".", "..", "%2E", "%2e%2E", ".%2e"]))
        return kind, with_pairs(pairs, "/".join([*segments[:at], dot, *segments[at:]]))
    if kind == "double slash":
        return kind, with_pairs(
            pairs, "/" + path if draw(st.booleans()) else "/".join([*segments[:at], "", *segments[at:]])
        )
    if kind == "path character changed":
        i = draw(positions) % len(path)
        return kind, with_pairs(pairs, path[:i] + draw(st.sampled_from("aZ0/%.-_~+é")) + path[i + 1 :])
    if kind == "path case changed":
        return kind, with_pairs(pairs, path.swapcase())
    if kind == "trailing slash":
        return kind, with_pairs(pairs, path[:-1] if path.endswith("/") and len(path) > 1 else path + "/")
    if kind == "fragment added":
        return kind, url + "#" + draw(st.text(st.sampled_from("ab/?&=#"), max_size=5))
    i = draw(positions) % len(url)
    return kind, url[:i] + chr(ord(url[i]) ^ (1 << draw(st.integers(0, 6)))) + url[i + 1 :]


def _swap_escape_case(text: str) -> str:
    """``%2f`` for ``%2F`` and the other way round: the same escape, spelled otherwise."""
    out = []
    i = 0
    while i < len(text):
        if text[i] == "%" and i + 2 < len(text) and all(c in "0123456789abcdefABCDEF" for c in text[i + 1 : i + 3]):
            out.append("%" + text[i + 1 : i + 3].swapcase())
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


#: Mutations that keep a URL's meaning by the documented canonical form: they must verify.
#: (A signed query never holds a "+": the signer writes a space as %20 and a plus as %2B.)
MEANING_KEPT = {"unreserved percent-encoded", "plus for %20", "percent-escape case", "fragment added"}
