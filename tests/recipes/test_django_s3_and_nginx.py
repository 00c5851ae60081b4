"""docs/recipes/django-s3-and-nginx.md, run for real: its S3 views on moto's S3 server, its nginx config in nginx.

- S3: moto's ThreadedMotoServer is the S3 HTTP API on 127.0.0.1; django-storages and boto3 talk to it as to
  AWS (only the endpoint and dummy credentials are added to the page's STORAGES).
- nginx: the page's ``server`` block, with only its port, path and upstream replaced, runs in a real nginx
  (own prefix, own free port, not a system service) in front of gunicorn serving the page's URLs.

Outside CI a missing moto or nginx skips these tests, saying what to install; under CI=true it fails them.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from blake2sign_web.django import sign_url
from tests.recipes.pages import code_block, page_module
from tests.servers import free_port, running_server

PAGE = page_module("django-s3-and-nginx.md")
BUCKET = PAGE.STORAGES["private"]["OPTIONS"]["bucket_name"]
INVOICE = "2026/invoice 11.pdf"
INVOICE_BYTES = os.urandom(200_000)
LOCAL_FILE = "reports/Q3 résumé.pdf"
LOCAL_BYTES = os.urandom(300_000)
BIN = Path(sys.executable).parent
#: A request in moto's (werkzeug's) log: '"GET /bucket/key HTTP/1.1" 200 -' -> method, status.
S3_REQUEST = re.compile(r'"(GET|HEAD) /\S+ HTTP/[\d.]+" (\d{3})')
#: werkzeug colours some statuses (206 among them) in its log lines.
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def required(what: str, hint: str) -> None:
    """Fail under CI (it must run these tests), skip elsewhere, naming what is missing."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test, which needs {what}: {hint}", pytrace=False)
    pytest.skip(f"needs {what}, not installed: {hint}")


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a free 127.0.0.1 port, with the page's bucket holding one invoice."""
    try:
        import boto3  # type: ignore[import-untyped]  # noqa: F401
        import storages  # type: ignore[import-untyped]  # noqa: F401  # django-storages, named by the settings
        from moto.server import ThreadedMotoServer  # noqa: F401
    except ImportError:
        required(
            "moto's S3 server, boto3 and django-storages",
            'pip install "moto[s3]" flask flask-cors "django-storages[s3]"',
        )
    with moto_bucket(INVOICE, INVOICE_BYTES, ContentType="application/pdf") as endpoint:
        yield endpoint


@contextmanager
def moto_bucket(key: str, body: bytes, **put: Any) -> Iterator[str]:
    """moto's S3 server on a free 127.0.0.1 port, BUCKET holding ``key`` (``put``: more put_object arguments):
    its endpoint. The caller has checked that moto and boto3 import."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **dummy_credentials())
        client.create_bucket(Bucket=BUCKET)
        client.put_object(Bucket=BUCKET, Key=key, Body=body, **put)
        yield endpoint
    finally:
        server.stop()


def dummy_credentials() -> dict[str, str]:
    return {"aws_access_key_id": "recipe-test", "aws_secret_access_key": "recipe-test-secret"}


@pytest.fixture
def s3_client(s3_endpoint: str, settings: Any) -> Client:
    storages = copy.deepcopy(PAGE.STORAGES)
    storages["private"]["OPTIONS"].update(
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        access_key=dummy_credentials()["aws_access_key_id"],
        secret_key=dummy_credentials()["aws_secret_access_key"],
    )
    settings.STORAGES = storages
    settings.ROOT_URLCONF = "tests.recipes.site_urls"
    return Client()


def test_s3_file_streamed_through_the_signed_view(s3_client: Client) -> None:
    link = sign_url(reverse("invoice", args=[INVOICE]), expires_in=60)
    response = s3_client.get(link)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == INVOICE_BYTES  # type: ignore[attr-defined]
    assert response["Content-Length"] == str(len(INVOICE_BYTES))
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="invoice 11.pdf"'
    assert response["Accept-Ranges"] == "bytes"
    etag = response["ETag"]

    part = s3_client.get(link, HTTP_RANGE="bytes=1000-1999")
    assert part.status_code == 206
    assert b"".join(part.streaming_content) == INVOICE_BYTES[1000:2000]  # type: ignore[attr-defined]
    assert part["Content-Range"] == f"bytes 1000-1999/{len(INVOICE_BYTES)}"
    assert s3_client.get(link, HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_s3_range_is_one_ranged_get_of_exactly_its_bytes(s3_client: Client, caplog: pytest.LogCaptureFixture) -> None:
    """From moto's request log: the HEAD of open(), then one GET answered 206: the range, not the object."""
    link = sign_url(reverse("invoice", args=[INVOICE]), expires_in=60)
    caplog.set_level(logging.INFO, logger="werkzeug")  # moto's server logs each request it answers
    response = s3_client.get(link, HTTP_RANGE="bytes=0-9")
    assert response.status_code == 206
    assert b"".join(response.streaming_content) == INVOICE_BYTES[:10]  # type: ignore[attr-defined]
    assert s3_requests(caplog, 2) == [("HEAD", "200"), ("GET", "206")]
    caplog.clear()
    whole = s3_client.get(link)
    assert b"".join(whole.streaming_content) == INVOICE_BYTES  # type: ignore[attr-defined]
    assert s3_requests(caplog, 2) == [("HEAD", "200"), ("GET", "200")]  # no size() or get_modified_time() HEADs


