"""Signed URLs: any path and query round-trips; a changed URL is refused, or verifies as the same URL.

"The same URL" is the documented canonical form (docs/signed-urls.md, "What is signed"), written here
independently as ``strategies.url_meaning``: each path segment decoded once, the query decoded and stably
sorted by name. So a pure reordering across names, a percent-encoded unreserved character, ``+`` for
``%20`` or another case of an escape must verify, and verify as that same URL; every other change must
raise BadSignature (or SignatureExpired), never another exception.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, URLSigner, VerifiedLink
from tests.longrun import examples

from .strategies import MEANING_KEPT, mutated_urls, paths, queries, query_text, url_from, url_meaning

SECRET = "a secret for the URL properties 0123456789"
NOW = 1_790_000_000
SIGNER = URLSigner(SECRET, purpose="links", clock=lambda: NOW)
#: Parameters the signer writes: an application's own are drawn apart from them.
OWN_PARAMS = (
    "signature",
    "expires",
    "once",
    "consume",
    "disposition",
    "filename",
    "starts",
    "prefix",
    "group",
    "issued",
    "kid",
)
FOREIGN = {
    "secret": URLSigner("another secret for the URL properties", purpose="links", clock=lambda: NOW),
    "purpose": URLSigner(SECRET, purpose="other links", clock=lambda: NOW),
    "blake2s": URLSigner(SECRET, purpose="links", hasher="blake2s", clock=lambda: NOW),
    "blake3": URLSigner(SECRET, purpose="links", hasher="blake3", clock=lambda: NOW),
}
lifetimes = st.sampled_from([(None, False), (3600, False), (3600, True)])


def application_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in pairs if k not in OWN_PARAMS]


def sign(url: str, lifetime: tuple[int | None, bool], signer: URLSigner = SIGNER) -> str:
    expires_in, single_use = lifetime
    return signer.sign(url, expires_in=expires_in, single_use=single_use)


@settings(max_examples=examples(1500), deadline=None)
@given(paths, queries, lifetimes)
@example("/%2Fevil.example/x", [], (None, False))
@example("//evil.example/x", [], (None, False))
@example("//", [("a", "1")], (3600, False))
@example("/a/%2E%2E/./b", [("t", "2"), ("t", "1")], (3600, True))
@example("/caf\u00e9/%C3%A9 x", [("a b", "c+d"), ("", "")], (None, False))
def test_any_path_and_query_round_trips(
    path: str, pairs: list[tuple[str, str]], lifetime: tuple[int | None, bool]
) -> None:
    url = url_from(path, application_pairs(pairs))
    if path.startswith("//"):  # a browser would read the first segment as a host: refused, documented
        with pytest.raises(ValueError, match="//"):
            sign(url, lifetime)
        return
    signed = sign(url, lifetime)
    link = SIGNER.verify_link(signed)
    assert url_meaning(signed, ignored=OWN_PARAMS) == url_meaning(url)
    expires_in, single_use = lifetime
    assert link == VerifiedLink(False, None if expires_in is None else NOW + expires_in, link.nonce)
    assert (link.nonce is not None) == single_use
    if not single_use:  # the same input, the same link: links can be cached
        assert sign(url, lifetime) == signed
    with pytest.raises(ValueError, match="its query already has"):  # a signed link is not signed again
        SIGNER.sign(signed)


@settings(max_examples=examples(2000), deadline=None)
@given(paths, queries, lifetimes, st.data())
def test_a_changed_url_is_refused_or_verifies_as_the_same_url(
    path: str, pairs: list[tuple[str, str]], lifetime: tuple[int | None, bool], data: st.DataObject
) -> None:
    signed = sign(url_from(path, application_pairs(pairs)), lifetime)
    link = SIGNER.verify_link(signed)
    kind, changed = data.draw(mutated_urls(signed))
    same_meaning = url_meaning(changed) == url_meaning(signed)
    try:
        changed_link = SIGNER.verify_link(changed)
    except BadSignature:
        assert not (kind in MEANING_KEPT and same_meaning), f"{kind}: the same URL, respelled, was refused"
        return
    assert same_meaning, f"{kind}: {changed!r} verified but means something else than {signed!r}"
    assert changed_link == link


@settings(max_examples=examples(500), deadline=None)
@given(paths, queries, lifetimes, st.sampled_from(sorted(FOREIGN)))
def test_a_signature_of_another_key_is_refused(
    path: str, pairs: list[tuple[str, str]], lifetime: tuple[int | None, bool], other: str
) -> None:
    url = url_from(path, application_pairs(pairs))
    foreign = sign(url, (lifetime[0], False), FOREIGN[other])
    # The same link but for the key id, the other key's, just before the signature.
    foreign_kid, own_kid = f"kid={FOREIGN[other].key_id}&signature=", f"kid={SIGNER.key_id}&signature="
    assert foreign_kid != own_kid
    before, found, signature = foreign.rpartition(foreign_kid)
    assert found
    assert before == sign(url, (lifetime[0], False)).rpartition(own_kid)[0]
    with pytest.raises(BadSignature):  # a key id this signer does not hold
        SIGNER.verify(foreign)
    with pytest.raises(BadSignature):  # named as this signer's key: its MAC does not match
        SIGNER.verify(before + own_kid + signature)
    with pytest.raises(BadSignature):  # without a key id: every key is tried, none matches
        SIGNER.verify(before + "signature=" + signature)


bound_values = st.integers() | st.text(max_size=10) | st.binary(max_size=10)


@settings(max_examples=examples(500), deadline=None)
@given(paths, bound_values, bound_values)
@example("/x", 42, "42")
@example("/x", "42", b"42")
@example("/x", "i:1", 1)
def test_a_bound_link_verifies_only_for_the_same_value(path: str, bound: object, other: object) -> None:
    signed = SIGNER.sign(path, bind=bound)  # type: ignore[arg-type]
    SIGNER.verify(signed, bind=bound)  # type: ignore[arg-type]
    if type(other) is type(bound) and other == bound:
        SIGNER.verify(signed, bind=other)  # type: ignore[arg-type]
    else:
        with pytest.raises(BadSignature):
            SIGNER.verify(signed, bind=other)  # type: ignore[arg-type]
    with pytest.raises(BadSignature):
        SIGNER.verify(signed)


HOST_SIGNER = URLSigner(SECRET, purpose="links", bind_host=True, ignore=("utm_*",), clock=lambda: NOW)
hosts = st.sampled_from(["example.com", "Example.COM", "example.com:443", "example.com:8443", "xn--caf-dma.example"])


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(["http", "https"]), hosts, paths, st.data())
def test_a_host_bound_link_verifies_on_its_host_only(scheme: str, host: str, path: str, data: st.DataObject) -> None:
    # urlsplit drops tab, CR and LF from an absolute URL (a path-only one keeps them, encoded); a path that
    # starts with "//" is refused even after a host (tested above).
    assume(not path.replace("\t", "").replace("\r", "").replace("\n", "").startswith("//"))
    signed = HOST_SIGNER.sign(f"{scheme}://{host}{path}")
    HOST_SIGNER.verify(signed)
    other_scheme = data.draw(st.sampled_from(["http", "https"]))
    other_host = data.draw(hosts)
    moved = signed.replace(f"{scheme}://{host}", f"{other_scheme}://{other_host}", 1)
    tracked = moved + "&utm_source=" + data.draw(query_text).replace("&", "").replace("#", "")

    def authority(scheme: str, host: str) -> str:  # lowercased, without the scheme's default port
        return host.lower().removesuffix({"http": ":80", "https": ":443"}[scheme])

    if authority(other_scheme, other_host) == authority(scheme, host):
        HOST_SIGNER.verify(moved)
        HOST_SIGNER.verify(tracked)  # an ignored parameter: invisible to the signature
    else:
        with pytest.raises(BadSignature):
            HOST_SIGNER.verify(moved)
    with pytest.raises(BadSignature):
        HOST_SIGNER.verify(signed.partition("://")[2].partition("/")[1] + signed.partition("://")[2].partition("/")[2])


#: What a caller may put into a URL to sign: any name, the link format's own among them, and values shaped like
#: theirs (a nonce, an expiry, a disposition) or like nothing.
caller_names = st.sampled_from(OWN_PARAMS) | query_text
caller_values = st.sampled_from(["", "post", "get", "attachment", "inline", "a.pdf", "a/b", "A" * 22, str(NOW + 60)])
caller_queries = st.lists(st.tuples(caller_names, caller_values | query_text), max_size=4)
#: sign()'s keywords, each present or not: valid values and the ones it documents refusing.
sign_keywords = st.fixed_dictionaries(
    {},
    optional={
        "expires_in": st.sampled_from([60, 3600]),
        "expires_at": st.just(NOW + 600),
        "single_use": st.booleans(),
        "consume_on": st.sampled_from(["get", "post"]),
        "filename": st.sampled_from(["a.pdf", "Facture été.pdf", "a/b", ".."]),
        "disposition": st.sampled_from(["attachment", "inline"]),
        "starts": st.sampled_from([NOW - 100, NOW + 60]),  # valid now (CLOCK_SKEW); refused at an equal expiry
        "group": st.sampled_from(["course-42", "a:b"]),  # a group id has no ":"
    },
)


def refused_at_signing(pairs: list[tuple[str, str]], keywords: dict[str, object]) -> bool:
    """Whether docs/signed-urls.md says ``sign()`` refuses this URL and these keywords (ValueError)."""
    names = {name for name, _ in pairs}
    names_download = "filename" in keywords or "disposition" in keywords
    expiry = "expires_in" in keywords or "expires_at" in keywords
    return bool(
        names & {"signature", "expires", "once", "consume", "disposition", "starts", "prefix", "group", "issued", "kid"}
        or ("filename" in names and names_download)
        or ("expires_in" in keywords and "expires_at" in keywords)
        or ((keywords.get("single_use") or "group" in keywords) and not expiry)
        or keywords.get("group") == "a:b"
        or (keywords.get("consume_on") == "post" and not keywords.get("single_use"))
        or keywords.get("filename") in ("a/b", "..")
        or starts_too_late(keywords)
    )


def starts_too_late(keywords: dict[str, Any]) -> bool:
    """Whether ``starts`` is at or after the expiry (``sign()`` refuses it: the link would never be valid)."""
    expires = NOW + keywords["expires_in"] if "expires_in" in keywords else keywords.get("expires_at")
    return "starts" in keywords and expires is not None and keywords["starts"] >= expires


@settings(max_examples=examples(3000), deadline=None)
@given(paths, caller_queries, sign_keywords)
@example("/a", [("once", "")], {"expires_in": 60})
@example("/a", [("once", "A" * 22)], {})
@example("/0", [("prefix", "")], {})  # a folder link's own parameter, reserved like the others
@example("/0", [("issued", "")], {"expires_in": 60, "group": "course-42"})
@example("/a", [("expires", "1"), ("x", "1")], {"expires_in": 60})
@example("/a", [("filename", "evil.html")], {"disposition": "inline"})
@example("/a", [("filename", "a/b")], {"expires_in": 60})
def test_signing_any_url_raises_at_signing_or_round_trips(
    path: str, pairs: list[tuple[str, str]], keywords: dict[str, object]
) -> None:
    """What ``sign()`` accepts, ``verify_link()`` accepts, saying what the keywords asked for; nothing else signs."""
    url = url_from(path, pairs)
    try:
        signed = SIGNER.sign(url, **keywords)  # type: ignore[arg-type]
    except ValueError:
        assert refused_at_signing(pairs, keywords), f"refused {url!r} with {keywords}"
        return
    assert not refused_at_signing(pairs, keywords), f"signed {url!r} with {keywords}: {signed!r}"
    link = SIGNER.verify_link(signed)
    expires_in = keywords.get("expires_in")
    expires_at = NOW + expires_in if isinstance(expires_in, int) else keywords.get("expires_at")
    assert link.expires_at == expires_at
    assert (link.nonce is not None) == bool(keywords.get("single_use"))
    assert link.consume_on == keywords.get("consume_on", "get")
    names_download = "filename" in keywords or "disposition" in keywords
    assert link.disposition == (keywords.get("disposition", "attachment") if names_download else None)
    assert link.filename == keywords.get("filename")
    assert link.starts_at == keywords.get("starts")
    assert link.group == keywords.get("group")
    assert (link.issued_us is not None) == ("group" in keywords)
    # The application's own parameters are all there, as they were; the signer added only its own.
    written = ("signature", "expires", "once", "consume", "disposition", "starts", "group", "issued", "kid")
    written += ("filename",) if names_download else ()
    assert url_meaning(signed, ignored=written) == url_meaning(url, ignored=())
