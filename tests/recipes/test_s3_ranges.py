"""Range requests on S3 (django-storages) through a real gunicorn and moto's S3 server: memory stays flat.

A 64 MiB object; a 1 MiB range. SignedFileView asks S3 for exactly that range (one GetObject with Range) and
streams it, so the worker's peak RSS grows by well under 8 MiB. The same request through the file object, as
SignedFileView read it before (``/whole-object/``), downloads the whole object into the worker's memory
(django-storages' default ``max_memory_size`` of 0). A storage whose files offer no ranged read is redirected to
its presigned URL, which S3 answers with the range.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from blake2sign_web import URLSigner
from tests.servers import free_port, logged_server

from .test_django_s3_and_nginx import BUCKET, moto_bucket, required

BIN = Path(sys.executable).parent
MIB = 1024 * 1024
SIZE = 64 * MIB
NAME = "exports/big export.bin"
RANGE_START = 40 * MIB + 123
RANGE_LENGTH = 1 * MIB
WARM_UP_PATH = "/invoices/" + NAME.replace(" ", "%20")
pytestmark = pytest.mark.server


def content() -> bytes:
    """64 MiB in which every 16-byte block names its offset, so any range's bytes can be checked."""
    return b"".join(f"{offset:015d}\n".encode() for offset in range(0, SIZE, 16))


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, bytes]]:
    try:
        import boto3  # type: ignore[import-untyped]  # noqa: F401
        from moto.server import ThreadedMotoServer  # noqa: F401
    except ImportError:
        required("moto's S3 server and boto3", 'pip install "moto[s3]" flask flask-cors "django-storages[s3]"')
    data = content()
    with moto_bucket(NAME, data) as endpoint:
        yield endpoint, data