def s3_requests(caplog: pytest.LogCaptureFixture, expected: int = 0) -> list[tuple[str, str]]:
    """The S3 requests moto logged, waiting up to 5 s for ``expected`` of them (its thread logs a request once
    it has sent the body, which may be after the client read it)."""
    deadline = time.monotonic() + 5
    while True:
        found = [
            match.groups()
            for record in caplog.records
            if (match := S3_REQUEST.search(ANSI_COLOUR.sub("", record.getMessage()))) is not None
        ]
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_s3_head_and_304_are_answered_from_metadata(s3_client: Client, caplog: pytest.LogCaptureFixture) -> None:
    """HEAD and a 304 never download the object: django-storages' S3 file downloads it to tell whether it seeks."""
    link = sign_url(reverse("invoice", args=[INVOICE]), expires_in=60)
    etag = s3_client.head(link)["ETag"]
    caplog.set_level(logging.INFO, logger="werkzeug")
    head = s3_client.head(link)
    assert (head.status_code, head["Content-Length"], head.content) == (200, str(len(INVOICE_BYTES)), b"")
    assert s3_client.get(link, HTTP_IF_NONE_MATCH=etag).status_code == 304
    requests = s3_requests(caplog)
    assert len(requests) >= 2
    assert set(requests) == {("HEAD", "200")}  # no GET: the object was not downloaded


def test_s3_streamed_view_refuses_before_touching_s3(s3_client: Client) -> None:
    assert s3_client.get(reverse("invoice", args=[INVOICE])).status_code == 403
    assert s3_client.get(sign_url(reverse("invoice", args=["2026/missing.pdf"]), expires_in=60)).status_code == 404


def test_s3_large_export_redirects_to_a_presigned_url_that_works(s3_client: Client, s3_endpoint: str) -> None:
    response = s3_client.get(sign_url(reverse("large-export", args=[INVOICE]), expires_in=60))
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(f"{s3_endpoint}/{BUCKET}/2026/invoice%2011.pdf?")
    assert "Expires=" in location or "X-Amz-Expires=60" in location
    assert response["Cache-Control"] == "no-store"
    assert response["Referrer-Policy"] == "no-referrer"

    from_s3 = httpx.get(location)
    assert from_s3.status_code == 200
    assert from_s3.content == INVOICE_BYTES
    assert from_s3.headers["content-disposition"] == 'attachment; filename="invoice 11.pdf"'
    ranged = httpx.get(location, headers={"Range": "bytes=0-99"})
    assert ranged.status_code == 206
    assert ranged.content == INVOICE_BYTES[:100]


