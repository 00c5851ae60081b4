"""Revocation checks per second from N application processes, on one Redis and on a Redis Cluster; what WAIT costs.

The ``revocation-scale`` part of ``python -m example_project.bench`` (results under ``revocation_scale``
in docs/benchmarks/results.json, the "Revocation at scale" section of docs/performance.md)::

    python -m example_project.bench revocation-scale [--scale-processes 1,2,4] [--scale-concurrency 16]
                                                     [--scale-seconds 5] [--quick]

Starts its own servers on free 127.0.0.1 ports, as the tests do (tests/redis_server.py): one redis-server
with one replica, and a cluster of three primaries with a replica each (redis-cli --cluster create).

1. **Per-request latency**: one process, one request at a time, ``RedisStore.is_revoked`` for a
   logged-in session (its record and its user's: one MGET on one server; on the cluster, two slots,
   so one MGET per slot sent together, one request per node), the two stores alternating. Median and
   99th percentile.
2. **Throughput**: N processes (each an asyncio event loop with ``concurrency`` requests in flight,
   as an ASGI worker under load), checking random sessions of 10,000 users for ``seconds``; checks
   per second in all, and the latency of each check under that load. One Redis and the cluster
   alternate, N by N.
3. **WAIT**: ``revoke_session`` and ``consume_link`` one at a time, plain and with ``wait_replicas=1``
   alternating.
4. **The server's ceiling**: ``redis-benchmark`` sending the check's MGET (four keys) to the one Redis
   from 8 connections, one at a time and pipelined: what the server could answer, against what the
   Python clients reach (skipped without redis-benchmark, which comes with redis-server on Debian).

Everything shares this machine's cores: application processes, six or two redis-servers. On a
machine with fewer cores than servers the cluster cannot show more capacity than one Redis, only what
its extra hop and its client cost; the report prints the core count next to the figures.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
USERS = 10_000
STORES = ("one Redis", "cluster")
WRITES = ("revoke_session", "consume_link")
PROCESSES = (1, 2, 4)
QUICK_PROCESSES = (1, 2)
#: redis-benchmark's connections, and its pipeline depth for the pipelined ceiling.
CEILING_CONNECTIONS, CEILING_PIPELINE = 8, 16


def steps(processes: tuple[int, ...] | list[int]) -> int:
    """Progress steps of ``run``: servers, latency, one per store and process count, writes, the ceiling."""
    return 1 + 1 + len(STORES) * len(processes) + 1 + 1


def supported() -> str | None:
    """Why the part cannot run here (no redis-server or redis-cli), or None."""
    binary, cli = binaries()
    if binary is None:
        return "no redis-server found (apt-get install redis-server)"
    if cli is None:
        return "no redis-cli found (apt-get install redis-tools, which redis-server brings)"
    return None


def binaries() -> tuple[str | None, str | None]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.redis_server import find_redis_server

    binary = find_redis_server()
    cli = shutil.which("redis-cli")
    if cli is None and binary is not None:
        sibling = os.path.join(os.path.dirname(binary), "redis-cli")
        cli = sibling if os.path.exists(sibling) else None
    return binary, cli


def server_version(binary: str) -> str:
    """``7.0.15`` from ``Redis server v=7.0.15 sha=...``."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.split()
    return next((word[2:] for word in out if word.startswith("v=")), "?")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(times: list[float]) -> dict[str, float]:
    """Median and 99th percentile, in microseconds."""
    return {"median_us": statistics.median(times) * 1e6, "p99_us": percentile(times, 0.99) * 1e6}


