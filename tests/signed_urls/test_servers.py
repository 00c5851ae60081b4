"""One real gunicorn (Django, WSGI) and one real uvicorn (Starlette, ASGI) on 127.0.0.1, read by httpx."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from blake2sign_web import URLSigner

from .conftest import CONTENT
from .starlette_app import make_signer

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(process: subprocess.Popen[bytes], port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"server exited with {process.returncode}: {process.stderr.read().decode() if process.stderr else ''}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start listening in time")


def serve(command: list[str], port: int, served_root: Path, **env: str) -> Iterator[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "BLAKE2SIGN_SERVED_ROOT": str(served_root), **env}
    process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until_listening(process, port)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


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