def test_s3_large_export_passes_the_signed_name_on_to_s3(s3_client: Client) -> None:
    link = sign_url(reverse("large-export", args=[INVOICE]), expires_in=60, filename="Facture novembre été.pdf")
    response = s3_client.get(link)
    assert response.status_code == 302
    from_s3 = httpx.get(response["Location"])
    assert from_s3.content == INVOICE_BYTES
    expected = (
        "attachment; filename=\"Facture novembre _t_.pdf\"; filename*=UTF-8''Facture%20novembre%20%C3%A9t%C3%A9.pdf"
    )
    assert from_s3.headers["content-disposition"] == expected
    inline = sign_url(reverse("large-export", args=[INVOICE]), expires_in=60, filename="a.pdf", disposition="inline")
    assert httpx.get(s3_client.get(inline)["Location"]).headers["content-disposition"] == 'inline; filename="a.pdf"'
    # Changed or added by hand: refused before S3 is asked.
    assert s3_client.get(link.replace("Facture", "Avoir")).status_code == 403
    assert s3_client.get(link.replace("disposition=attachment", "disposition=inline")).status_code == 403
    plain = sign_url(reverse("large-export", args=[INVOICE]), expires_in=60)
    assert (
        s3_client.get(plain.replace("&signature=", "&filename=x.html&disposition=inline&signature=")).status_code == 403
    )


def test_s3_streamed_view_names_the_download_as_signed(s3_client: Client) -> None:
    link = sign_url(reverse("invoice", args=[INVOICE]), expires_in=60, filename="Invoice 11.pdf", disposition="inline")
    response = s3_client.get(link)
    assert response["Content-Disposition"] == 'inline; filename="Invoice 11.pdf"'
    assert b"".join(response.streaming_content) == INVOICE_BYTES  # type: ignore[attr-defined]


def test_s3_large_export_refuses_bad_links_and_missing_files(s3_client: Client) -> None:
    assert s3_client.get(reverse("large-export", args=[INVOICE])).status_code == 403
    missing = sign_url(reverse("large-export", args=["2026/missing.pdf"]), expires_in=60)
    assert s3_client.get(missing).status_code == 404


def test_sendfile_variant_names_the_file_for_apache(settings: Any, tmp_path: Path) -> None:
    settings.STORAGES = {**PAGE.STORAGES, "private-media": {**PAGE.STORAGES["private-media"]}}
    settings.STORAGES["private-media"]["OPTIONS"] = {"location": tmp_path}
    settings.ROOT_URLCONF = "tests.recipes.site_urls"
    (tmp_path / LOCAL_FILE).parent.mkdir()
    (tmp_path / LOCAL_FILE).write_bytes(LOCAL_BYTES)
    url = sign_url("/apache-files/" + LOCAL_FILE.replace(" ", "%20").replace("é", "%C3%A9"), expires_in=60)
    response = Client().get(url)
    assert response.status_code == 200
    assert response["X-Sendfile"] == str(tmp_path).replace(" ", "%20") + "/reports/Q3%20r%C3%A9sum%C3%A9.pdf"
    assert response.content == b""
    assert code_block("django-s3-and-nginx.md", "apache").count("XSendFilePath /srv/app/private-media") == 1


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        required("nginx", "apt-get install nginx-light")
    return found  # type: ignore[return-value]


