"""Signed links through every framework: the same scenario must get the same status and the same headers.

Each scenario signs its own links (a single-use link is used up by the first framework otherwise) and
sends the same requests through every driver of ``link_drivers``; what a framework answers is reduced to
the status, the headers below and, for a file, the body. The differences a framework's own contract
demands are ``LINK_DIFFERENCES``, applied in ``observed`` and listed in docs/signed-urls.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path
from typing import Any, Final, Literal

import pytest

from blake2sign_web.links.grants import grant, grant_name
from blake2sign_web.links.playlists import MAX_SERVED_SIZE
from blake2sign_web.signing.serializer import CLOCK_SKEW
from blake2sign_web.stores.revocation import DEFAULT_CLOCK_SKEW
from tests.hasher import HASHER
from tests.redis_server import RedisServer

from .link_drivers import DRIVERS, LinkDriver, LinkResponse, signer

CONTENT: Final = bytes(range(256)) * 40  # 10240 bytes
PLAYLIST: Final = "#EXTM3U\n#EXTINF:2.0,\nseg-1.ts\n#EXT-X-ENDLIST\n"
#: The headers that say what a link decided; each must be equal across frameworks.
COMPARED: Final = (
    "allow",
    "accept-ranges",
    "cache-control",
    "content-disposition",
    "content-length",
    "content-range",
    "content-security-policy",
    "etag",
    "last-modified",
    "referrer-policy",
    "x-content-type-options",
    "x-frame-options",
    "x-robots-tag",
)
LINK_DIFFERENCES: Final = {
    "error pages": (
        "Django answers a refused link (403) with PermissionDenied and a missing file with Http404, so that the "
        "site's own 403 and 404 pages render; Starlette answers with the plain-text message. The suite compares "
        "the status and headers of an error (4xx, 5xx), not its body or type."
    ),
    "charset": (
        "Starlette's responses add '; charset=utf-8' to a text/* Content-Type (its Response's media_type); "
        "Django sends the file's type as guessed. The suite compares the type without its parameters."
    ),
    "last-modified of a 304": (
        "Werkzeug takes Last-Modified off a 304 (an entity header in RFC 2616's sense, as Flask's own send_file "
        "answers); Django and Starlette keep it. RFC 9110 asks a 304 for the ETag, which all three send; the "
        "suite compares a 304 without Last-Modified."
    ),
    "content-length of a page": (
        "Content-Length of a response that is not a file (a view's text, the confirmation page, an error) is "
        "each framework's own; the suite compares it for files only."
    ),
}

Send = Callable[[str, str, dict[str, str]], LinkResponse]
Scenario = Callable[[Send, Callable[..., str]], list[LinkResponse]]


def observed(response: LinkResponse) -> dict[str, Any]:
    """What the suite compares of one response (``LINK_DIFFERENCES`` say what is left out, and why)."""
    headers = {name: response.headers[name] for name in COMPARED if name in response.headers}
    if response.status == 304:
        headers.pop("last-modified", None)
    content_type = response.headers.get("content-type", "").partition(";")[0].strip()
    is_file = "content-disposition" in headers or response.status in (206, 416)
    if not is_file:
        headers.pop("content-length", None)
    return {
        "status": response.status,
        "content-type": content_type if response.status < 400 and response.body else None,
        "headers": headers,
        "body": response.body if is_file else None,
    }


def ago(seconds: int) -> int:
    return int(time.time()) - seconds


def valid(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    return [send("GET", sign("/links/view/", expires_in=60), {})]


def expired(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    return [send("GET", sign("/links/view/", expires_at=ago(10)), {})]


def not_yet_valid(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    """Before its start (403), within the clock-skew margin before it, after it; a view and a file alike."""
    now = int(time.time())
    return [
        send("GET", sign("/links/view/", expires_in=7200, starts=now + 3600), {}),
        send("GET", sign("/links/view/", expires_in=7200, starts=now + CLOCK_SKEW - 1), {}),
        send("GET", sign("/links/view/", expires_in=7200, starts=ago(10)), {}),
        send("GET", sign("/links/files/report.bin", starts=now + 3600), {}),
        send("HEAD", sign("/links/files/report.bin", starts=ago(10)), {}),
        send("GET", sign("/links/view/", expires_in=7200, single_use=True, starts=now + 3600), {}),
    ]


def tampered(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/view/?n=1", expires_in=60)
    unsigned = "/links/view/?n=1"
    return [send("GET", link.replace("n=1", "n=2"), {}), send("GET", unsigned, {})]


def bound(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/bound/", expires_in=60, bind="alice")
    return [send("GET", link, {"X-User": "alice"}), send("GET", link, {"X-User": "bob"}), send("GET", link, {})]


def single_use(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/view/", expires_in=60, single_use=True)
    return [send("GET", link, {}), send("GET", link, {}), send("HEAD", link, {})]


def file_ranges(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/files/report.bin", expires_in=60)
    return [
        send("GET", link, {}),
        send("GET", link, {"Range": "bytes=0-9"}),
        send("GET", link, {"Range": "bytes=-5"}),
        send("GET", link, {"Range": "bytes=0-1,5-6"}),
        send("GET", link, {"Range": "bytes=10240-"}),
        send("HEAD", link, {}),
        send("HEAD", link, {"Range": "bytes=100-199"}),
    ]


def file_named(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    inline = sign("/links/files/report.bin", expires_in=60, disposition="inline")
    named = sign("/links/files/report.bin", expires_in=60, filename="r\u00e9sum\u00e9 2026.pdf")
    return [send("GET", inline, {}), send("GET", named, {}), send("GET", sign("/links/files/none", expires_in=60), {})]


def conditional(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/files/report.bin", expires_in=60)
    first = send("GET", link, {})
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    later = formatdate(time.time() + 3600, usegmt=True)
    return [
        first,
        send("GET", link, {"If-None-Match": etag}),
        send("HEAD", link, {"If-None-Match": f'"other", {etag}'}),
        send("GET", link, {"If-Modified-Since": modified}),
        send("GET", link, {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}),
        send("GET", link, {"If-Match": '"other"'}),
        send("GET", link, {"If-Match": etag, "Range": "bytes=0-3"}),
        send("GET", link, {"If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}),
        send("GET", link, {"If-Unmodified-Since": later}),
        send("GET", link, {"Range": "bytes=0-3", "If-Range": etag}),
        send("GET", link, {"Range": "bytes=0-3", "If-Range": '"other"'}),
    ]


def single_use_file(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/files/report.bin", expires_in=60, single_use=True)
    return [
        send("GET", link, {}),
        send("GET", link, {"Range": "bytes=0-9"}),  # the same client continues with a range
        send("HEAD", link, {}),
        send("GET", link, {}),  # never the whole file again
    ]


def confirmed_by_post(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    view = sign("/links/view/", expires_in=60, single_use=True, consume_on="post")
    file = sign("/links/files/report.bin", expires_in=60, single_use=True, consume_on="post")
    return [
        send("GET", view, {}),
        send("HEAD", view, {}),
        send("PUT", view, {}),
        send("POST", view, {}),
        send("POST", view, {}),
        send("GET", file, {}),
        send("PUT", file, {}),
        send("POST", file, {}),
        send("POST", file, {}),
    ]


def wrong_method_on_a_file(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    link = sign("/links/files/report.bin", expires_in=60)
    return [send("POST", link, {}), send("PUT", link, {})]


def link_group(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    view = sign("/links/view/", expires_in=60, group="course-42")
    file = sign("/links/files/report.bin", expires_in=60, group="course-42")
    once = sign("/links/view/", expires_in=60, group="course-42", single_use=True)
    other = sign("/links/view/", expires_in=60, group="course-43")
    before = [send("GET", view, {}), send("GET", file, {"Range": "bytes=0-9"}), send("GET", once, {})]
    revoked = send("POST", "/links/revoke/course-42", {})
    at_once = sign("/links/view/", expires_in=60, group="course-42")  # within the clocks' allowance: refused too
    ahead = signer(clock=lambda: time.time() + DEFAULT_CLOCK_SKEW + 1)
    after = ahead.sign("/links/view/", expires_in=60, group="course-42")  # signed after it
    refused = [send("GET", view, {}), send("GET", file, {}), send("HEAD", once, {})]
    return [*before, revoked, *refused, send("GET", other, {}), send("GET", at_once, {}), send("GET", after, {})]


def grouped_folder(group: str) -> tuple[list[str], Callable[[LinkResponse], LinkResponse]]:
    """A grouped folder link's playlist (GET, HEAD) and segment: the three requests the playlist scenarios send; and
    what makes a response comparable across frameworks (each signs its own link: its query, in a rewritten body,
    is written as "<query>")."""
    folder = signer().sign_prefix("/links/files/v/", expires_in=60, group=group)
    query = folder.query.encode()

    def comparable(response: LinkResponse) -> LinkResponse:
        return LinkResponse(response.status, response.headers, response.body.replace(query, b"<query>"))

    return [folder.link("index.m3u8"), folder.link("index.m3u8"), folder.link("seg-1.ts")], comparable


def grouped_playlist(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    """A folder link's playlist is checked like its segments: rewritten until the group is revoked, then 410."""
    (playlist, head, segment), comparable = grouped_folder("course-45")
    before = [send("GET", playlist, {}), send("HEAD", head, {}), send("GET", segment, {})]
    revoked = send("POST", "/links/revoke/course-45", {})
    after = [send("GET", playlist, {}), send("HEAD", head, {}), send("GET", segment, {})]
    return [comparable(response) for response in (*before, revoked, *after)]


