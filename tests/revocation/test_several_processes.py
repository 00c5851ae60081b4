"""One single-use link, many parallel requests, several server processes, one real Redis or a Redis Cluster:
exactly one wins."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from blake2sign_web import URLSigner
from tests.redis_server import LoopbackCluster, RedisServer
from tests.servers import free_port, running_server

from .single_use_apps import make_signer, write_files

BIN = Path(sys.executable).parent
REQUESTS = 24
pytestmark = pytest.mark.server


def race(urls: list[str]) -> Counter[int]:
    """GET every URL at once (a barrier releases all threads together); count the statuses."""
    barrier = threading.Barrier(len(urls))
    statuses: list[int] = []
    lock = threading.Lock()

    def fetch(url: str) -> None:
        with httpx.Client(timeout=20) as client:
            barrier.wait()
            status = client.get(url).status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=fetch, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Counter(statuses)


@pytest.fixture(params=["one-redis", "cluster"])
def redis_url(request: pytest.FixtureRequest) -> str:
    """The URL of the store the servers share: one redis-server, or the cluster (three primaries, three replicas)."""
    if request.param == "cluster":
        cluster: LoopbackCluster = request.getfixturevalue("redis_cluster")
        return cluster.url
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url


@pytest.fixture
def uvicorns(redis_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """Three uvicorn processes, each with its own Redis connections."""
    root = write_files(tmp_path / "served")
    with ExitStack() as stack:
        bases = []
        for _ in range(3):
            port = free_port()
            command = [
                str(BIN / "uvicorn"), "--factory", "tests.revocation.single_use_apps:app_from_env",
                "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
            ]  # fmt: skip
            env = {"BLAKE2SIGN_SERVED_ROOT": str(root), "BLAKE2SIGN_REDIS_URL": redis_url}
            bases.append(stack.enter_context(running_server(command, port, **env)))
        yield bases


@pytest.fixture
def gunicorn(redis_url: str, tmp_path: Path) -> Iterator[str]:
    root = write_files(tmp_path / "served")
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "4", "tests.signed_urls.wsgi"]
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.revocation.server_settings",
        "BLAKE2SIGN_SERVED_ROOT": str(root),
        "BLAKE2SIGN_REDIS_URL": redis_url,
    }
    with running_server(command, port, **env) as base:
        yield base


def links(redis_url: str) -> int:
    """Three links on a cluster (their records in three slots, on different nodes), one on one server."""
    return 3 if redis_url.startswith("redis+cluster") else 1


def test_starlette_processes_let_exactly_one_request_through(uvicorns: list[str], redis_url: str) -> None:
    for _ in range(links(redis_url)):
        link = make_signer().sign("/files/report.bin", expires_in=60, single_use=True)
        statuses = race([uvicorns[i % len(uvicorns)] + link for i in range(REQUESTS)])
        assert statuses == Counter({200: 1, 410: REQUESTS - 1})


def test_django_workers_let_exactly_one_request_through(gunicorn: str, redis_url: str) -> None:
    from tests.django_settings import SECRET_KEY

    signer = URLSigner(SECRET_KEY, purpose="blake2sign_web.signed_urls")
    for _ in range(links(redis_url)):
        link = signer.sign("/files/report.bin", expires_in=60, single_use=True)
        statuses = race([gunicorn + link] * REQUESTS)
        assert statuses == Counter({200: 1, 410: REQUESTS - 1})
