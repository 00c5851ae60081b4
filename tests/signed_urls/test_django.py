"""Django: sign_url, the template tag, signed_url_required and SignedFileView through the test client."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.template import Context, Template
from django.test import Client
from django.urls import reverse

from blake2sign_web import signer_cache_info
from blake2sign_web.django import sign_url
from blake2sign_web.django.signed_urls import get_signer

from .conftest import CONTENT, RANGE_CASES, UNSATISFIABLE_RANGES, swap_directory_after_check
from .remote_storage import KeyPrefixStorage

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")


def body(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def client() -> Client:
    return Client()


@pytest.mark.parametrize("name", ["sig-async", "sig-class", "sig-async-class"])
def test_views_accept_signed_and_refuse_unsigned(client: Client, name: str) -> None:
    path = reverse(name)
    assert client.get(sign_url(path, expires_in=60)).status_code == 200
    assert client.get(path).status_code == 403


def test_function_view_with_arguments(client: Client) -> None:
    url = sign_url(reverse("sig-plain", args=[5]), expires_in=60)
    assert client.get(url).content == b"plain 5"
    assert client.get(url.replace("/5/", "/6/")).status_code == 403


def test_tampered_query_is_403_and_logged_without_signature(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    url = sign_url(reverse("sig-plain", args=[1]) + "?x=1")
    signature = url.rsplit("=", 1)[1]
    with caplog.at_level(logging.WARNING, logger="blake2sign_web.signed_urls"):
        assert client.get(url.replace("x=1", "x=2")).status_code == 403
    assert "rejected signed URL" in caplog.text
    assert signature not in caplog.text


def test_expired_is_410_or_403(client: Client, settings: Any) -> None:
    url = sign_url(reverse("sig-plain", args=[1]), expires_in=1)
    expired = url.replace(url.split("expires=")[1].split("&")[0], "1000000000")
    assert client.get(expired).status_code == 403  # the expiry was changed: bad signature
    signer = get_signer()
    really_expired = signer.sign(reverse("sig-plain", args=[1]), expires_at=1_000_000_000)
    response = client.get(really_expired)
    assert response.status_code == 410
    assert b"expired" in response.content
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"EXPIRED_STATUS": 403}}
    assert client.get(get_signer().sign(reverse("sig-plain", args=[1]), expires_at=1_000_000_000)).status_code == 403


def test_rotation_with_secret_key_fallbacks(client: Client, settings: Any) -> None:
    url = sign_url(reverse("sig-plain", args=[1]))
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "a-brand-new-secret-key-0123456789-abcdefghijklmnop"
    assert client.get(url).status_code == 403
    settings.SECRET_KEY_FALLBACKS = [old]
    assert client.get(url).status_code == 200


def test_ignored_params_setting(client: Client, settings: Any) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"IGNORED_PARAMS": ("utm_*",)}}
    url = sign_url(reverse("sig-plain", args=[1]))
    assert client.get(url + "&utm_source=newsletter").status_code == 200
    assert client.get(url + "&other=1").status_code == 403


def test_value_binding(client: Client) -> None:
    url = sign_url(reverse("sig-bound"), bind="alice")
    assert client.get(url, headers={"X-User": "alice"}).status_code == 200
    assert client.get(url, headers={"X-User": "bob"}).status_code == 403
    assert client.get(url).status_code == 403


def test_host_binding(client: Client, settings: Any, rf: Any) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"BIND_HOST": True}}
    path = reverse("sig-plain", args=[1])
    with pytest.raises(ValueError, match="absolute URL"):
        sign_url(path)
    url = sign_url(path, request=rf.get("/", HTTP_HOST="localhost"))
    assert url.startswith(f"http://localhost/plain/1/?kid={get_signer().key_id}&signature=")
    assert client.get(url, HTTP_HOST="localhost").status_code == 200
    assert client.get(url, HTTP_HOST="127.0.0.1").status_code == 403


def test_signer_is_built_once_per_configuration(client: Client) -> None:
    url = sign_url(reverse("sig-plain", args=[1]))
    client.get(url)
    before = signer_cache_info().constructed
    for _ in range(5):
        assert client.get(url).status_code == 200
    assert signer_cache_info().constructed == before


@pytest.mark.parametrize(
    ("section", "match"),
    [({"NOPE": 1}, "unknown keys"), ({"HASHER": "md5"}, "HASHER"), ({"EXPIRED_STATUS": 500}, "EXPIRED_STATUS")],
)
def test_bad_settings_name_the_key(settings: Any, section: dict[str, Any], match: str) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": section}
    with pytest.raises(ImproperlyConfigured, match=match):
        sign_url("/a")


def test_template_tag(client: Client, rf: Any) -> None:
    rendered = Template("{% load blake2sign %}{% signed_url 'sig-plain' 7 expires_in=60 %}").render(Context())
    assert rendered.startswith("/plain/7/?expires=")
    assert f"&amp;kid={get_signer().key_id}&amp;signature=" in rendered
    assert client.get(rendered.replace("&amp;", "&")).content == b"plain 7"
    template = Template("{% load blake2sign %}{% signed_url 'sig-plain' n=3 absolute=True as link %}[{{ link }}]")
    rendered = template.render(Context({"request": rf.get("/", HTTP_HOST="localhost")}))
    assert rendered.startswith(f"[http://localhost/plain/3/?kid={get_signer().key_id}&amp;signature=")


# --- SignedFileView ---------------------------------------------------------------


def file_url(name: str, prefix: str = "/files/", **options: Any) -> str:
    return sign_url(prefix + quote(name), **options)


def test_download_whole_file(client: Client, file_storage: Path) -> None:
    response = client.get(file_url("report.bin", expires_in=60))
    assert response.status_code == 200
    assert body(response) == CONTENT
    assert response["Content-Length"] == str(len(CONTENT))
    assert response["Content-Disposition"] == 'attachment; filename="report.bin"'
    assert response["Accept-Ranges"] == "bytes"
    assert response["ETag"].startswith('"')
    assert response["Last-Modified"].endswith("GMT")
    assert response["X-Content-Type-Options"] == "nosniff"


def test_unsigned_or_tampered_download_is_refused(client: Client, file_storage: Path) -> None:
    assert client.get("/files/report.bin").status_code == 403
    url = file_url("report.bin")
    assert client.get(url.replace("report", "page")).status_code == 403


def test_non_ascii_name_and_subdirectory(client: Client, file_storage: Path) -> None:
    response = client.get(file_url("sub/caf\u00e9 menu.txt"))
    assert body(response) == b"menu"
    assert (
        response["Content-Disposition"]
        == "attachment; filename=\"caf_ menu.txt\"; filename*=UTF-8''caf%C3%A9%20menu.txt"
    )
    assert response["Content-Type"].startswith("text/plain")


def test_inline(client: Client, file_storage: Path) -> None:
    response = client.get(file_url("page.html", prefix="/inline/"))
    assert response["Content-Disposition"] == 'inline; filename="page.html"'


def test_missing_file_is_404(client: Client, file_storage: Path) -> None:
    assert client.get(file_url("nope.bin")).status_code == 404
    assert client.get(file_url("sub")).status_code == 404


@pytest.mark.parametrize(
    "name",
    ["../secret.txt", "escape.txt", "escape-dir/secret.txt", "sub/../../secret.txt", "%2e%2e/secret.txt", "a\x00b"],
)
def test_unsafe_names_refused_even_when_signed(client: Client, file_storage: Path, name: str) -> None:
    # Signed by the application (it may sign a user-chosen name), still refused.
    response = client.get(sign_url("/files/" + quote(name, safe="/%")))
    assert response.status_code == 400
    assert b"secret" not in body(response)


@pytest.mark.parametrize(
    ("header", "status", "content_range", "expected"),
    RANGE_CASES,
)
def test_range(
    client: Client, file_storage: Path, header: str, status: int, content_range: str | None, expected: bytes
) -> None:
    response = client.get(file_url("report.bin"), headers={"Range": header})
    assert response.status_code == status
    assert response.get("Content-Range") == content_range
    assert body(response) == expected
    assert response["Content-Length"] == str(len(expected))


@pytest.mark.parametrize(("name", "header"), UNSATISFIABLE_RANGES)
def test_unsatisfiable_range_is_416(client: Client, file_storage: Path, name: str, header: str) -> None:
    response = client.get(file_url(name), headers={"Range": header})
    assert response.status_code == 416
    assert response["Content-Range"].startswith("bytes */")


def test_if_range(client: Client, file_storage: Path) -> None:
    url = file_url("report.bin")
    etag = client.get(url)["ETag"]
    assert client.get(url, headers={"Range": "bytes=0-0", "If-Range": etag}).status_code == 206
    stale = client.get(url, headers={"Range": "bytes=0-0", "If-Range": '"stale"'})
    assert stale.status_code == 200
    assert body(stale) == CONTENT


def test_conditional_get(client: Client, file_storage: Path) -> None:
    url = file_url("report.bin")
    first = client.get(url)
    assert client.get(url, headers={"If-None-Match": first["ETag"]}).status_code == 304
    assert client.get(url, headers={"If-Modified-Since": first["Last-Modified"]}).status_code == 304
    assert client.get(url, headers={"If-Match": '"other"'}).status_code == 412


def test_head(client: Client, file_storage: Path) -> None:
    url = file_url("report.bin")
    response = client.head(url)
    assert response.status_code == 200
    assert response.content == b""
    assert response["Content-Length"] == str(len(CONTENT))
    assert response["ETag"] == client.get(url)["ETag"]
    ranged = client.head(url, headers={"Range": "bytes=0-9"})
    assert ranged.status_code == 206
    assert ranged["Content-Length"] == "10"
    assert client.post(url).status_code == 405


def test_x_accel_redirect(client: Client, file_storage: Path) -> None:
    response = client.get(file_url("sub/caf\u00e9 menu.txt", prefix="/accel/"))
    assert response.status_code == 200
    assert response["X-Accel-Redirect"] == "/protected/sub/caf%C3%A9%20menu.txt"
    assert response.content == b""
    assert "filename*=UTF-8''caf%C3%A9%20menu.txt" in response["Content-Disposition"]
    assert client.get(sign_url("/accel/escape.txt")).status_code == 400


def test_x_sendfile(client: Client, file_storage: Path) -> None:
    response = client.get(file_url("report.bin", prefix="/sendfile/"))
    assert response["X-Sendfile"] == str((file_storage / "report.bin").resolve())
    assert response.content == b""


def test_bound_download(client: Client, file_storage: Path) -> None:
    url = file_url("report.bin", prefix="/bound-files/", bind="alice")
    assert client.get(url, headers={"X-User": "alice"}).status_code == 200
    assert client.get(url, headers={"X-User": "eve"}).status_code == 403


# --- Storages without local files -------------------------------


@pytest.fixture
def other_storages(file_storage: Path, settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An InMemoryStorage located at the served root; key-prefix storages run from a directory with a .env."""
    settings.STORAGES = {
        **settings.STORAGES,
        "signed_memory": {
            "BACKEND": "django.core.files.storage.InMemoryStorage",
            "OPTIONS": {"location": file_storage},
        },
        "signed_remote": {"BACKEND": "tests.signed_urls.remote_storage.KeyPrefixStorage"},
        "signed_stream": {
            "BACKEND": "tests.signed_urls.remote_storage.KeyPrefixStorage",
            "OPTIONS": {"seekable": False},
        },
    }
    from django.core.files.base import ContentFile
    from django.core.files.storage import storages

    storages["signed_memory"].save("memory.bin", ContentFile(CONTENT))
    KeyPrefixStorage.objects.clear()
    KeyPrefixStorage.objects["object.bin"] = CONTENT
    working = tmp_path / "working-directory"
    working.mkdir()
    (working / ".env").write_text("SECRET_KEY=from-the-working-directory")
    monkeypatch.chdir(working)
    return working


