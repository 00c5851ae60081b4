"""Starlette and FastAPI: signing url_for, the decorator, the dependency and SignedFiles via TestClient."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from blake2sign_web import signer_cache_info

from .conftest import CONTENT, RANGE_CASES, UNSATISFIABLE_RANGES, swap_directory_after_check
from .starlette_app import build_fastapi, build_starlette, make_signer

NOW = 1_000_000_000  # in the past: links signed "then" have expired now


@pytest.fixture
def client(served_root: Path) -> TestClient:
    return TestClient(build_starlette(served_root), base_url="http://testserver")


def signed(path: str, **options: object) -> str:
    return make_signer().sign(path, **options)  # type: ignore[arg-type]


def test_decorator_accepts_signed_refuses_unsigned(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    url = signed("/hello/ann", expires_in=60)
    assert client.get(url).text == "hello ann"
    with caplog.at_level(logging.WARNING, logger="blake2sign_web.signed_urls"):
        assert client.get("/hello/ann").status_code == 403
        assert client.get(url.replace("ann", "bob")).status_code == 403
    assert url.rsplit("=", 1)[1] not in caplog.text


def test_expired_is_410(client: TestClient) -> None:
    url = make_signer(clock=lambda: NOW).sign("/hello/ann", expires_in=1)
    response = client.get(url)
    assert response.status_code == 410
    assert "expired" in response.text


def test_reordered_and_respelled_params_verify(client: TestClient) -> None:
    url = signed("/hello/a b?x=1&y=2")
    query = dict(kv.split("=") for kv in url.split("?")[1].split("&"))
    assert client.get(f"/hello/a%20b?signature={query['signature']}&y=2&kid={query['kid']}&x=1").status_code == 200


def test_percent_in_name_is_not_decoded_twice(client: TestClient) -> None:
    # The signature is checked on the raw path. (TestClient itself decodes the path twice,
    # so the path parameter is checked with a real server in test_servers.py.)
    url = signed("/hello/" + quote("%41"))
    assert client.get(url).status_code == 200
    assert client.get(url.replace("%2541", "A")).status_code == 403


def test_value_binding(client: TestClient) -> None:
    url = signed("/bound", bind="alice")
    assert client.get(url, headers={"x-user": "alice"}).status_code == 200
    assert client.get(url, headers={"x-user": "eve"}).status_code == 403


def test_host_binding(served_root: Path) -> None:
    signer = make_signer(bind_host=True)
    client = TestClient(build_starlette(served_root, signer), base_url="http://good.example")
    url = signer.sign("http://good.example/hello/x")
    assert client.get(url).status_code == 200
    assert client.get(url.replace("good.example", "evil.example")).status_code == 403


def test_sign_url_for_makes_a_working_link(client: TestClient) -> None:
    link = client.get("/link", params={"n": "sub/caf\u00e9 menu.txt"}).text
    assert link.startswith("/files/sub/caf%C3%A9%20menu.txt?expires=")  # relative: no host a client could choose
    assert client.get(link).content == b"menu"


def test_fastapi_dependency() -> None:
    client = TestClient(build_fastapi())
    assert client.get(signed("/report/2026")).json() == {"year": 2026}
    refused = client.get("/report/2026")
    assert refused.status_code == 403
    assert refused.json() == {"detail": "This link is not valid."}
    assert client.get(make_signer(clock=lambda: NOW).sign("/report/1", expires_in=1)).status_code == 410


def test_no_signer_built_per_request(client: TestClient) -> None:
    url = signed("/hello/x")
    before = signer_cache_info().constructed
    for _ in range(3):
        assert client.get(url).status_code == 200
    assert signer_cache_info().constructed == before


def test_download(client: TestClient) -> None:
    response = client.get(signed("/files/report.bin"))
    assert response.status_code == 200
    assert response.content == CONTENT
    assert response.headers["content-length"] == str(len(CONTENT))
    assert response.headers["content-disposition"] == 'attachment; filename="report.bin"'
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["etag"].startswith('"')
    assert client.get("/files/report.bin").status_code == 403


def test_non_ascii_and_inline(client: TestClient) -> None:
    response = client.get(signed("/files/" + quote("sub/caf\u00e9 menu.txt")))
    assert response.content == b"menu"
    assert "filename*=UTF-8''caf%C3%A9%20menu.txt" in response.headers["content-disposition"]
    inline = client.get(signed("/inline/page.html"))
    assert inline.headers["content-disposition"] == 'inline; filename="page.html"'


@pytest.mark.parametrize(
    "name",
    ["../secret.txt", "escape.txt", "escape-dir/secret.txt", "%2e%2e/secret.txt", "a\x00b", "sub/../../secret.txt"],
)
def test_unsafe_names_refused_even_when_signed(client: TestClient, name: str) -> None:
    response = client.get(signed("/files/" + quote(name, safe="/%")))
    assert response.status_code in (400, 404)
    assert b"secret" not in response.content


def test_unsafe_names_get_400_when_they_reach_the_endpoint(client: TestClient) -> None:
    # Routing normalises nothing here, so these reach SignedFiles and are refused there.
    for name in ("escape.txt", "escape-dir/secret.txt", "%252e%252e/secret.txt"):
        assert client.get(signed("/files/" + quote(name, safe="/%"))).status_code == 400


def test_missing_is_404(client: TestClient) -> None:
    assert client.get(signed("/files/nope")).status_code == 404
    assert client.get(signed("/files/sub")).status_code == 404


@pytest.mark.parametrize(
    ("header", "status", "content_range", "expected"),
    RANGE_CASES,
)
def test_range(client: TestClient, header: str, status: int, content_range: str | None, expected: bytes) -> None:
    response = client.get(signed("/files/report.bin"), headers={"Range": header})
    assert response.status_code == status
    assert response.headers.get("content-range") == content_range
    assert response.content == expected
    assert response.headers["content-length"] == str(len(expected))


@pytest.mark.parametrize(("name", "header"), UNSATISFIABLE_RANGES)
def test_unsatisfiable_range_is_416(client: TestClient, name: str, header: str) -> None:
    response = client.get(signed(f"/files/{name}"), headers={"Range": header})
    assert response.status_code == 416
    assert response.headers["content-range"].startswith("bytes */")


def test_if_range_and_conditional_get(client: TestClient) -> None:
    url = signed("/files/report.bin")
    first = client.get(url)
    etag = first.headers["etag"]
    assert client.get(url, headers={"Range": "bytes=0-0", "If-Range": etag}).status_code == 206
    stale = client.get(url, headers={"Range": "bytes=0-0", "If-Range": '"stale"'})
    assert stale.status_code == 200
    assert stale.content == CONTENT
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
    assert client.get(url, headers={"If-Modified-Since": first.headers["last-modified"]}).status_code == 304


def test_head(client: TestClient) -> None:
    url = signed("/files/report.bin")
    response = client.head(url)
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-length"] == str(len(CONTENT))
    ranged = client.head(url, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206
    assert ranged.headers["content-length"] == "10"
    assert client.post(url).status_code == 405


def test_root_must_exist(tmp_path: Path) -> None:
    from blake2sign_web.starlette import SignedFiles

    with pytest.raises(ValueError, match="not a directory"):
        SignedFiles(make_signer(), tmp_path / "missing")


# --- Without raw_path ---------------------------------------------


def without_raw_path(app: ASGIApp) -> ASGIApp:
    """What Mangum (AWS Lambda) hands the app: scope["raw_path"] = None, only the path decoded once.

    (TestClient's own "path" is decoded twice, so it is made again from the raw path here.)
    """

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        # Starlette's TestClient before 0.38 (and up to 0.40 here) leaves the query in raw_path.
        path = unquote(scope["raw_path"].partition(b"?")[0].decode("ascii"))
        await app({**scope, "path": scope.get("root_path", "") + path, "raw_path": None}, receive, send)

    return wrapped


def test_decoded_path_is_not_decoded_twice_without_raw_path(served_root: Path) -> None:
    (served_root / "a.txt").write_text("a")
    (served_root / "%61.txt").write_text("literally %61")
    client = TestClient(without_raw_path(build_starlette(served_root)))
    assert client.get(signed("/files/a.txt")).text == "a"
    # The client asks for %2561.txt: the server decodes it once, to %61.txt, and must not read a.txt in it.
    smuggled = client.get(signed("/files/a.txt").replace("/a.txt", "/%2561.txt"))
    assert smuggled.status_code == 403
    assert client.get(signed("/files/" + quote("%61.txt"))).text == "literally %61"
    assert client.get(signed("/hello/" + quote("caf\u00e9 &?"))).text == "hello caf\u00e9 &?"


def test_root_path_without_raw_path(served_root: Path) -> None:
    # A proxy took /prefix off: the app sees /hello/x under root_path /prefix; the client asked for /prefix/hello/x.
    client = TestClient(without_raw_path(build_starlette(served_root)), root_path="/prefix")
    assert client.get(signed("/prefix/hello/x").removeprefix("/prefix")).text == "hello x"
    assert client.get(signed("/hello/x")).status_code == 403


# --- Names the OS refuses, and the tree changing under the view (items 7, 8) ---------


def test_name_too_long_or_symlink_loop_is_404(client: TestClient, served_root: Path) -> None:
    (served_root / "loop").symlink_to("loop")
    (served_root / "ping").symlink_to("pong")
    (served_root / "pong").symlink_to("ping")
    for name in ("a" * 300 + ".txt", "sub/" + "b" * 300, "loop", "loop/x", "ping", "pong/x"):
        assert client.get(signed("/files/" + name)).status_code == 404, name


def test_directory_swapped_for_a_link_after_the_check_is_not_followed(
    client: TestClient, served_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "caf\u00e9 menu.txt").write_text("secret")
    swap_directory_after_check(monkeypatch, served_root / "sub", outside)
    response = client.get(signed("/files/" + quote("via/caf\u00e9 menu.txt")))
    assert response.status_code == 404
    assert b"secret" not in response.content


def test_file_is_closed_when_not_sent(client: TestClient, served_root: Path) -> None:
    url = signed("/files/report.bin")
    etag = client.get(url).headers["etag"]
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for headers in ({"If-None-Match": etag}, {"Range": "bytes=99999-"}, {}):
        client.get(url, headers=headers)
        client.head(url, headers=headers)
    after = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert after <= before


# --- Logs (item 6) -----------------------------------------------------------------


def test_refused_paths_are_logged_escaped(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    forged = "a%0D%0A2026-01-01 INFO forged%1B[31m%0B%E2%80%A8%C2%85z"
    expired = make_signer(clock=lambda: NOW).sign(f"/hello/{forged}", expires_in=1)
    with caplog.at_level(logging.INFO, logger="blake2sign_web.signed_urls"):
        assert client.get(f"/hello/{forged}").status_code == 403
        assert client.get(expired).status_code == 410
        assert client.get("/hello/" + "x" * 5000).status_code == 403
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 3
    for message in messages:
        assert not any(char in message for char in "\r\n\x1b\x0b\u2028\x85"), message
        assert len(message) < 600
    assert "\\r\\n" in messages[0]


# --- The query as the endpoint reads it (item 9's check on the Starlette side) -------------


def with_raw_query_bytes(app: ASGIApp) -> ASGIApp:
    """Put the raw UTF-8 bytes of é where the client wrote '@' (servers that pass such bytes on do this)."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        query = scope["query_string"].replace(b"%40", b"@").replace(b"@", "\u00e9".encode())
        await app({**scope, "query_string": query}, receive, send)

    return wrapped


def test_raw_query_bytes_are_verified_as_query_params_reads_them(served_root: Path) -> None:
    client = TestClient(with_raw_query_bytes(build_starlette(served_root)))
    # query_params decodes raw bytes as latin-1 (é's two bytes read as Ã©), and so does the check.
    signed_for_mojibake = signed("/echo?q=" + quote("\u00c3\u00a9")).replace(quote("\u00c3\u00a9"), "@")
    assert client.get(signed_for_mojibake).text == "\u00c3\u00a9"
    signed_for_text = signed("/echo?q=" + quote("\u00e9")).replace(quote("\u00e9"), "@")
    assert client.get(signed_for_text).status_code == 403
