"""One real gunicorn (Django, WSGI) and one real uvicorn (Starlette, ASGI) on 127.0.0.1, read by httpx."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from blake2sign_web import URLSigner

from ..servers import free_port, running_server
from .conftest import CONTENT, django_signer
from .starlette_app import make_signer

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.server


def check_downloads(base: str, signer: URLSigner) -> None:
    with httpx.Client(base_url=base) as client:
        url = signer.sign("/files/report.bin", expires_in=60)
        whole = client.get(url)
        assert whole.status_code == 200
        assert whole.content == CONTENT
        assert whole.headers["content-length"] == str(len(CONTENT))
        assert whole.headers["content-disposition"] == 'attachment; filename="report.bin"'
        ranged = client.get(url, headers={"Range": "bytes=-100"})
        assert ranged.status_code == 206
        assert ranged.headers["content-range"] == "bytes 10140-10239/10240"
        assert ranged.content == CONTENT[-100:]
        assert client.get(url, headers={"Range": "bytes=99999-"}).status_code == 416
        head = client.head(url)
        assert head.status_code == 200
        assert head.headers["content-length"] == str(len(CONTENT))
        assert head.content == b""
        assert client.get(url.replace("report", "other")).status_code == 403
        assert client.get("/files/report.bin").status_code == 403
        assert client.get(signer.sign("/files/escape.txt")).status_code == 400
        unicode_url = signer.sign("/files/" + quote("sub/caf\u00e9 menu.txt"))
        assert client.get(unicode_url).content == b"menu"


def test_gunicorn_serves_django_view(gunicorn: str) -> None:
    check_downloads(gunicorn, django_signer())
    expired = django_signer().sign("/files/report.bin", expires_at=1_000_000_000)
    assert httpx.get(gunicorn + expired).status_code == 410


def test_uvicorn_serves_starlette_app(uvicorn: str) -> None:
    signer = make_signer()
    check_downloads(uvicorn, signer)
    assert httpx.get(uvicorn + signer.sign("/files/report.bin", expires_at=1_000_000_000)).status_code == 410
    assert httpx.get(uvicorn + signer.sign("/hello/" + quote("%41"))).text == "hello %41"


def raw_get(base: str, target: bytes) -> tuple[int, bytes]:
    """GET with the request target sent byte for byte (httpx would percent-encode non-ASCII)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\nConnection: close\r\n\r\n")
        response = b""
        while chunk := connection.recv(65536):
            response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def raw_query_links(signer: URLSigner, path: str) -> tuple[bytes, bytes]:
    """The link signed for q=Ã© and the one signed for q=é, each sent with q as the raw UTF-8 bytes of é."""
    raw_e = "\u00e9".encode()
    mojibake = signer.sign(path + "?q=" + quote("\u00c3\u00a9")).replace(quote("\u00c3\u00a9"), "@")
    text = signer.sign(path + "?q=" + quote("\u00e9")).replace(quote("\u00e9"), "@")
    return mojibake.encode().replace(b"@", raw_e), text.encode().replace(b"@", raw_e)


@pytest.fixture
def wsgiref(served_root: Path) -> Iterator[str]:
    """Django under the standard library's WSGI server (as runserver uses it), which passes raw bytes on."""
    port = free_port()
    serve_forever = (
        "from wsgiref.simple_server import make_server; from tests.signed_urls.wsgi import application; "
        f"make_server('127.0.0.1', {port}, application).serve_forever()"
    )
    command = [sys.executable, "-c", serve_forever]
    env = {"DJANGO_SETTINGS_MODULE": "tests.signed_urls.server_settings", "BLAKE2SIGN_SERVED_ROOT": str(served_root)}
    with running_server(command, port, **env) as base:
        yield base


def test_wsgi_verifies_the_query_the_view_reads(wsgiref: str, gunicorn: str) -> None:
    # The WSGI server hands the raw bytes as latin-1; request.GET reads them as UTF-8, so é is what counts.
    signed_for_mojibake, signed_for_text = raw_query_links(django_signer(), "/echo/")
    assert raw_get(wsgiref, signed_for_mojibake)[0] == 403
    assert raw_get(wsgiref, signed_for_text) == (200, "\u00e9".encode())
    # gunicorn refuses such a request line outright.
    assert raw_get(gunicorn, signed_for_text)[0] == 400


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_names_the_os_refuses_are_404_on_real_servers(server: str, served_root: Path, request: Any) -> None:
    (served_root / "loop").symlink_to("loop")
    base = request.getfixturevalue(server)
    signer = django_signer() if server == "gunicorn" else make_signer()
    for name in ("a" * 300, "loop", "loop/x"):
        assert httpx.get(base + signer.sign("/files/" + name)).status_code == 404


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_a_link_before_its_start_is_refused_on_real_servers(server: str, request: Any) -> None:
    """``starts=``: 403 saying when before it (Starlette's body; Django's 403 page), the file from then on."""
    base = request.getfixturevalue(server)
    signer = django_signer() if server == "gunicorn" else make_signer()
    starts = int(time.time()) + 3600
    early = httpx.get(base + signer.sign("/files/report.bin", expires_in=7200, starts=starts))
    assert early.status_code == 403
    assert "retry-after" not in early.headers
    if server == "uvicorn":
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(starts))
        assert early.text == f"This link is not valid yet; it becomes valid at {when} UTC."
    started = httpx.get(base + signer.sign("/files/report.bin", expires_in=7200, starts=int(time.time()) - 5))
    assert started.status_code == 200
    assert started.content == CONTENT