def nginx_config(prefix: Path, port: int, media_root: Path, upstream_port: int) -> str:
    """The page's server block, on our port, media root and gunicorn, inside a self-contained nginx.conf."""
    server = code_block("django-s3-and-nginx.md", "nginx")
    for placeholder, value in {
        "listen 80;": f"listen 127.0.0.1:{port};",
        "alias /srv/app/private-media/;": f"alias {media_root}/;",
        "proxy_pass http://127.0.0.1:8000;": f"proxy_pass http://127.0.0.1:{upstream_port};",
    }.items():
        assert server.count(placeholder) == 1, f"the page's nginx block no longer has {placeholder!r}"
        server = server.replace(placeholder, value)
    temp_paths = "".join(
        f"    {kind}_temp_path {prefix}/{kind}_temp;\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers must read the test's private tmp dir
    return (
        f"{user}worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log warn;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n    access_log off;\n{temp_paths}{server}}}\n"
    )


@pytest.fixture(scope="module")
def nginx_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(nginx URL, gunicorn URL): gunicorn runs the page's URLs, nginx the page's config in front of it."""
    nginx = nginx_binary()
    media_root = tmp_path_factory.mktemp("private-media")
    (media_root / LOCAL_FILE).parent.mkdir()
    (media_root / LOCAL_FILE).write_bytes(LOCAL_BYTES)
    gunicorn_port, nginx_port = free_port(), free_port()
    gunicorn = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{gunicorn_port}", "--workers", "1"]
    gunicorn.append("django.core.wsgi:get_wsgi_application()")
    prefix = tmp_path_factory.mktemp("nginx")
    (prefix / "nginx.conf").write_text(nginx_config(prefix, nginx_port, media_root, gunicorn_port))
    nginx_command = [nginx, "-p", f"{prefix}/", "-e", f"{prefix}/error.log", "-c", f"{prefix}/nginx.conf"]
    with (
        running_server(
            gunicorn,
            gunicorn_port,
            DJANGO_SETTINGS_MODULE="tests.recipes.site_settings",
            PRIVATE_MEDIA_ROOT=str(media_root),
        ) as upstream,
        running_server([*nginx_command, "-g", "daemon off;"], nginx_port) as front,
    ):
        yield front, upstream


@pytest.mark.server
def test_nginx_sends_the_file_django_allowed(nginx_site: tuple[str, str], settings: Any) -> None:
    front, upstream = nginx_site
    settings.ROOT_URLCONF = "tests.recipes.site_urls"
    link = sign_url(reverse("download", args=[LOCAL_FILE]), expires_in=60)

    # gunicorn alone answers only headers: the bytes come from nginx.
    from_django = httpx.get(upstream + link)
    assert from_django.status_code == 200
    assert from_django.headers["x-accel-redirect"] == "/protected/reports/Q3%20r%C3%A9sum%C3%A9.pdf"
    assert from_django.content == b""

    through_nginx = httpx.get(front + link)
    assert through_nginx.status_code == 200
    assert through_nginx.content == LOCAL_BYTES
    assert "x-accel-redirect" not in through_nginx.headers
    assert through_nginx.headers["content-type"] == "application/pdf"
    assert through_nginx.headers["content-disposition"] == from_django.headers["content-disposition"]
    # nginx keeps the view's Content-Type and Content-Disposition, but sends its own ETag (and Last-Modified)
    # for the file; a client revalidating with it gets nginx's 304.
    assert through_nginx.headers["last-modified"] == from_django.headers["last-modified"]
    assert through_nginx.headers["etag"] != from_django.headers["etag"]
    revalidated = httpx.get(front + link, headers={"If-None-Match": through_nginx.headers["etag"]})
    assert revalidated.status_code == 304

    part = httpx.get(front + link, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206
    assert part.content == LOCAL_BYTES[100:200]


@pytest.mark.server
def test_nginx_passes_on_djangos_refusals_and_hides_the_internal_location(
    nginx_site: tuple[str, str], settings: Any
) -> None:
    front, _ = nginx_site
    settings.ROOT_URLCONF = "tests.recipes.site_urls"
    unsigned = reverse("download", args=[LOCAL_FILE])
    assert httpx.get(front + unsigned).status_code == 403
    tampered = sign_url(reverse("download", args=[LOCAL_FILE]), expires_in=60).replace("Q3", "Q4")
    assert httpx.get(front + tampered).status_code == 403
    missing = sign_url(reverse("download", args=["reports/none.pdf"]), expires_in=60)
    assert httpx.get(front + missing).status_code == 404
    assert httpx.get(front + "/protected/reports/Q3%20r%C3%A9sum%C3%A9.pdf").status_code == 404
    assert urlsplit(front).hostname == "127.0.0.1"