def test_in_memory_storage_serves_its_own_files_not_the_disk(client: Client, other_storages: Path) -> None:
    response = client.get(file_url("memory.bin", prefix="/memory/"))
    assert response.status_code == 200
    assert body(response) == CONTENT
    assert response["Content-Length"] == str(len(CONTENT))
    assert response["ETag"].startswith('"')
    assert response["Last-Modified"].endswith("GMT")
    ranged = client.get(file_url("memory.bin", prefix="/memory/"), headers={"Range": "bytes=10-19"})
    assert ranged.status_code == 206
    assert body(ranged) == CONTENT[10:20]
    # report.bin is in the storage's location on disk, not in the storage.
    assert client.get(file_url("report.bin", prefix="/memory/")).status_code == 404


def test_storage_without_paths_never_serves_the_working_directory(client: Client, other_storages: Path) -> None:
    response = client.get(file_url(".env", prefix="/remote/"))
    assert response.status_code == 404
    assert b"SECRET_KEY" not in body(response)
    served = client.get(file_url("object.bin", prefix="/remote/"), headers={"Range": "bytes=-5"})
    assert served.status_code == 206
    assert body(served) == CONTENT[-5:]
    assert served["Content-Range"] == "bytes 10235-10239/10240"
    assert served["Last-Modified"] == "Fri, 02 Jan 2026 03:04:05 GMT"


