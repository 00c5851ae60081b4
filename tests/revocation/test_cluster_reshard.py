"""Slots move from one primary to another (``redis-cli --cluster reshard``) while both adapters write and read.

Every record of the traffic lives in the slots being moved; each of them holds a few hundred keys already,
moved one by one, so that a slot stays half moved for a while (a new key there is redirected with ASK, a
moved one with MOVED, and a script whose two keys are split between the nodes answers TRYAGAIN). Writes go
both plainly and waiting for a replica (``wait_replicas=1``, whose write and WAIT must follow the
redirections on one connection). Nothing may be refused, nothing lost, no link used twice.
``pytest --long`` moves ten times the slots.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from redis.crc import key_slot

from blake2sign_web.django import revocation as django_revocation
from blake2sign_web.django.revocation import RedisStoreCache
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from tests.longrun import is_long
from tests.redis_server import LoopbackCluster, RedisServer

pytestmark = pytest.mark.server
SLOTS = 200 if is_long() else 20
FILLERS_PER_SLOT = 500
#: Sessions and nonces made ahead for each moving slot, for the traffic to aim at the slot being moved.
AHEAD = 10
#: Rounds of each adapter's traffic (revoke, check, a single-use link used twice) a run makes at the least.
MIN_ROUNDS = 11


def slots_of(cluster: LoopbackCluster, node: RedisServer) -> list[int]:
    with cluster.client(node) as connection:
        ranges = [(start, end) for start, end, primary, *_ in connection.cluster("SLOTS") if primary[1] == node.port]
    return sorted(slot for start, end in ranges for slot in range(start, end + 1))


def in_slots(make: Callable[[], Any], key: Callable[[Any], str], slots: set[int]) -> Any:
    """A fresh value (session id, nonce) whose record falls in ``slots``."""
    while True:
        value = make()
        if key_slot(key(value).encode()) in slots:
            return value


class Aim:
    """Session ids and nonces for the slot being moved right now (seen in the source's CLUSTER NODES)."""

    def __init__(self, cluster: LoopbackCluster, source: RedisServer, moving: set[int]) -> None:
        self.moving = moving
        self.pools: dict[str, dict[int, list[Any]]] = {"session": {}, "nonce": {}}
        makers = {"session": lambda: secrets.token_bytes(8), "nonce": lambda: secrets.token_urlsafe(16)}
        keys = {"session": revocation.session_key, "nonce": revocation.single_use_key}
        for kind in self.pools:
            while sum(len(v) for v in self.pools[kind].values()) < AHEAD * len(moving):
                value = in_slots(makers[kind], keys[kind], moving)
                self.pools[kind].setdefault(key_slot(keys[kind](value).encode()), []).append(value)
        self.makers, self.keys = makers, keys
        self.cluster, self.source = cluster, source
        self.now: int | None = None
        self.hits = 0
        self.lock = threading.Lock()

    def watch(self, done: threading.Event) -> None:
        with self.cluster.client(self.source) as connection:
            while not done.is_set():
                nodes = connection.execute_command("CLUSTER", "NODES").decode()
                myself = next(line for line in nodes.splitlines() if "myself" in line)
                migrating = [part for part in myself.split() if "->-" in part]
                self.now = int(migrating[0].strip("[").split("-")[0]) if migrating else None
                time.sleep(0.005)

    def take(self, kind: str) -> Any:
        with self.lock:
            pool = self.pools[kind].get(self.now) if self.now is not None else None
            if pool:
                self.hits += 1
                return pool.pop()
        return in_slots(self.makers[kind], self.keys[kind], self.moving)


def test_records_and_traffic_survive_a_slot_migration(redis_cluster: LoopbackCluster) -> None:
    source, target = redis_cluster.primaries()[:2]
    moving = set(slots_of(redis_cluster, source)[:SLOTS])  # redis-cli moves the lowest first
    aim = Aim(redis_cluster, source, moving)
    already = [in_slots(lambda: secrets.token_bytes(8), revocation.session_key, moving) for _ in range(5 * SLOTS)]
    with redis_cluster.client(source) as primary:
        pipe = primary.pipeline(transaction=False)
        for session in already:
            pipe.set(revocation.session_key(session), revocation.SESSION_ENDED, ex=300)
        for slot in moving:  # ballast, so that each slot takes a while to move
            tag = next(f"{slot}-{n}" for n in range(1_000_000) if key_slot(f"{slot}-{n}".encode()) == slot)
            for number in range(FILLERS_PER_SLOT):
                pipe.set(f"ballast:{{{tag}}}:{number}", "x", ex=300)
        pipe.execute()
    problems: list[str] = []
    counts = {"starlette": 0, "django": 0}
    #: Rounds finished while slots were still moving (the rest keep going after it, up to MIN_ROUNDS each).
    during = {"starlette": 0, "django": 0}
    done = threading.Event()

    def going(kind: str) -> bool:
        """Traffic runs while slots move, and on until each side has made MIN_ROUNDS rounds (a slow side is not
        cut short by a quick reshard: how many rounds fit in a migration is the machine's, not the code's)."""
        return not done.is_set() or counts[kind] < MIN_ROUNDS

    def finished(kind: str) -> None:
        counts[kind] += 1
        if not done.is_set():
            during[kind] += 1

    def django_traffic() -> None:
        cache = RedisStoreCache(redis_cluster.url, {"OPTIONS": {"socket_timeout": 5, "wait_replicas": 1}})
        while going("django"):
            session, nonce = aim.take("session"), aim.take("nonce")
            try:
                django_revocation.revoke_session(cache, session, 300)
                if not django_revocation.is_session_revoked(cache, session, None, int(time.time()) - 30):
                    problems.append(f"django: session {session.hex()} not revoked")
                expires = int(time.time()) + 300
                uses = [django_revocation.consume_link(cache, nonce, expires, "me", file_size=10) for _ in range(2)]
                if uses != [True, False]:
                    problems.append(f"django: link {nonce} gave {uses}")
                finished("django")
            except Exception as error:
                problems.append(f"django: {error!r}")

    async def starlette_traffic() -> None:
        plain = RedisStore(redis_cluster.url, timeout=5)
        durable = RedisStore(redis_cluster.url, timeout=5, wait_replicas=1)
        while going("starlette"):
            session, nonce = aim.take("session"), aim.take("nonce")
            store = durable if counts["starlette"] % 2 else plain
            try:
                await store.revoke_session(session, 300)
                if not await store.is_revoked(session, 1, int(time.time()) - 30):
                    problems.append(f"starlette: session {session.hex()} not revoked")
                expires = int(time.time()) + 300
                uses = [await store.consume_link(nonce, expires, "me", file_size=10) for _ in range(2)]
                if uses != [True, False]:
                    problems.append(f"starlette: link {nonce} gave {uses}")
                old = already[counts["starlette"] % len(already)]
                if not await store.is_revoked(old, None, int(time.time()) - 30):
                    problems.append(f"starlette: record {old.hex()} lost while moving")
                finished("starlette")
            except Exception as error:
                problems.append(f"starlette: {error!r}")
        await plain.aclose()
        await durable.aclose()

    def reshard() -> float:
        started = time.monotonic()
        try:
            redis_cluster.reshard(source, target, SLOTS, pipeline=1)
        finally:
            done.set()
        return time.monotonic() - started

    async def run() -> float:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(starlette_traffic)
            threads = [threading.Thread(target=django_traffic), threading.Thread(target=aim.watch, args=(done,))]
            for thread in threads:
                thread.start()
            took = await anyio.to_thread.run_sync(reshard)
        for thread in threads:
            await anyio.to_thread.run_sync(thread.join)
        return took

    with redis_cluster.client(target) as connection:
        connection.config_resetstat()
    took = anyio.run(run)
    with redis_cluster.client(target) as connection:
        redirected = connection.info("commandstats").get("cmdstat_asking", {}).get("calls", 0)
    print(
        f"\nreshard of {SLOTS} slots ({FILLERS_PER_SLOT} keys each) in {took:.1f} s under traffic: {counts} "
        f"({during} while moving), "
        f"{aim.hits} records aimed at the slot being moved, {redirected} ASK redirections followed"
    )
    assert problems == []
    assert set(slots_of(redis_cluster, target)) >= moving
    assert min(counts.values()) >= MIN_ROUNDS
    assert min(during.values()) > 0  # both adapters' traffic met the slots while they moved

    async def afterwards() -> list[bytes]:
        store = RedisStore(redis_cluster.url, timeout=5)
        lost = [s for s in already if not await store.is_revoked(s, None, int(time.time()) - 30)]
        await store.aclose()
        return lost

    assert anyio.run(afterwards) == []


def test_a_slot_held_half_migrated(redis_cluster: LoopbackCluster) -> None:
    """One slot MIGRATING on its primary and IMPORTING on another, held so: every new record of it is redirected
    (ASK) to the target, and both adapters follow, with concurrent requests and writes that wait for a replica."""
    source, target = redis_cluster.primaries()[:2]
    slot = slots_of(redis_cluster, source)[0]
    sessions = [in_slots(lambda: secrets.token_bytes(8), revocation.session_key, {slot}) for _ in range(16)]
    nonces = [in_slots(lambda: secrets.token_urlsafe(16), revocation.single_use_key, {slot}) for _ in range(8)]
    with redis_cluster.client(source) as old, redis_cluster.client(target) as new:
        new.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", redis_cluster.node_id(source))
        old.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", redis_cluster.node_id(target))

    def finish_the_move(after: float = 0) -> None:
        time.sleep(after)
        with redis_cluster.client(source) as old, redis_cluster.client(target) as new:
            for connection in (new, old):
                connection.execute_command("CLUSTER", "SETSLOT", slot, "NODE", redis_cluster.node_id(target))

    try:

        async def starlette() -> list[Any]:
            plain = RedisStore(redis_cluster.url, timeout=5)
            durable = RedisStore(redis_cluster.url, timeout=5, wait_replicas=1)
            issued = int(time.time()) - 30
            before = await asyncio.gather(*(plain.is_revoked(s, 1, issued) for s in sessions))
            await asyncio.gather(*(durable.revoke_session(s, 60) for s in sessions[:4]))
            await asyncio.gather(*(plain.revoke_session(s, 60) for s in sessions[4:8]))
            used = await asyncio.gather(
                *(store.consume_link(n, issued + 90, "me") for n in nonces[:4] for store in (plain, durable))
            )
            after = await asyncio.gather(*(durable.is_revoked(s, None, issued) for s in sessions))
            await plain.aclose()
            await durable.aclose()
            return [before, sorted(used), after]

        before, used, after = anyio.run(starlette)
        assert before == [False] * 16
        assert used == [False] * 4 + [True] * 4  # each link once, whichever store came first
        assert after == [True] * 8 + [False] * 8

        cache = RedisStoreCache(redis_cluster.url, {"OPTIONS": {"socket_timeout": 5, "wait_replicas": 1}})
        outcomes: list[Any] = []

        def django(session: bytes, nonce: str) -> None:
            django_revocation.revoke_session(cache, session, 60)
            outcomes.append(django_revocation.is_session_revoked(cache, session, None, int(time.time()) - 30))
            uses = [django_revocation.consume_link(cache, nonce, int(time.time()) + 60, "me") for _ in range(2)]
            outcomes.append(uses)

        threads = [threading.Thread(target=django, args=pair) for pair in zip(sessions[8:12], nonces[4:], strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(map(str, outcomes)) == sorted(["True"] * 4 + ["[True, False]"] * 4)
        with redis_cluster.client(source) as old, redis_cluster.client(target) as new:
            assert old.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0  # every new record went to the target
            assert new.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) > 0

        async def a_file_link_waits_for_the_move() -> tuple[bool, float]:
            """A file link's first use writes two keys: neither node takes both while the slot moves (TRYAGAIN)."""
            store = RedisStore(redis_cluster.url, timeout=5)
            started = time.monotonic()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(anyio.to_thread.run_sync, finish_the_move, 0.5)
                used = await store.consume_link(nonces[0] + "x", int(time.time()) + 60, "me", file_size=9)
            await store.aclose()
            return used, time.monotonic() - started

        used_file, waited = anyio.run(a_file_link_waits_for_the_move)
        assert used_file is True
        assert 0.5 <= waited < 5
    finally:
        finish_the_move()
        redis_cluster.wait_healthy()
