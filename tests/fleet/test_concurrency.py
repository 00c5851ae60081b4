"""One process's cached signers shared by many concurrent requests: nobody reads anybody else's session.

- Django in one gunicorn gthread worker with 32 threads, hit by 32 clients at once, each with its own session;
- the Starlette site in one uvicorn process, hit by 200 asyncio tasks, each with its own cookie jar;
- in process: threads that share ``get_signer()`` while its cache is evicting, each checking its own tokens.

Each request appends a value that names its client to the session and gets the whole session back: the list must
be exactly that client's values, in order, every time.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from blake2sign_web import BadSignature, clear_signer_cache, get_signer, signer_cache_info
from blake2sign_web.signing import cache
from tests.longrun import examples, seconds
from tests.servers import free_port, running_server

from .fleet import Keys, gunicorn, uvicorn

BIN = Path(sys.executable).parent
SECRET = "fleet-concurrency-secret-0123456789"
THREADS = 32
TASKS = 200


@pytest.fixture
def django_threads() -> Iterator[str]:
    """Django on one gunicorn worker process with THREADS threads: one signer cache for all of them."""
    port = free_port()
    command = gunicorn("django.core.wsgi:get_wsgi_application()", port, 1, "--worker-class", "gthread")
    command[-1:-1] = ["--threads", str(THREADS)]
    env = {"DJANGO_SETTINGS_MODULE": "tests.fleet.django_settings", **Keys(SECRET).env()}
    with running_server(command, port, **env) as base:
        yield base


@pytest.fixture
def starlette_process() -> Iterator[str]:
    port = free_port()
    with running_server(uvicorn("tests.fleet.starlette_site:app", port), port, **Keys(SECRET).env()) as base:
        yield base


def expected_notes(client: int, count: int) -> list[str]:
    return [f"client-{client}-{k}" for k in range(count)]


@pytest.mark.server
def test_threaded_django_keeps_each_session_apart(django_threads: str) -> None:
    requests = examples(20)
    start = threading.Barrier(THREADS)
    pids: set[str] = set()

    def client(i: int) -> int:
        with httpx.Client(base_url=django_threads, timeout=60) as http:
            start.wait()
            for k in range(requests):
                response = http.get("/note/", params={"v": f"client-{i}-{k}"})
                assert response.status_code == 200
                assert response.json() == {"notes": expected_notes(i, k + 1)}
                pids.add(response.headers["x-served-by"])
        return requests

    with ThreadPoolExecutor(THREADS) as pool:
        done = sum(pool.map(client, range(THREADS)))
    assert done == THREADS * requests
    assert len(pids) == 1  # one process: every thread used its one signer cache


@pytest.mark.server
def test_starlette_tasks_keep_each_session_apart(starlette_process: str) -> None:
    requests = examples(5)
    tls = ssl.create_default_context()  # built once: each client would otherwise build its own

    async def client(i: int, start: asyncio.Event) -> int:
        async with httpx.AsyncClient(base_url=starlette_process, timeout=60, verify=tls) as http:
            await start.wait()
            for k in range(requests):
                response = await http.get("/note/", params={"v": f"client-{i}-{k}"})
                assert response.status_code == 200
                assert response.json() == {"notes": expected_notes(i, k + 1)}
        return requests

    async def main() -> int:
        start = asyncio.Event()
        tasks = [asyncio.create_task(client(i, start)) for i in range(TASKS)]
        await asyncio.sleep(0)
        start.set()
        return sum(await asyncio.gather(*tasks))

    assert asyncio.run(main()) == TASKS * requests


@pytest.fixture
def small_signer_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clear_signer_cache()
    monkeypatch.setattr(cache, "MAX_SIGNERS", 4)
    yield
    clear_signer_cache()


def test_shared_signers_survive_concurrent_eviction(small_signer_cache: None) -> None:
    """Twelve purposes through a cache of four: signers are evicted and rebuilt all the time, under 16 threads."""
    purposes = [f"purpose-{p}" for p in range(12)]
    duration = seconds(1.0)
    evicted_before = signer_cache_info().evicted
    stop = threading.Event()

    def worker(i: int) -> int:
        checked = 0
        while not stop.is_set():
            purpose = purposes[(i + checked) % len(purposes)]
            value = {"thread": i, "n": checked, "purpose": purpose, "cart": [i] * (checked % 7)}
            token = get_signer(SECRET, purpose=purpose).dumps(value)
            # Another lookup: the first signer may have been evicted and rebuilt meanwhile; the keys are the same.
            assert get_signer(SECRET, purpose=purpose).loads(token) == value
            other = purposes[(i + checked + 1) % len(purposes)]
            with pytest.raises(BadSignature):
                get_signer(SECRET, purpose=other).loads(token)
            checked += 1
        return checked

    with warnings.catch_warnings(record=True) as caught, ThreadPoolExecutor(16) as pool:
        warnings.simplefilter("always", RuntimeWarning)
        futures = [pool.submit(worker, i) for i in range(16)]
        stop.wait(duration)
        stop.set()
        counts = [future.result() for future in futures]
    assert min(counts) > 0
    assert any("MAX_SIGNERS" in str(w.message) for w in caught if w.category is RuntimeWarning)
    assert signer_cache_info().evicted > evicted_before
    assert signer_cache_info().size <= 4