def test_unseekable_storage_file_is_sent_whole(client: Client, other_storages: Path) -> None:
    url = file_url("object.bin", prefix="/stream/")
    response = client.get(url, headers={"Range": "bytes=0-9"})
    assert response.status_code == 200
    assert body(response) == CONTENT
    assert response["Accept-Ranges"] == "none"
    assert response["Content-Length"] == str(len(CONTENT))
    assert client.head(url, headers={"Range": "bytes=0-9"}).status_code == 200


# --- Names the OS refuses, and the tree changing under the view (items 7, 8) ---------


def test_name_too_long_or_symlink_loop_is_404(client: Client, file_storage: Path) -> None:
    (file_storage / "loop").symlink_to("loop")
    (file_storage / "ping").symlink_to("pong")
    (file_storage / "pong").symlink_to("ping")
    for name in ("a" * 300 + ".txt", "sub/" + "b" * 300, "loop", "loop/x", "ping", "pong/x"):
        assert client.get(file_url(name)).status_code == 404, name


def test_directory_swapped_for_a_link_after_the_check_is_not_followed(
    client: Client, file_storage: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "caf\u00e9 menu.txt").write_text("secret")
    swap_directory_after_check(monkeypatch, file_storage / "sub", outside)
    response = client.get(file_url("via/caf\u00e9 menu.txt"))
    assert response.status_code == 404
    assert b"secret" not in body(response)


