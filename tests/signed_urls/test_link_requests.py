"""The link decisions of the core (``link_requests``), without a framework: what both adapters translate."""

from __future__ import annotations

import logging

import pytest

from blake2sign_web.links import files
from blake2sign_web.links import requests as link_requests
from blake2sign_web.links.requests import Consumption, Refusal, StoreCall
from blake2sign_web.links.signer import URLSigner, VerifiedLink
from blake2sign_web.stores.revocation import StoreUnavailable

SIGNER = URLSigner("link-requests-secret-0123456789abcdef", purpose="tests")
ORDINARY = VerifiedLink(False, 2_000_000_000, None)
ONCE = VerifiedLink(False, 2_000_000_000, "n" * 22)
POSTED = VerifiedLink(False, 2_000_000_000, "n" * 22, "post")


def test_verify_answers_a_link_or_a_refusal(caplog: pytest.LogCaptureFixture) -> None:
    link = SIGNER.sign("/a", expires_in=60)
    assert isinstance(link_requests.verify(SIGNER, link, bind=None, path="/a"), VerifiedLink)
    assert link_requests.verify(SIGNER, link + "x", bind=None, path="/a") == Refusal(403, link_requests.INVALID)
    expired = SIGNER.sign("/a", expires_at=1)
    assert link_requests.verify(SIGNER, expired, bind=None, path="/a", expired_status=403).status == 403
    assert link_requests.verify(SIGNER, expired, bind=None, path="/a").status == 410
    with caplog.at_level(logging.INFO, "blake2sign_web.signed_urls"):
        assert link_requests.verify(SIGNER, None, bind=None, path="/\ud800\n" + "x" * 300).status == 403
    assert "path or query is not UTF-8" in caplog.text
    assert "\n" not in caplog.records[-1].getMessage()  # the path is logged with repr, and cut
    assert len(caplog.records[-1].getMessage()) < 300


@pytest.mark.parametrize(
    ("link", "method", "serves_file", "expected"),
    [
        (ORDINARY, "PUT", False, "proceed"),  # a view decides for itself
        (ORDINARY, "POST", True, Refusal(405, "Method Not Allowed", {"Allow": "GET, HEAD"})),
        (ORDINARY, "HEAD", True, "proceed"),
        (POSTED, "GET", True, "confirm"),
        (POSTED, "HEAD", False, "confirm"),
        (POSTED, "POST", True, "proceed"),
        (POSTED, "DELETE", False, Refusal(405, "Method Not Allowed", {"Allow": "GET, HEAD, POST"})),
    ],
)
def test_admission(link: VerifiedLink, method: str, serves_file: bool, expected: object) -> None:
    assert link_requests.admission(link, method, serves_file=serves_file) == expected


def test_consumption_continues_only_a_file_link_not_confirmed_by_post() -> None:
    whole = files.ByteRange(0, 10, 10)
    part = files.ByteRange(0, 4, 10)
    assert link_requests.consumption(ONCE, "GET") == Consumption()
    assert link_requests.consumption(POSTED, "POST", file_size=10) == Consumption()
    assert link_requests.consumption(ONCE, "HEAD", file_size=10) == Consumption(10, 0)
    assert link_requests.consumption(ONCE, "GET", file_size=10, wanted=part) == Consumption(10, 4)
    assert link_requests.consumption(ONCE, "GET", file_size=10, wanted=whole) == Consumption(10, None)
    assert (
        link_requests.consumption(ONCE, "GET", file_size=10, wanted=files.RangeNotSatisfiable(10)).continuation is None
    )