@pytest.fixture(scope="module")
def gunicorn(s3: tuple[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """(base URL, the worker's pid): one sync worker, so every request is measured in the same process."""
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "--timeout", "120"]
    command.append("django.core.wsgi:get_wsgi_application()")
    log = tmp_path_factory.mktemp("gunicorn") / "server.log"
    env = {"DJANGO_SETTINGS_MODULE": "tests.recipes.s3_site_settings", "BLAKE2SIGN_S3_ENDPOINT": s3[0]}
    with logged_server(command, port, log, **env) as (base, process):
        # The master listens first; its worker may still be starting: wait until it answers, then find it.
        httpx.get(base + "/", timeout=60)
        (worker,) = psutil.Process(process.pid).children()
        yield base, worker.pid


@pytest.fixture(scope="module")
def django_uvicorn(s3: tuple[str, bytes], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """The same views under ASGI: Django's handler, the body read chunk by chunk in a worker thread."""
    port = free_port()
    command = [str(BIN / "uvicorn"), "tests.signed_urls.asgi:application", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--log-level", "warning"]
    log = tmp_path_factory.mktemp("uvicorn") / "server.log"
    env = {"DJANGO_SETTINGS_MODULE": "tests.recipes.s3_site_settings", "BLAKE2SIGN_S3_ENDPOINT": s3[0]}
    with logged_server(command, port, log, **env) as (base, process):
        yield base, process.pid


def signer() -> URLSigner:
    from tests.django_settings import SECRET_KEY

    return URLSigner(SECRET_KEY, purpose="blake2sign_web.signed_urls")


def rss(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def reset_peak(pid: int) -> None:
    """Make VmHWM (the peak RSS) start again from the current RSS (Linux: write 5 to clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_growth_of_range(base: str, pid: int, path: str, data: bytes) -> int:
    """Fetch RANGE_LENGTH bytes at RANGE_START; return how far the worker's peak RSS rose above its RSS before.

    The warm-up (imports, connections, the first request's cost) goes through the ranged view: through
    ``/whole-object/`` it would download the whole object, whose freed memory the measured request could reuse.
    """
    link = signer().sign(path, expires_in=600)
    last = RANGE_START + RANGE_LENGTH - 1
    with httpx.Client(base_url=base, timeout=120) as client:
        warm = client.get(signer().sign(WARM_UP_PATH, expires_in=600), headers={"Range": "bytes=0-99"})
        assert (warm.status_code, warm.content) == (206, data[:100])
        reset_peak(pid)
        before = rss(pid, "VmRSS")
        response = client.get(link, headers={"Range": f"bytes={RANGE_START}-{last}"})
        growth = rss(pid, "VmHWM") - before
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes {RANGE_START}-{last}/{SIZE}"
    assert hashlib.sha256(response.content).digest() == hashlib.sha256(data[RANGE_START : last + 1]).digest()
    return growth


def test_a_range_of_a_64_mib_object_costs_under_8_mib(gunicorn: tuple[str, int], s3: tuple[str, bytes]) -> None:
    base, pid = gunicorn
    growth = peak_growth_of_range(base, pid, "/invoices/" + NAME.replace(" ", "%20"), s3[1])
    print(f"\n1 MiB range of a 64 MiB S3 object: worker peak RSS grew by {growth / MIB:.2f} MiB")
    assert growth < 8 * MIB, f"peak RSS grew by {growth / MIB:.1f} MiB for a 1 MiB range"


def test_the_file_object_would_have_downloaded_it_whole(gunicorn: tuple[str, int], s3: tuple[str, bytes]) -> None:
    """What the range cost before: django-storages downloads the whole object to seek (max_memory_size=0)."""
    base, pid = gunicorn
    growth = peak_growth_of_range(base, pid, "/whole-object/" + NAME.replace(" ", "%20"), s3[1])
    print(f"\nthe same range through the file object: worker peak RSS grew by {growth / MIB:.2f} MiB")
    assert growth > SIZE // 2


def test_whole_download_streams_in_flat_memory(gunicorn: tuple[str, int], s3: tuple[str, bytes]) -> None:
    base, pid = gunicorn
    link = signer().sign("/invoices/" + NAME.replace(" ", "%20"), expires_in=600)
    hashed = hashlib.sha256()
    with httpx.Client(base_url=base, timeout=120) as client:
        client.head(link)
        reset_peak(pid)
        before = rss(pid, "VmRSS")
        with client.stream("GET", link) as response:
            for chunk in response.iter_bytes():
                hashed.update(chunk)
        growth = rss(pid, "VmHWM") - before
    assert response.status_code == 200
    assert hashed.digest() == hashlib.sha256(s3[1]).digest()
    print(f"\nwhole 64 MiB S3 object: worker peak RSS grew by {growth / MIB:.2f} MiB")
    assert growth < 8 * MIB


def test_a_storage_without_ranged_reads_redirects_the_range(gunicorn: tuple[str, int], s3: tuple[str, bytes]) -> None:
    base, _ = gunicorn
    endpoint, data = s3
    link = signer().sign("/no-ranged-read/" + NAME.replace(" ", "%20"), expires_in=600)
    response = httpx.get(base + link, headers={"Range": "bytes=100-199"})
    assert response.status_code == 302
    assert response.headers["location"].startswith(f"{endpoint}/{BUCKET}/exports/big%20export.bin?")
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    followed = httpx.get(response.headers["location"], headers={"Range": "bytes=100-199"})
    assert (followed.status_code, followed.content) == (206, data[100:200])
    # HEAD, and a GET without Range, are still answered by the view (a HEAD from metadata).
    head = httpx.head(base + link)
    assert (head.status_code, head.headers["content-length"]) == (200, str(SIZE))
    assert httpx.get(base + link.replace("expires", "x")).status_code == 403
    # A single-use link is never redirected: the storage's URL could be used until it expires, as often as
    # anyone likes. Its range is read from the file object instead, and the link is used up.
    once = signer().sign("/no-ranged-read/" + NAME.replace(" ", "%20"), expires_in=600, single_use=True)
    ranged = httpx.get(base + once, headers={"Range": "bytes=100-199"})
    assert (ranged.status_code, ranged.content) == (206, data[100:200])
    assert httpx.get(base + once).status_code == 410


def test_under_asgi_too(django_uvicorn: tuple[str, int], s3: tuple[str, bytes]) -> None:
    base, pid = django_uvicorn
    growth = peak_growth_of_range(base, pid, "/invoices/" + NAME.replace(" ", "%20"), s3[1])
    print(f"\n1 MiB range of a 64 MiB S3 object under uvicorn: peak RSS grew by {growth / MIB:.2f} MiB")
    assert growth < 8 * MIB