@contextmanager
def servers(binary: str, cli: str) -> Iterator[dict[str, Any]]:
    """One redis-server with a replica, and a cluster of three primaries and three replicas: their URLs."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.redis_server import LoopbackCluster, RedisServer

    primary = RedisServer(binary)
    replica = RedisServer(binary, extra=["--replicaof", "127.0.0.1", str(primary.port)])
    cluster = LoopbackCluster(binary, cli)
    try:
        primary.start()
        replica.start()
        cluster.start()
        wait_for_replica(primary.port)
        yield {"one Redis": primary.url, "cluster": cluster.url, "one Redis port": primary.port}
    finally:
        cluster.close()
        replica.close()
        primary.close()


def wait_for_replica(port: int) -> None:
    import redis

    with redis.Redis(port=port) as connection:
        for _ in range(200):
            if connection.info("replication").get("connected_slaves") == 1:
                return
            time.sleep(0.05)
    raise RuntimeError("the replica did not connect")


async def populate(url: str) -> None:
    """Some sessions ended and some users logged out everywhere, as on a live site (most are neither)."""
    from blake2sign_web.starlette.revocation import RedisStore

    store = RedisStore(url, timeout=10)
    for user in range(0, USERS, 50):
        await store.log_out_everywhere(user, 3600)
    for _ in range(USERS // 50):
        await store.revoke_session(secrets.token_bytes(8), 3600)
    await store.aclose()


def a_session() -> tuple[bytes, int, int]:
    return secrets.token_bytes(8), secrets.randbelow(USERS), int(time.time()) + 60  # issued after any cut-off


async def latency(urls: dict[str, str], checks: int) -> dict[str, list[float]]:
    """One check at a time, the stores alternating (first one, then the other) so that drift hits both."""
    from blake2sign_web.starlette.revocation import RedisStore

    stores = {name: RedisStore(url, timeout=5) for name, url in urls.items()}
    times: dict[str, list[float]] = {name: [] for name in stores}
    for number in range(checks + 100):
        order = list(stores) if number % 2 == 0 else list(reversed(stores))
        for name in order:
            session, user, issued = a_session()
            started = time.perf_counter()
            await stores[name].is_revoked(session, user, issued)
            if number >= 100:  # the first ones connect and learn the cluster's slots
                times[name].append(time.perf_counter() - started)
    for store in stores.values():
        await store.aclose()
    return times


def worker(url: str, concurrency: int, seconds: float, ready: Any, results: Any) -> None:
    async def run() -> tuple[int, list[float]]:
        from blake2sign_web.starlette.revocation import RedisStore

        store = RedisStore(url, timeout=5)
        for _ in range(20):  # connected, and the cluster's slots learnt, before the clock starts
            await store.is_revoked(*a_session())
        times: list[float] = []
        ready.wait(timeout=120)  # every process is connected: the clocks start together
        deadline = time.perf_counter() + seconds

        async def requests() -> None:
            while time.perf_counter() < deadline:
                session, user, issued = a_session()
                began = time.perf_counter()
                await store.is_revoked(session, user, issued)
                times.append(time.perf_counter() - began)

        await asyncio.gather(*(requests() for _ in range(concurrency)))
        await store.aclose()
        return len(times), times[:: max(1, len(times) // 2000)]

    results.put(asyncio.run(run()))


def throughput(url: str, processes: int, concurrency: int, seconds: float) -> tuple[float, list[float]]:
    """Checks per second from ``processes`` processes in all, and a sample of every check's latency."""
    context = multiprocessing.get_context("spawn")
    ready, results = context.Barrier(processes + 1), context.Queue()
    workers = [
        context.Process(target=worker, args=(url, concurrency, seconds, ready, results)) for _ in range(processes)
    ]
    for process in workers:
        process.start()
    try:
        ready.wait(timeout=120)
        outcomes = [results.get(timeout=seconds + 60) for _ in workers]
    finally:
        for process in workers:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
    return sum(count for count, _ in outcomes) / seconds, [t for _, sample in outcomes for t in sample]