def test_before_store_and_consumed() -> None:
    terms = Consumption(10, 4)
    assert link_requests.before_store(ORDINARY, path="/", missing_store=None, terms=terms) is None
    assert link_requests.before_store(ONCE, path="/", missing_store=None, terms=terms) == StoreCall(
        ONCE.nonce or "", 2_000_000_000, 10, 4
    )
    assert link_requests.before_store(ONCE, path="/", missing_store="no store", terms=terms) == Refusal(
        403, link_requests.INVALID
    )
    crossed = link_requests.before_store(POSTED, path="/", missing_store=None, cross_site=True, terms=terms)
    assert crossed == Refusal(403, link_requests.CROSS_SITE)
    down = StoreUnavailable("timed out")
    assert link_requests.consumed(True, path="/", fails_open=False, option="x") is None
    assert link_requests.consumed(False, path="/", fails_open=False, expired_status=403, option="x") == Refusal(
        403, link_requests.USED
    )
    assert link_requests.consumed(down, path="/", fails_open=False, option="x") == Refusal(
        503, link_requests.UNAVAILABLE
    )
    assert link_requests.consumed(down, path="/", fails_open=True, option="x") is None


@pytest.mark.parametrize(
    ("path", "prefix", "expected"),
    [
        ("/x", "", "/x"),
        ("/x", "/", "/x"),
        ("/p/x", "/p", "/p/x"),
        ("/p", "/p/", "/p"),
        ("/x", "/p", "/p/x"),
        ("/pq/x", "/p", "/p/pq/x"),  # a prefix ends at a segment boundary
    ],
)
def test_with_prefix(path: str, prefix: str, expected: str) -> None:
    assert link_requests.with_prefix(path, prefix) == expected


def test_request_target() -> None:
    assert link_requests.request_target("/a", "") == "/a"
    assert link_requests.request_target("/a", "b=1") == "/a?b=1"
    assert link_requests.request_target("/a", "b=1", origin=("https", "x.example")) == "https://x.example/a?b=1"


