"""Revocation checks per second from N application processes, on one Redis and on a Redis Cluster; what WAIT costs.

    python -m example_project.bench.cluster_scale [--processes 1,2,4] [--concurrency 16] [--seconds 5] [--quick]

Starts its own servers on free 127.0.0.1 ports, as the tests do (tests/redis_server.py): one redis-server
with one replica, and a cluster of three primaries with a replica each (redis-cli --cluster create).

1. **Per-request latency**: one process, one request at a time, ``RedisStore.is_revoked`` for a
   logged-in session (its record and its user's: one MGET on one server; on the cluster, two slots,
   so one MGET per slot sent together, one request per node). Median and 99th percentile.
2. **Throughput**: N processes (each an asyncio event loop with ``--concurrency`` requests in flight,
   as an ASGI worker under load), checking random sessions of 10,000 users for ``--seconds``; checks
   per second in all, and the latency of each check under that load.
3. **WAIT**: ``revoke_session`` and ``consume_link`` one at a time, plain and with ``wait_replicas=1``.

Everything shares this machine's cores: application processes, six or two redis-servers. On a
machine with fewer cores than servers the cluster cannot show more capacity than one Redis, only what
its extra hop and its client cost; the report prints the core count next to the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

USERS = 10_000


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} us"


@contextmanager
def servers() -> Iterator[dict[str, Any]]:
    """One redis-server with a replica, and a cluster of three primaries and three replicas."""
    sys.path.insert(0, os.getcwd())
    from tests.redis_server import LoopbackCluster, RedisServer, find_redis_server, require_redis_cli

    binary = find_redis_server()
    if binary is None:
        raise SystemExit("no redis-server found (apt-get install redis-server)")
    primary = RedisServer(binary)
    primary.start()
    replica = RedisServer(binary, extra=["--replicaof", "127.0.0.1", str(primary.port)])
    replica.start()
    cluster = LoopbackCluster(binary, require_redis_cli())
    try:
        cluster.start()
        wait_for_replica(primary.port)
        yield {"one Redis": primary.url, "cluster": cluster.url}
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
        await store.revoke_session(secrets.token_bytes(8), time.time() + 3600)
    await store.aclose()


def a_session() -> tuple[bytes, int, int]:
    return secrets.token_bytes(8), secrets.randbelow(USERS), int(time.time()) + 60  # issued after any cut-off


async def latency(url: str, checks: int) -> list[float]:
    from blake2sign_web.starlette.revocation import RedisStore

    store = RedisStore(url, timeout=5)
    times = []
    for number in range(checks + 100):
        session, user, issued = a_session()
        started = time.perf_counter()
        await store.is_revoked(session, user, issued)
        if number >= 100:  # the first ones connect and learn the cluster's slots
            times.append(time.perf_counter() - started)
    await store.aclose()
    return times


def worker(url: str, concurrency: int, seconds: float, start: Any, results: Any) -> None:
    async def run() -> tuple[int, list[float]]:
        from blake2sign_web.starlette.revocation import RedisStore

        store = RedisStore(url, timeout=5)
        await store.is_revoked(*a_session())  # connected before the clock starts
        times: list[float] = []
        start.wait()
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
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    workers = [
        context.Process(target=worker, args=(url, concurrency, seconds, start, results)) for _ in range(processes)
    ]
    for process in workers:
        process.start()
    time.sleep(1.0 + 0.3 * processes)  # every process connected
    start.set()
    outcomes = [results.get(timeout=seconds + 60) for _ in workers]
    for process in workers:
        process.join()
    return sum(count for count, _ in outcomes) / seconds, [t for _, sample in outcomes for t in sample]


async def writes(url: str, count: int) -> dict[str, list[float]]:
    from blake2sign_web.starlette.revocation import RedisStore

    measured: dict[str, list[float]] = {}
    for replicas in (0, 1):
        store = RedisStore(url, timeout=5, wait_replicas=replicas)
        await store.is_revoked(*a_session())
        revokes, uses = [], []
        for _ in range(count):
            started = time.perf_counter()
            await store.revoke_session(secrets.token_bytes(8), time.time() + 60)
            revokes.append(time.perf_counter() - started)
            started = time.perf_counter()
            await store.consume_link(secrets.token_urlsafe(16), int(time.time()) + 60, "client")
            uses.append(time.perf_counter() - started)
        measured[f"revoke_session, wait_replicas={replicas}"] = revokes
        measured[f"consume_link, wait_replicas={replicas}"] = uses
        await store.aclose()
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", default="1,2,4", help="application process counts (default 1,2,4)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight per process (default 16)")
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each throughput run (default 5)")
    parser.add_argument("--quick", action="store_true", help="1 s runs, fewer samples: to see that it works")
    args = parser.parse_args()
    counts = [int(n) for n in args.processes.split(",")]
    seconds = 1.0 if args.quick else args.seconds
    samples = 300 if args.quick else 3000

    import redis

    print(
        f"{platform.machine()}, {os.cpu_count()} cores (shared by the application processes and the redis-servers), "
        f"Python {platform.python_version()}, redis-py {redis.__version__}, "
        f"{os.popen('redis-server --version').read().split()[2]}"
    )
    with servers() as urls:
        for url in urls.values():
            asyncio.run(populate(url))
        print("\nOne check, one request at a time (the latency a request adds):")
        print("| store | median | p99 |\n|---|---:|---:|")
        for name, url in urls.items():
            times = asyncio.run(latency(url, samples))
            print(f"| {name} | {us(statistics.median(times))} | {us(percentile(times, 0.99))} |")
        print(f"\nThroughput: N processes, {args.concurrency} requests in flight each, {seconds:g} s:")
        print("| store | processes | checks/s | median latency | p99 latency |\n|---|---:|---:|---:|---:|")
        for name, url in urls.items():
            for processes in counts:
                rate, times = throughput(url, processes, args.concurrency, seconds)
                print(
                    f"| {name} | {processes} | {rate:,.0f} | {us(statistics.median(times))} "
                    f"| {us(percentile(times, 0.99))} |"
                )
        print("\nWrites, one at a time, without and with WAIT for one replica:")
        print("| store | write | median | p99 |\n|---|---|---:|---:|")
        for name, url in urls.items():
            for write, times in asyncio.run(writes(url, samples // 3)).items():
                print(f"| {name} | {write} | {us(statistics.median(times))} | {us(percentile(times, 0.99))} |")


if __name__ == "__main__":
    main()
