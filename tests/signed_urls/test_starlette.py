"""Starlette and FastAPI: signing url_for, the decorator, the dependency and SignedFiles via TestClient."""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from blake2sign_web import signer_cache_info

from .conftest import CONTENT, RANGE_CASES, UNSATISFIABLE_RANGES
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
    assert client.get(f"/hello/a%20b?signature={query['signature']}&y=2&x=1").status_code == 200


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
    assert link.startswith("http://testserver/files/sub/caf%C3%A9%20menu.txt?expires=")
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