# --- Logs (item 6) -----------------------------------------------------------------

FORGED = "a%0D%0A2026-01-01 INFO forged%1B[31m%0B%E2%80%A8%C2%85z"
# Django's <path:...> never matches a LF (its regex has no DOTALL); a catch-all re_path does.


def assert_logs_are_escaped(records: list[logging.LogRecord]) -> None:
    messages = [record.getMessage() for record in records]
    assert any("rejected signed URL" in message or "expired" in message for message in messages)
    for message in messages:
        assert not any(char in message for char in "\r\n\x1b\x0b\u2028\x85"), message


def test_refused_paths_are_logged_escaped(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert client.get(f"/anything/{FORGED}?signature=" + "A" * 43).status_code == 403
        assert client.get(get_signer().sign(f"/anything/{FORGED}", expires_at=1_000_000_000)).status_code == 410
        assert client.get(f"/files/{FORGED.replace('%0A', '')}").status_code == 403
        assert client.get("/files/" + "x" * 5000).status_code == 403
    assert_logs_are_escaped(caplog.records)
    assert all(len(record.getMessage()) < 600 for record in caplog.records if record.name.startswith("blake2sign"))


# --- The query as the view reads it (item 9) ---------------------------------------


def test_raw_utf8_query_is_verified_as_the_view_reads_it(client: Client) -> None:
    # Under WSGI, QUERY_STRING is the raw bytes decoded as latin-1; request.GET decodes them as UTF-8.
    signed_for_mojibake = sign_url("/echo/?q=" + quote("\u00c3\u00a9"))
    query = signed_for_mojibake.split("?", 1)[1].replace(quote("\u00c3\u00a9"), "\u00c3\u00a9")
    assert client.get("/echo/", QUERY_STRING=query).status_code == 403
    signed_for_text = sign_url("/echo/?q=" + quote("\u00e9"))
    raw_query = signed_for_text.split("?", 1)[1].replace(quote("\u00e9"), "\u00e9".encode().decode("latin-1"))
    response = client.get("/echo/", QUERY_STRING=raw_query)
    assert response.status_code == 200
    assert response.content.decode() == "\u00e9"
    assert client.get(signed_for_text).content.decode() == "\u00e9"


# --- SECRET_KEY_FALLBACKS (item 1, the adapter's part) --------------------------------


def test_string_secret_key_fallbacks_is_refused_not_split(settings: Any) -> None:
    settings.SECRET_KEY_FALLBACKS = "an-old-secret-key-0123456789-abcdefghijklmnop"
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY"):
        sign_url("/a")


# --- Front-server headers with non-ASCII names (item 13) ----------------------------


@pytest.mark.parametrize("name", ["sub/caf\u00e9 menu.txt", "line\u2028break \u00fc.txt", "100%25.txt"])
def test_offload_headers_are_percent_encoded(client: Client, file_storage: Path, name: str) -> None:
    (file_storage / name).write_text("x")
    real = str((file_storage / name).resolve())
    sendfile = client.get(file_url(name, prefix="/sendfile/"))
    assert sendfile.status_code == 200
    assert sendfile["X-Sendfile"] == quote(real)
    accel = client.get(file_url(name, prefix="/accel/"))
    assert accel["X-Accel-Redirect"] == "/protected/" + quote(name)
    for value in (sendfile["X-Sendfile"], accel["X-Accel-Redirect"]):
        assert value.isascii()
        assert value.isprintable()
        assert "=?" not in value