async def writes(url: str, count: int) -> dict[str, dict[str, list[float]]]:
    """Each write, one at a time, without and with ``wait_replicas=1``, alternating: times by write and setting."""
    from blake2sign_web.starlette.revocation import RedisStore

    stores = {str(replicas): RedisStore(url, timeout=5, wait_replicas=replicas) for replicas in (0, 1)}
    measured: dict[str, dict[str, list[float]]] = {write: {key: [] for key in stores} for write in WRITES}
    for number in range(count + 50):
        order = list(stores) if number % 2 == 0 else list(reversed(stores))
        for key in order:
            store = stores[key]
            started = time.perf_counter()
            await store.revoke_session(secrets.token_bytes(8), 60)
            revoked = time.perf_counter()
            await store.consume_link(secrets.token_urlsafe(16), int(time.time()) + 60, "client")
            used = time.perf_counter()
            if number >= 50:  # the first ones connect to every primary
                measured["revoke_session"][key].append(revoked - started)
                measured["consume_link"][key].append(used - revoked)
    for store in stores.values():
        await store.aclose()
    return measured


def ceiling(port: int, requests: int) -> dict[str, Any] | None:
    """What the one Redis answers to the check's MGET from redis-benchmark: one at a time, and pipelined."""
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return None
    found: dict[str, Any] = {"connections": CEILING_CONNECTIONS, "pipeline": CEILING_PIPELINE, "keys": 4}
    for key, pipeline, count in (("one_at_a_time_rps", 1, requests), ("pipelined_rps", CEILING_PIPELINE, 8 * requests)):
        command = [binary, "-h", "127.0.0.1", "-p", str(port), "-c", str(CEILING_CONNECTIONS), "-n", str(count)]
        command += ["-P", str(pipeline), "--csv", "MGET", "k1", "k2", "k3", "k4"]
        out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True).stdout
        row = out.strip().splitlines()[-1].split(",")
        found[key] = float(row[1].strip('"'))
    return found


def run(
    *,
    processes: tuple[int, ...] | list[int] = PROCESSES,
    concurrency: int = 16,
    seconds: float = 5.0,
    samples: int = 3000,
    tick: Callable[[], None] = lambda: None,
    describe: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The part's results (docs/benchmarks/results.json, ``revocation_scale``): see report.py's schema."""
    import redis

    binary, cli = binaries()
    if binary is None or cli is None:
        raise RuntimeError(supported() or "no redis-server")
    result: dict[str, Any] = {
        "settings": {
            "processes": list(processes),
            "concurrency": concurrency,
            "seconds": seconds,
            "samples": samples,
            "write_samples": samples // 3,
            "users": USERS,
            "cores": os.cpu_count(),
            "versions": {
                "python": platform.python_version(),
                "redis-py": redis.__version__,
                "redis-server": server_version(binary),
            },
        },
    }
    describe("revocation-scale: starting one Redis and a cluster")
    with servers(binary, cli) as urls:
        stores = {name: urls[name] for name in STORES}
        for url in stores.values():
            asyncio.run(populate(url))
        tick()
        describe("revocation-scale: one check at a time")
        result["latency"] = {name: summary(times) for name, times in asyncio.run(latency(stores, samples)).items()}
        tick()
        result["throughput"] = {name: {} for name in stores}
        for count in processes:
            for name, url in stores.items():
                describe(f"revocation-scale: {name}, {count} process{'es' if count > 1 else ''}")
                rate, times = throughput(url, count, concurrency, seconds)
                result["throughput"][name][str(count)] = {"checks_per_s": rate, **summary(times)}
                tick()
        describe("revocation-scale: writes with and without WAIT")
        result["writes"] = {}
        for name, url in stores.items():
            measured = asyncio.run(writes(url, samples // 3))
            result["writes"][name] = {
                write: {key: summary(times) for key, times in by_key.items()} for write, by_key in measured.items()
            }
        tick()
        describe("revocation-scale: the server's ceiling (redis-benchmark)")
        result["ceiling"] = ceiling(urls["one Redis port"], 10 * samples)
        tick()
    return result
