"""Folder (prefix) links in the core: signing, what "inside" means, domain separation from single-file links."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blake2sign_web.exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from blake2sign_web.links import files
from blake2sign_web.links import folders as link_prefix
from blake2sign_web.links.signer import URLSigner, VerifiedLink
from blake2sign_web.links.text import canonical_path

NOW = 1_800_000_000
SECRET = "a folder link secret, long enough to sign with"


def make(**options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", clock=lambda: NOW, **options)  # type: ignore[arg-type]


def test_one_signature_verifies_every_file_under_the_prefix() -> None:
    folder = make().sign_prefix("/videos/123/", expires_in=60)
    assert folder.prefix == "/videos/123/"
    assert folder.query.startswith(f"prefix=%2Fvideos%2F123%2F&expires=1800000060&kid={make().key_id}&signature=")
    for name in ("seg-1.ts", "720p/index.m3u8", "caf\u00e9 x.ts", "a/b/c/d.ts"):
        link = folder.link(name)
        assert link.endswith("?" + folder.query)
        verified = make().verify_link(link)
        assert verified == VerifiedLink(False, NOW + 60, None, prefix="/videos/123/", below=name)
    assert folder.link("/videos/123/x.ts") == "/videos/123/x.ts?" + folder.query
    # The folder itself (an index page a view may serve), by the query appended to it.
    assert make().verify_link("/videos/123/?" + folder.query).below == ""


def test_the_same_query_is_appended_to_any_spelling_of_a_path_inside() -> None:
    folder = make().sign_prefix("/vid\u00e9os/123/", expires_in=60)
    assert folder.prefix == "/vid%C3%A9os/123/"
    for path in (
        "/vid%C3%A9os/123/x.ts",
        "/vid%c3%a9os/123/x.ts",
        "/vid%C3%A9os/%31%32%33/x.ts",
        "/vid%C3%A9os/123/%78.ts",
    ):
        assert make().verify_link(f"{path}?{folder.query}").below == "x.ts"


OUTSIDE = [
    "/videos/1234/x.ts",  # a longer folder name: whole segments only
    "/videos/12/x.ts",
    "/videos/123",  # the folder without its slash
    "/videos/",
    "/Videos/123/x.ts",  # case
    "/videos/123/../1234/x.ts",
    "/videos/123/%2e%2e/1234/x.ts",
    "/videos/123/%2E%2E/x.ts",
    "/videos/123/.%2e/x.ts",
    "/videos/123/./x.ts",
    "/videos/123/%2e/x.ts",
    "/videos/123/..",
    "/videos/123/.",
    "/videos/123/x/..",
    "/videos/123//x.ts",
    "/videos/123/a//x.ts",
    "/videos/123/..%2Fx.ts",
    "/videos/123/a%2Fb.ts",
    "/videos/123/a%2fb.ts",
    "/videos/123/a%5Cb.ts",
    "/videos/123/a%5cb.ts",
    "/videos/123/..\\x.ts",
    "/videos/123/a\\b.ts",
    "/videos/123/%252e%252e/x.ts",  # double encoding
    "/videos/123/%25252e%25252e/x.ts",
    "/videos/123/%252F/x.ts",
    "/videos/123/%2525252e",  # decodes more than three times
    "/videos/123/%C0%AE%C0%AE/x.ts",  # overlong UTF-8 dots
    "/videos/123/%E0%80%AE%E0%80%AE/x.ts",
    "/videos/123/%C0%AF",  # overlong slash
    "/videos/123/%FF.ts",  # not UTF-8
    "/videos/123/%00.ts",
    "/videos/123/x.ts%00.txt",
    "/videos/123/%0a.ts",
    "/videos/123/%0D.ts",
    "/videos/123/%7F.ts",
    "/videos/123/%C2%85.ts",  # C1 control (NEL)
    "/videos/123/x\x00.ts",
    "/videos/123/\u00e9.ts",  # raw non-ASCII on the wire
    "videos/123/x.ts",  # not absolute
]


@pytest.mark.parametrize("path", OUTSIDE)
def test_paths_outside_the_prefix_or_spelled_to_reach_outside_are_refused(path: str) -> None:
    folder = make().sign_prefix("/videos/123/", expires_in=60)
    assert link_prefix.below(path, folder.prefix) is None
    with pytest.raises(BadSignature):
        make().verify_link(f"{path}?{folder.query}")


@pytest.mark.parametrize("path", ["/videos/123/x%2Fy.ts", "/videos/123/../x.ts", "/videos/1234/x.ts"])
def test_link_refuses_to_write_a_link_that_would_not_verify(path: str) -> None:
    folder = make().sign_prefix("/videos/123/", expires_in=60)
    with pytest.raises(ValueError, match="not inside the signed prefix"):
        folder.link(path)


def test_link_takes_a_path_alone() -> None:
    with pytest.raises(ValueError, match="no query or fragment"):
        make().sign_prefix("/videos/123/").link("x.ts?a=1")


@pytest.mark.parametrize(
    ("prefix", "match"),
    [
        ("/videos/12", "ends with '/'"),
        ("/videos/12.ts", "ends with '/'"),
        ("/videos/../secret/", "'..' segment"),
        ("/videos/%2e%2e/", "'..' segment"),
        ("/videos/./", "'.' or '..' segment"),
        ("//videos/", "empty"),
        ("/videos//123/", "empty"),
        ("/videos%2F123/", "encoded slash"),
        ("/videos\\123/", "backslash"),
        ("/videos/\x00/", "control character"),
        ("videos/", "not an absolute path"),
        ("/videos/?a=1", "a path .* alone"),
        ("/videos/#x", "a path .* alone"),
        ("https:///videos/", "a path .* alone"),
    ],
)
def test_a_prefix_that_could_not_match_safely_is_refused_at_signing(prefix: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make().sign_prefix(prefix, expires_in=60)


def test_single_use_and_a_download_name_are_refused_with_a_prefix() -> None:
    with pytest.raises(ValueError, match="cannot be single-use: its first request would use it up for every file"):
        make().sign_prefix("/videos/123/", expires_in=60, single_use=True)
    with pytest.raises(ValueError, match="names no download"):
        make().sign_prefix("/videos/123/", expires_in=60, filename="x.ts")


def test_the_prefix_parameter_is_the_signers_own() -> None:
    with pytest.raises(ValueError, match=r"already has 'prefix'.*use sign_prefix\(\) instead.*prefix_param="):
        make().sign("/a?prefix=%2F")
    assert make(prefix_param="folder").verify_link(make(prefix_param="folder").sign("/a?prefix=%2F")).prefix is None
    with pytest.raises(ValueError, match="must differ"):
        make(prefix_param="expires")


def test_a_folder_signature_never_verifies_as_a_file_link_nor_the_reverse() -> None:
    folder = make().sign_prefix("/videos/123/", expires_in=60)
    without_prefix = folder.query.split("&", 1)[1]  # the same signature, read as a single-file link's
    with pytest.raises(BadSignature, match="signature does not match"):
        make().verify_link("/videos/123/?" + without_prefix)
    # A single-file link whose query happens to hold "prefix=" (a signer that calls its own parameter otherwise)
    # has a MAC of the single-file form: read as a folder link, it does not verify.
    file_link = make(prefix_param="folder").sign("/videos/123/?prefix=%2Fvideos%2F123%2F", expires_in=60)
    with pytest.raises(BadSignature, match="signature does not match"):
        make().verify_link(file_link)
    # The forms differ in their first line only.
    assert link_prefix.form(b"url1\nh\n/p/\nq\n") == b"url1p\nh\n/p/\nq\n"


def test_a_folder_link_with_another_prefix_or_two_prefixes_is_refused() -> None:
    folder = make().sign_prefix("/videos/123/", expires_in=60)
    with pytest.raises(BadSignature, match="signature does not match"):
        make().verify_link("/videos/1234/x.ts?" + folder.query.replace("123%2F", "1234%2F"))
    with pytest.raises(BadSignature, match="more than one prefix"):
        make().verify_link("/videos/123/x.ts?prefix=%2F&" + folder.query)
    with pytest.raises(BadSignature, match="malformed prefix"):
        make().verify_link("/videos/123/x.ts?" + folder.query.replace("%2F123%2F", "%2F123"))
    # Any other spelling of a prefix is what no signer wrote: its MAC does not match (the shape alone is read first).
    with pytest.raises(BadSignature, match="signature does not match"):
        make().verify_link("/videos/123/x.ts?" + folder.query.replace("prefix=%2F", "prefix=%2F%2F"))
    with pytest.raises(BadSignature, match="malformed prefix"):
        make().verify_link("/videos/123/x.ts?" + folder.query.replace("%2F123%2F", "%2F123%2F%0A%2F"))


def test_times_and_bind_are_those_of_single_file_links() -> None:
    expired = make().sign_prefix("/v/", expires_at=NOW - 1)
    with pytest.raises(SignatureExpired):
        make().verify_link(expired.link("x"))
    later = make().sign_prefix("/v/", expires_in=3600, starts=datetime.fromtimestamp(NOW + 600, tz=timezone.utc))
    assert "&starts=1800000600&" in later.query
    with pytest.raises(SignatureNotYetValid):
        make().verify_link(later.link("x"))
    assert URLSigner(SECRET, purpose="downloads", clock=lambda: NOW + 600).verify_link(later.link("x")).below == "x"
    with pytest.raises(ValueError, match="before the link's expiry"):
        make().sign_prefix("/v/", expires_in=60, starts=NOW + 60)
    bound = make().sign_prefix("/v/", expires_in=60, bind=42)
    assert make().verify_link(bound.link("x"), bind=42).prefix == "/v/"
    with pytest.raises(BadSignature):
        make().verify_link(bound.link("x"), bind=43)
    with pytest.raises(BadSignature):
        make().verify_link(bound.link("x"))


def test_a_host_bound_signer_signs_an_absolute_prefix() -> None:
    signer = make(bind_host=True)
    with pytest.raises(ValueError, match="binds the host"):
        signer.sign_prefix("/v/")
    folder = signer.sign_prefix("https://example.com:443/v/", expires_in=60)
    link = folder.link("x.ts")
    assert link.startswith("https://example.com:443/v/x.ts?prefix=")
    assert signer.verify_link(link).below == "x.ts"
    with pytest.raises(BadSignature):
        signer.verify_link(link.replace("example.com", "example.org"))


def test_ignored_parameters_may_be_added() -> None:
    folder = make(ignore=("utm_*",)).sign_prefix("/v/", expires_in=60)
    assert make(ignore=("utm_*",)).verify_link(folder.link("x") + "&utm_source=mail").below == "x"
    with pytest.raises(BadSignature):
        make().verify_link(folder.link("x") + "&other=1")


@pytest.mark.parametrize(
    ("name", "below", "folder"),
    [
        ("videos/123/x.ts", "x.ts", "videos/123"),  # route /files/<name>, prefix /files/videos/123/
        ("videos/123/a/x.ts", "a/x.ts", "videos/123"),
        ("x.ts", "x.ts", ""),  # the prefix is the route's own
        ("x.ts", "files/x.ts", ""),  # the prefix holds the route
        ("a/x.ts", "videos/a/x.ts", ""),
    ],
)
def test_the_folder_a_served_name_must_stay_in(name: str, below: str, folder: str) -> None:
    link = VerifiedLink(False, None, None, prefix="/p/", below=below)
    assert link_prefix.folder(name, link) == folder
    assert link_prefix.folder(name, VerifiedLink(False, None, None)) == ""
    assert link_prefix.folder(name, None) == ""


@pytest.mark.parametrize(("name", "below"), [("x.ts", "y.ts"), ("ax.ts", "x.ts"), ("videos/123/", ""), ("a/b", "c/b")])
def test_a_served_name_that_does_not_line_up_with_the_prefix_is_unsafe(name: str, below: str) -> None:
    with pytest.raises(files.UnsafePath):
        link_prefix.folder(name, VerifiedLink(False, None, None, prefix="/p/", below=below))


def test_a_file_is_opened_only_inside_the_folder_its_links_resolved(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "v" / "1").mkdir(parents=True)
    (root / "v" / "1" / "in.ts").write_text("in")
    (root / "v" / "2").mkdir()
    (root / "v" / "2" / "sibling.ts").write_text("sibling")
    (root / "v" / "1" / "out.ts").symlink_to(root / "v" / "2" / "sibling.ts")
    (root / "v" / "1" / "out-dir").symlink_to(root / "v" / "2")
    (root / "v" / "1" / "here.ts").symlink_to(root / "v" / "1" / "in.ts")
    with files.open_under(root, "v/1/in.ts", "v/1").handle as handle:
        assert handle.read() == b"in"
    with files.open_under(root, "v/1/here.ts", "v/1").handle as handle:
        assert handle.read() == b"in"
    with files.open_under(root, "v/1/out.ts").handle as handle:  # a single-file link: the root bounds it
        assert handle.read() == b"sibling"
    for name in ("v/1/out.ts", "v/1/out-dir/sibling.ts"):
        with pytest.raises(files.UnsafePath, match="outside the signed folder"):
            files.open_under(root, name, "v/1")


def _below_as_written(path: str, prefix: str) -> str | None:
    """``below`` without its fast path for a plain path: the rule as first written (path_problem, the canonical
    form, the part below the prefix decoded)."""
    if link_prefix.path_problem(path) is not None:
        return None
    canonical = canonical_path(path)
    if not canonical.startswith(prefix):
        return None
    return unquote(canonical[len(prefix) :], encoding="utf-8", errors="strict")


#: What paths are made of: the folder's names, near misses, and every trick of tests/signed_urls/test_prefix_fuzz.py.
PIECES = ["videos", "123", "1234", "Videos", "a.ts", "", ".", "..", "%2e", "%2E%2E", "%2F", "%5C", "\\", "%00"]
PIECES += ["%0a", "\x7f", "\x85", "caf%C3%A9", "%C0%AE", "%252e", "%", "%zz", ";", "~", "+", "a b", "\u00e9"]


@given(st.lists(st.sampled_from(PIECES), max_size=6).map("/".join), st.sampled_from(["/videos/123/", "/"]))
def test_below_gives_what_the_rule_as_written_gives(rest: str, prefix: str) -> None:
    for path in (prefix + rest, "/" + rest, prefix.rstrip("/") + rest):
        assert link_prefix.below(path, prefix) == _below_as_written(path, prefix), path