def grant_cookies(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    """A folder granted by cookie: its files by the cookie alone (GET, HEAD, a range), not a POST, nothing outside;
    a wrong and an expired cookie; a grant of the view's folder reaches the view."""

    def jar(value: str, prefix: str = "/links/files/") -> dict[str, str]:
        return {"Cookie": f"{grant_name(prefix, HASHER)}={value}"}

    files = grant(signer(), "/links/files/", secure=False, expires_in=60).value
    views = grant(signer(), "/links/", secure=False, expires_in=60).value
    expired = signer().sign_prefix("/links/files/", expires_at=ago(10)).query.replace("=", ":")
    return [
        send("GET", "/links/files/report.bin", jar(files)),
        send("HEAD", "/links/files/report.bin", jar(files)),
        send("GET", "/links/files/report.bin", {**jar(files), "Range": "bytes=0-9"}),
        send("POST", "/links/files/report.bin", jar(files)),
        send("GET", "/links/view/", jar(files)),
        send("GET", "/links/view/", jar(views, "/links/")),
        send("GET", "/links/files/report.bin", jar(files.replace("signature:", "signature:A"))),
        send("GET", "/links/files/report.bin", jar(expired)),
    ]


def grant_cookie_group(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
    """A grant cookie of a group: its files until the group is revoked, then the expired status."""
    value = grant(signer(), "/links/files/", secure=False, expires_in=60, group="course-44").value
    cookie = {"Cookie": f"{grant_name('/links/files/', HASHER)}={value}"}
    before = send("GET", "/links/files/report.bin", cookie)
    revoked = send("POST", "/links/revoke/course-44", {})
    return [before, revoked, send("GET", "/links/files/report.bin", cookie)]


SCENARIOS: Final[dict[str, Scenario]] = {
    "valid": valid,
    "expired": expired,
    "not yet valid": not_yet_valid,
    "tampered or unsigned": tampered,
    "bound": bound,
    "single use": single_use,
    "range and head": file_ranges,
    "download names": file_named,
    "conditional": conditional,
    "single-use file continued": single_use_file,
    "consume_on post": confirmed_by_post,
    "wrong method on a file": wrong_method_on_a_file,
    "link group revoked": link_group,
    "grant cookies": grant_cookies,
    "grant cookie of a revoked group": grant_cookie_group,
    "grouped playlist revoked": grouped_playlist,
}


def run(driver: LinkDriver, scenario: Scenario, *, bind_host: bool = False) -> list[dict[str, Any]]:
    links = signer(bind_host=bind_host)
    with driver.running():
        return [observed(response) for response in scenario(driver.request, links.sign)]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "report.bin").write_bytes(CONTENT)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "index.m3u8").write_text(PLAYLIST)
    (tmp_path / "v" / "seg-1.ts").write_bytes(b"segment")
    return tmp_path


