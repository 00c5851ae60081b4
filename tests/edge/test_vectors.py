"""The vectors file and the reference verifier: the file is what Python decides today, it covers every kind of
link, and the reference (keys only) decides as the origin's ``URLSigner`` (the secret) verifies."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from blake2sign_web.edge import keyring as keyrings
from blake2sign_web.edge import vectors
from blake2sign_web.edge.reference import KeyringSigner, Request, decide, parse_cookies, valid_host
from blake2sign_web.exceptions import BadSignature, SignatureMismatch
from blake2sign_web.links import grants
from blake2sign_web.links.signer import URLSigner
from tests.edge.conftest import VECTORS, compare
from tests.edge.fuzz import generate

FILE = json.loads(VECTORS.read_text())


def test_the_file_holds_what_the_reference_decides_today() -> None:
    built = vectors.build()
    assert [v["name"] for v in FILE["vectors"]] == [v["name"] for v in built["vectors"]]
    assert FILE["keyrings"] == built["keyrings"]
    # Nonces are random, so the links differ from a new build: each stored request is decided again instead.
    answers = []
    for case in FILE["vectors"]:
        ring = keyrings.load(FILE["keyrings"][case["keyring"]])
        verdict = decide(KeyringSigner(ring, clock=lambda case=case: case["now"]), Request(**case["request"]))
        answers.append(verdict._asdict())
    assert compare(FILE, answers) >= 200
    for stored, new in zip(FILE["vectors"], built["vectors"], strict=True):
        assert stored["expect"] == new["expect"], stored["name"]


def test_the_vectors_cover_every_kind_of_link_and_every_answer() -> None:
    names = [v["name"] for v in FILE["vectors"]]
    decisions = Counter(v["expect"]["decision"] for v in FILE["vectors"])
    assert min(decisions.values()) >= 40, decisions
    for kind in ("file", "query", "folder", "grant", "host", "names", "rotation", "legacy", "starts", "kid",
                 "single use", "group", "download name", "bound", "algorithm", "method", "target"):  # fmt: skip
        assert any(name.startswith(kind) for name in names), kind
    allowed_folders = [v for v in FILE["vectors"] if v["expect"]["decision"] == "allow" and v["expect"]["prefix"]]
    assert len(allowed_folders) >= 20
    assert all(v["expect"]["below"] is not None for v in allowed_folders)


def test_the_keyring_holds_link_keys_only() -> None:
    ring = keyrings.make(vectors.SECRET, purpose="downloads", fallbacks=[vectors.OLD_SECRET])
    text = ring.dumps()
    assert vectors.SECRET not in text
    assert vectors.OLD_SECRET not in text
    assert [k.id for k in ring.keys] == [
        URLSigner(s, purpose="downloads", hasher="hmac-sha256").key_id for s in (vectors.SECRET, vectors.OLD_SECRET)
    ]
    assert keyrings.load(json.loads(text)) == ring
    # A link key signs links of its purpose and nothing else: not another purpose's links, not sessions.
    from blake2sign_web.signing.serializer import SerializerSigner

    session = SerializerSigner(vectors.SECRET, purpose="downloads", hasher="hmac-sha256").dumps({"user": 1})
    with pytest.raises(BadSignature):
        SerializerSigner(b"x" * 16, purpose="downloads", hasher="hmac-sha256", fallbacks=[]).loads(session)
    forged = KeyringSigner(ring).sign("/files/a.pdf")
    URLSigner(vectors.SECRET, purpose="downloads", hasher="hmac-sha256").verify(forged)
    with pytest.raises(SignatureMismatch):
        URLSigner(vectors.SECRET, purpose="avatars", hasher="hmac-sha256").verify(forged)


def test_a_keyring_refuses_what_a_verifier_could_not_follow() -> None:
    with pytest.raises(ValueError, match=r"'\[\.\.\.\]'"):
        keyrings.make(vectors.SECRET, purpose="downloads", ignore=["utm_[ab]"])
    with pytest.raises(TypeError, match="unknown parameter keywords"):
        keyrings.make(vectors.SECRET, purpose="downloads", sig_param="s")
    with pytest.raises(ValueError, match="purpose"):
        keyrings.make(vectors.SECRET, purpose="")
    text = keyrings.make(vectors.SECRET, purpose="downloads").to_json()
    text["keys"][0]["id"] = "AAAAAA"
    with pytest.raises(ValueError, match="own id"):
        keyrings.load(text)


def test_the_reference_decides_as_the_origin_verifies() -> None:
    """Over the fuzz cases: "allow" exactly when the origin's URLSigner (holding the secret) accepts the link with
    nothing left for the origin to check; "refuse" only for what the origin refuses too."""
    cases = generate(seed=7, count=3000)
    origin = {name: URLSigner(vectors.SECRET, hasher="hmac-sha256", **_options(name)) for name in vectors.KEYRINGS}
    checked = Counter()
    for case in cases["vectors"]:
        request = Request(**case["request"])
        decision = case["expect"]["decision"]
        if request.method not in ("GET", "HEAD"):
            assert decision == "origin", case
            continue
        if not request.target.startswith("/") or not request.target.isascii():
            assert decision == "refuse", case  # no request line carries it: a front server refuses it unread
            continue
        if vectors.KEYRINGS[case["keyring"]].get("bind_host") and not valid_host(request.host):
            assert decision == "refuse", case  # no server takes such a Host header: refused unread
            continue
        signer = origin[case["keyring"]]
        signer._clock = lambda case=case: case["now"]
        target = request.target
        url = f"{request.scheme}://{request.host}{target}" if signer.bind_host else target
        try:
            granted = grants.grant_for(
                signer, url, request.method, lambda request=request: parse_cookies(request.cookie)
            )
            link = signer.verify_link(url) if granted is None else grants.verify(signer, url, granted, None)
        except SignatureMismatch:
            assert decision == "origin", case
        except BadSignature:
            assert decision == "refuse", case
        else:
            if link.nonce or link.group or link.disposition:
                assert decision == "origin", case
            else:
                assert decision in ("allow", "refuse"), case  # refuse: an unsafe path for a file server
                if decision == "allow":
                    assert (link.prefix, link.below) == (case["expect"]["prefix"], case["expect"]["below"])
        checked[decision] += 1
    assert min(checked.values()) > 300, checked


def _options(name: str) -> dict[str, object]:
    return {k: v for k, v in vectors.KEYRINGS[name].items() if k != "fallbacks"} | {
        "fallbacks": vectors.KEYRINGS[name].get("fallbacks", [])
    }


def test_the_playlist_vectors_are_the_origins_rewrite_of_simple_uris() -> None:
    """A front server signs a subset of the URIs the origin's file views sign: the same on playlists as ffmpeg
    writes them, never a URI the origin would leave alone."""
    from blake2sign_web.links import playlists

    built = vectors.build()
    assert FILE["playlists"] == built["playlists"] or [p["name"] for p in FILE["playlists"]] == [
        p["name"] for p in built["playlists"]
    ]
    assert FILE["playlist_queries"][0]["expect"]
    assert len(FILE["playlist_queries"]) >= 8
    same = {"media playlist", "master playlist", "CRLF and CR line endings", "URI attributes", "deeper playlists"}
    for case in FILE["playlists"]:
        ours = case["expect"]
        origin = playlists.with_query(case["text"], case["query"], case["path"], case["prefix"])
        if case["name"] in same:
            assert ours == origin, case["name"]
            assert case["query"] in ours, case["name"]
        edge_lines, origin_lines = ours.splitlines(), origin.splitlines()
        assert len(edge_lines) == len(origin_lines)
        for edge_line, origin_line, line in zip(edge_lines, origin_lines, case["text"].splitlines(), strict=True):
            assert edge_line in (line, origin_line), (case["name"], line)
