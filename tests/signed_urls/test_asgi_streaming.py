"""SignedFileView under ASGI streams: Django's handler sends chunks as they are read, never the whole file at once.

Django's ASGI handler gathers a synchronous iterator in memory before sending it ("StreamingHttpResponse must
consume synchronous iterators"): a FileResponse of a 300 MB file cost a uvicorn worker 300 MB.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from blake2sign_web import URLSigner

from ..servers import free_port, logged_server
from .conftest import CONTENT

BIN = Path(sys.executable).parent
MIB = 1024 * 1024
#: Sparse on disk, so the test costs no disk space; the markers make every position count.
BIG_SIZE = 320 * MIB
MARKERS = {0: b"first", 100 * MIB + 7: b"middle", BIG_SIZE - 4: b"last"}


def signer() -> URLSigner:
    from blake2sign_web.django.signed_urls import get_signer

    return get_signer()


@pytest.fixture(autouse=True)
def no_database_on_request_started() -> Iterator[None]:
    """As Django's own ASGI tests: the handler's close_old_connections would open a test's database."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


async def asgi_get(url: str, headers: list[tuple[bytes, bytes]] | None = None, method: str = "GET") -> dict[str, Any]:
    """One request through Django's own ASGI handler, with its messages as sent."""
    path, _, query = url.partition("?")
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
        "headers": [(b"host", b"testserver"), *(headers or [])], "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }  # fmt: skip
    sent: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await ASGIHandler()(scope, receive, send)
    start = sent[0]
    return {
        "status": start["status"],
        "headers": {k.decode().lower(): v.decode() for k, v in start["headers"]},
        "bodies": [m["body"] for m in sent[1:] if m.get("body")],
    }


@pytest.mark.urls("tests.signed_urls.django_urls")
@pytest.mark.parametrize(
    ("range_header", "status", "body"),
    [(None, 200, CONTENT), ("bytes=100-", 206, CONTENT[100:]), ("bytes=-5", 206, CONTENT[-5:])],
)
def test_asgi_handler_gets_an_asynchronous_stream(
    file_storage: Path, range_header: str | None, status: int, body: bytes
) -> None:
    url = signer().sign("/files/report.bin", expires_in=60)
    headers = [] if range_header is None else [(b"range", range_header.encode())]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns when it must gather a synchronous iterator
        response = async_to_sync(asgi_get)(url, headers)
    assert response["status"] == status
    assert b"".join(response["bodies"]) == body
    assert response["headers"]["content-length"] == str(len(body))


@pytest.mark.urls("tests.signed_urls.django_urls")
def test_asgi_head_sends_no_body(file_storage: Path) -> None:
    response = async_to_sync(asgi_get)(signer().sign("/files/report.bin", expires_in=60), method="HEAD")
    assert response["status"] == 200
    assert response["headers"]["content-length"] == str(len(CONTENT))
    assert response["bodies"] == []


# A real uvicorn serving Django's ASGI application ----------------------------------------------------------------


@pytest.fixture(scope="module")
def big_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    with open(root / "big.bin", "wb") as out:
        out.truncate(BIG_SIZE)
        for offset, marker in MARKERS.items():
            out.seek(offset)
            out.write(marker)
    return root


def digest_of(path: Path, start: int = 0) -> str:
    hashed = hashlib.sha256()
    with open(path, "rb") as source:
        source.seek(start)
        while chunk := source.read(4 * MIB):
            hashed.update(chunk)
    return hashed.hexdigest()


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes: what a download costs shows even after it ends."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


@pytest.fixture(scope="module")
def django_uvicorn(big_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    port = free_port()
    command = [
        str(BIN / "uvicorn"), "tests.signed_urls.asgi:application",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    log = tmp_path_factory.mktemp("uvicorn") / "server.log"
    env = {"DJANGO_SETTINGS_MODULE": "tests.signed_urls.server_settings", "BLAKE2SIGN_SERVED_ROOT": str(big_root)}
    with logged_server(command, port, log, **env) as (url, process):
        yield url, process.pid


def download(client: httpx.Client, url: str, **headers: str) -> tuple[int, dict[str, str], int, str]:
    hashed = hashlib.sha256()
    received = 0
    with client.stream("GET", url, headers=headers) as response:
        for chunk in response.iter_bytes():
            hashed.update(chunk)
            received += len(chunk)
    return response.status_code, dict(response.headers), received, hashed.hexdigest()


@pytest.mark.server
def test_uvicorn_streams_a_large_file_in_flat_memory(django_uvicorn: tuple[str, int], big_root: Path) -> None:
    base, pid = django_uvicorn
    url = signer().sign("/files/big.bin", expires_in=600)
    with httpx.Client(base_url=base, timeout=60) as client:
        assert client.head(url).headers["content-length"] == str(BIG_SIZE)  # warm up: imports, first request
        before = peak_rss(pid)
        status, headers, received, digest = download(client, url)
        assert (status, received, headers["content-length"]) == (200, BIG_SIZE, str(BIG_SIZE))
        assert digest == digest_of(big_root / "big.bin")
        start = BIG_SIZE // 2
        status, headers, received, digest = download(client, url, Range=f"bytes={start}-")
        assert (status, received, headers["content-range"]) == (
            206,
            BIG_SIZE - start,
            f"bytes {start}-{BIG_SIZE - 1}/{BIG_SIZE}",
        )
        assert digest == digest_of(big_root / "big.bin", start)
        growth = peak_rss(pid) - before
    # Gathered in memory, the whole file alone would be 320 MiB.
    assert growth < 32 * MIB, f"peak RSS grew by {growth / MIB:.0f} MiB serving a {BIG_SIZE // MIB} MiB file"