@pytest.mark.parametrize("name", SCENARIOS)
def test_frameworks_agree(name: str, root: Path, redis_url: str, conformance_redis: RedisServer) -> None:
    outcomes = {}
    for driver in DRIVERS:
        conformance_redis.flush()  # each its own records: a group another revoked now would refuse its new links
        outcomes[driver.name] = run(driver(root, redis_url), SCENARIOS[name])
    first, *others = outcomes.values()
    for driver_name, outcome in outcomes.items():
        assert outcome == first, f"{name}: {driver_name} differs from {DRIVERS[0].name}"
    assert others  # at least two frameworks


def test_a_bound_host(root: Path, redis_url: str) -> None:
    """bind_host: the link works only on the host it names, in both."""

    def scenario(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
        link = sign("http://testserver/links/view/", expires_in=60).removeprefix("http://testserver")
        return [send("GET", link, {}), send("GET", link, {"Host": "other.example"})]

    outcomes = [run(driver(root, redis_url, bind_host=True), scenario, bind_host=True) for driver in DRIVERS]
    assert [step["status"] for step in outcomes[0]] == [200, 403]
    assert all(outcome == outcomes[0] for outcome in outcomes)


def test_the_statuses_are_those_documented(root: Path, redis_url: str) -> None:
    """The agreed outcomes are the right ones, not merely equal (one framework is enough: they agree)."""
    driver = DRIVERS[0](root, redis_url)
    expected = {
        "valid": [200],
        "expired": [410],
        "not yet valid": [403, 200, 200, 403, 200, 403],
        "tampered or unsigned": [403, 403],
        "bound": [200, 403, 403],
        "single use": [200, 410, 410],
        "range and head": [200, 206, 206, 200, 416, 200, 206],
        "download names": [200, 200, 404],
        "conditional": [200, 304, 304, 304, 200, 412, 206, 412, 200, 206, 200],
        "single-use file continued": [200, 206, 200, 410],
        "consume_on post": [200, 200, 405, 200, 410, 200, 405, 200, 410],
        "wrong method on a file": [405, 405],
        "link group revoked": [200, 206, 200, 200, 410, 410, 410, 200, 410, 200],
        "grant cookies": [200, 200, 206, 403, 403, 200, 403, 410],
        "grant cookie of a revoked group": [200, 200, 410],
        "grouped playlist revoked": [200, 200, 200, 200, 410, 410, 410],
    }
    for name, statuses in expected.items():
        assert [step["status"] for step in run(driver, SCENARIOS[name])] == statuses, name


@pytest.mark.parametrize(("store", "status"), [("none", 403), ("down", 503)])
def test_a_grouped_playlist_needs_the_store_as_its_segments_do(
    root: Path, redis_url: str, store: Literal["none", "down"], status: int
) -> None:
    """With no store, or one that is down (the default policy: closed), a grouped folder link's playlist is refused
    as its segments are, HEAD too: never rewritten before the group is checked."""

    def scenario(send: Send, sign: Callable[..., str]) -> list[LinkResponse]:
        (playlist, head, segment), comparable = grouped_folder("course-46")
        sent = [send("GET", playlist, {}), send("HEAD", head, {}), send("GET", segment, {})]
        return [comparable(response) for response in sent]

    outcomes = {driver.name: run(driver(root, redis_url, store=store), scenario) for driver in DRIVERS}
    assert [step["status"] for step in outcomes["django"]] == [status] * 3
    assert all(outcome == outcomes["django"] for outcome in outcomes.values()), outcomes


def test_a_playlists_head_is_not_rewritten(root: Path, redis_url: str) -> None:
    """HEAD of a playlist by a folder link: its GET's headers but Content-Length (only the rewrite tells it), no
    body; in every framework."""
    for driver in DRIVERS:
        (playlist, head, _), _ = grouped_folder("course-47")
        with driver(root, redis_url).running() as running:
            got, headed = running.request("GET", playlist, {}), running.request("HEAD", head, {})
        assert (got.status, headed.status, headed.body) == (200, 200, b""), driver.name
        assert int(got.headers["content-length"]) == len(got.body) > len(PLAYLIST), driver.name
        assert "content-length" not in headed.headers, driver.name
        assert headed.headers["cache-control"] == got.headers["cache-control"] == "private, no-store", driver.name
        assert headed.headers["content-type"] == got.headers["content-type"] == "application/vnd.apple.mpegurl"


def test_a_playlist_over_the_limit_is_refused(root: Path, redis_url: str) -> None:
    """A playlist a view will not rewrite (over ``MAX_SERVED_SIZE``): 500 with the same message, GET and HEAD, in
    every framework; a single-file link to it still gets the file as it is."""
    (root / "v" / "long.m3u8").write_text("#EXTM3U\n" + "#EXTINF:2.0,\nseg-1.ts\n" * (MAX_SERVED_SIZE // 22 + 1))
    folder = signer().sign_prefix("/links/files/v/", expires_in=60)
    for driver in DRIVERS:
        with driver(root, redis_url).running() as running:
            got, headed = (running.request(method, folder.link("long.m3u8"), {}) for method in ("GET", "HEAD"))
            whole = running.request("HEAD", signer().sign("/links/files/v/long.m3u8", expires_in=60), {})
        assert (got.status, headed.status, whole.status) == (500, 500, 200), driver.name
        assert got.body == b"This playlist is too large to be sent by a folder link.", driver.name


def test_a_link_before_its_start_says_when(root: Path, redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """The same 403 and the same message in both: Starlette's body, Django's PermissionDenied (its 403 page)."""
    starts = int(time.time()) + 3600
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(starts))
    expected = f"This link is not valid yet; it becomes valid at {when} UTC."
    link = signer().sign("/links/view/", expires_in=7200, starts=starts)
    messages = {}
    caplog.set_level(logging.INFO, logger="blake2sign_web.signed_urls")
    for driver in DRIVERS:
        caplog.clear()
        with driver(root, redis_url).running() as running:
            response = running.request("GET", link, {})
        assert response.status == 403
        assert "retry-after" not in response.headers
        if driver.name == "django":  # PermissionDenied(message): Django logs it with the site's 403 page
            denied = [record.exc_info[1] for record in caplog.records if record.exc_info]
            messages[driver.name] = str(denied[-1])
        else:
            messages[driver.name] = response.body.decode()
        assert [r.getMessage() for r in caplog.records if r.name == "blake2sign_web.signed_urls"] == [
            f"signed URL for '/links/view/' is not valid before {starts}"
        ]
    assert messages == {driver.name: expected for driver in DRIVERS}
