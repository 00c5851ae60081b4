"""One real gunicorn (Django, WSGI) and one real uvicorn (Starlette, ASGI) on 127.0.0.1, read by httpx."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from blake2sign_web import URLSigner

from ..servers import free_port, running_server
from .conftest import CONTENT
from .starlette_app import make_signer

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.server


def serve(command: list[str], port: int, served_root: Path, **env: str) -> Iterator[str]:
    with running_server(command, port, BLAKE2SIGN_SERVED_ROOT=str(served_root), **env) as url:
        yield url


@pytest.fixture
def gunicorn(served_root: Path) -> Iterator[str]:
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "tests.signed_urls.wsgi"]
    yield from serve(command, port, served_root, DJANGO_SETTINGS_MODULE="tests.signed_urls.server_settings")


@pytest.fixture
def uvicorn(served_root: Path) -> Iterator[str]:
    port = free_port()
    command = [
        str(BIN / "uvicorn"), "--factory", "tests.signed_urls.starlette_app:app_from_env",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    yield from serve(command, port, served_root)


def django_signer() -> URLSigner:
    from blake2sign_web.django.signed_urls import get_signer

    return get_signer()


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
    expired = django_signer().sign("/files/report.bin?expires=1000000000")
    assert httpx.get(gunicorn + expired).status_code == 410


def test_uvicorn_serves_starlette_app(uvicorn: str) -> None:
    signer = make_signer()
    check_downloads(uvicorn, signer)
    assert httpx.get(uvicorn + signer.sign("/files/report.bin?expires=1000000000")).status_code == 410
    assert httpx.get(uvicorn + signer.sign("/hello/" + quote("%41"))).text == "hello %41"