def test_file_answer() -> None:
    validators = ('"e"', "Thu, 01 Jan 1970 00:00:01 GMT")
    whole = link_requests.file_answer("a.txt", "attachment", 10, validators, None, posted=False)
    assert (whole.status, whole.headers["Content-Length"], whole.headers["Accept-Ranges"]) == (200, "10", "bytes")
    part = link_requests.file_answer("a.txt", "inline", 10, validators, files.ByteRange(2, 5, 10), posted=False)
    assert (part.status, part.headers["Content-Range"], part.headers["Content-Length"]) == (206, "bytes 2-4/10", "3")
    refused = link_requests.file_answer("a", "inline", 10, validators, files.RangeNotSatisfiable(10), posted=False)
    assert refused == link_requests.FileAnswer(416, {"Content-Range": "bytes */10"}, None)
    unseekable = link_requests.file_answer(
        "a", "inline", 10, (None, None), files.ByteRange(2, 5, 10), posted=False, seekable=False
    )
    assert (unseekable.status, unseekable.headers["Accept-Ranges"]) == (200, "none")
    assert "ETag" not in unseekable.headers
    unknown = link_requests.file_answer("a", "inline", 10, validators, None, posted=True, seekable=None)
    assert "Accept-Ranges" not in unknown.headers
    assert unknown.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("method", "headers", "expected"),
    [
        ("GET", {}, None),
        ("GET", {"if-none-match": '"e"'}, 304),
        ("HEAD", {"if-none-match": 'W/"e"'}, 304),
        ("PUT", {"if-none-match": "*"}, 412),
        ("GET", {"if-none-match": '"x"', "if-modified-since": "Thu, 01 Jan 2099 00:00:00 GMT"}, None),
        ("GET", {"if-modified-since": "Thu, 01 Jan 2099 00:00:00 GMT"}, 304),
        ("GET", {"if-modified-since": "not a date"}, None),
        ("GET", {"if-match": '"x"'}, 412),
        ("GET", {"if-match": "*"}, None),
        ("GET", {"if-match": '"e"', "if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}, None),
        ("GET", {"if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}, 412),
        ("GET", {"if-unmodified-since": "Thu, 01 Jan 2099 00:00:00 GMT"}, None),
    ],
)
def test_conditional_status(method: str, headers: dict[str, str], expected: int | None) -> None:
    assert files.conditional_status(method, headers, '"e"', 100) == expected


def test_options_are_checked_once_with_the_frameworks_names() -> None:
    with pytest.raises(ValueError, match=r"^EXPIRED_STATUS must be 410 or 403; got 500$"):
        link_requests.check_link_options(expired_status=500, spell=str.upper)
    with pytest.raises(ValueError, match=r"^ON_UNAVAILABLE must be 'closed'"):
        link_requests.check_link_options(on_unavailable="refuse", spell=str.upper)
    with pytest.raises(ValueError, match=r"^HASHER must be one of blake2b"):
        link_requests.check_link_options(hasher="md5", spell=str.upper)
    with pytest.raises(ValueError, match="expired_status"):
        link_requests.check_link_options(expired_status=True)


@pytest.mark.parametrize(
    "base_url", ["ftp://x.example", "https://", "https://x.example/?q=1", "https://x.example/#f", "https://u@x.example"]
)
def test_public_base_problem(base_url: str) -> None:
    assert link_requests.public_base_problem(base_url) is not None


def test_a_public_base() -> None:
    assert link_requests.public_base_problem("https://x.example:8443/prefix") is None


def test_check_verifies_then_admits() -> None:
    link = SIGNER.sign("/a", expires_in=60)
    verified = link_requests.check(SIGNER, link, None, "/a", "GET")
    assert type(verified) is VerifiedLink
    assert link_requests.check(SIGNER, link + "x", None, "/a", "GET") == Refusal(403, link_requests.INVALID)
    not_allowed = Refusal(405, "Method Not Allowed", {"Allow": "GET, HEAD"})
    assert link_requests.check(SIGNER, link, None, "/a", "POST", 410, True) == not_allowed
    posted = SIGNER.sign("/a", expires_in=60, single_use=True, consume_on="post")
    page = link_requests.check(SIGNER, posted, None, "/a", "HEAD")
    assert isinstance(page, link_requests.Confirmation)
    assert page.link.consume_on == "post"
    assert link_requests.check(SIGNER, posted, None, "/a", "POST") == page.link


def test_answer_file_decides_304_412_and_the_file() -> None:
    mtime_ns = 1_000_000_000_000_000_000
    etag, last_modified = link_requests.validators(10, mtime_ns)
    assert etag is not None
    assert last_modified is not None
    fresh = link_requests.answer_file(
        "GET", {"if-none-match": etag}, "a.txt", "inline", 10, mtime_ns, None, posted=False
    )
    assert fresh == link_requests.FileAnswer(304, {"ETag": etag, "Last-Modified": last_modified}, None)
    changed = link_requests.answer_file(
        "GET", {"if-match": '"other"'}, "a.txt", "inline", 10, mtime_ns, None, posted=False
    )
    assert changed == link_requests.FileAnswer(412, {}, None)
    # A confirmation's POST gets the file whatever the validators say.
    posted = link_requests.answer_file(
        "POST", {"if-none-match": etag}, "a.txt", "inline", 10, mtime_ns, None, posted=True
    )
    assert posted.status == 200
    wanted = link_requests.file_range({"range": "bytes=2-4"}, 10, mtime_ns, posted=False)
    assert wanted == files.ByteRange(2, 5, 10)
    part = link_requests.answer_file("GET", {}, "a.txt", "inline", 10, mtime_ns, wanted, posted=False)
    assert (part.status, part.headers["Content-Range"]) == (206, "bytes 2-4/10")
    assert link_requests.file_range({"range": "bytes=2-4"}, 10, mtime_ns, posted=True) is None
    assert link_requests.conditional_answer("GET", {"if-none-match": etag}, 10, None, posted=False) is None


def test_client_identity() -> None:
    assert link_requests.client_identity("192.0.2.1", "Mozilla/5.0") == "192.0.2.1 Mozilla/5.0"
