"""A primary of the cluster dies mid-run and its replica is promoted: what is kept, what is lost, what is refused.

- With ``wait_replicas=1``, every revocation and every use of a link that was acknowledged is still there
  after the failover (it was on the replica before it was acknowledged).
- Without it, a write acknowledged by a primary that dies before replicating it is lost: shown here
  deterministically by cutting the replica off first (frozen with SIGSTOP, its link closed by the
  primary), so that the write cannot reach it.
- During the election the store is unavailable and the policies apply, in both adapters: "closed" reads a
  session as empty (its cookie kept) and answers 503 for a single-use link; "open" accepts both.
  Afterwards, the same cookie is logged in again.

Nodes are killed with SIGKILL (no shutdown, nothing handed over); each test gives the cluster back whole.
The run is short in CI; ``pytest --long`` keeps the traffic going ten times longer.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.test import Client
from django.urls import reverse
from starlette.testclient import TestClient

from blake2sign_web.django import sign_url
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from blake2sign_web.stores.revocation import StoreUnavailable
from tests.longrun import seconds
from tests.redis_server import LoopbackCluster, RedisServer

from .single_use_apps import build_app, make_signer, write_files
from .test_sessions_starlette import Devices, build, old_cookie

pytestmark = pytest.mark.server
#: The store's bound on each call: the election takes about two node timeouts (2 s here).
TIMEOUT = 1.0


def session_on(cluster: LoopbackCluster, node: RedisServer, prefix: str = "") -> bytes:
    """A session id whose record lives on ``node``."""
    while True:
        session = secrets.token_bytes(8)
        if cluster.node_of_key(revocation.session_key(session, prefix)) is node:
            return session


def nonce_on(cluster: LoopbackCluster, node: RedisServer) -> str:
    while True:
        nonce = secrets.token_urlsafe(16)
        if cluster.node_of_key(revocation.single_use_key(nonce)) is node:
            return nonce


def wait_for(condition: Any, what: str, timeout: float = 30) -> float:
    """Poll ``condition`` until true; the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Traffic:
    """What a run of writes saw: the writes acknowledged, and when the store was unavailable."""

    sessions: list[bytes] = field(default_factory=list)
    nonces: list[str] = field(default_factory=list)
    users: list[int] = field(default_factory=list)
    refused: int = 0
    refused_at: list[float] = field(default_factory=list)


async def write_until(store: RedisStore, traffic: Traffic, stop: anyio.Event, started: anyio.Event) -> None:
    """Revocations, "log out everywhere" and first uses of links, one after another, keeping the acknowledged."""
    count = 0
    while not stop.is_set():
        count += 1
        session, nonce, user = secrets.token_bytes(8), secrets.token_urlsafe(16), count
        try:
            if count % 3 == 0:
                await store.revoke_session(session, 120)
                traffic.sessions.append(session)
            elif count % 3 == 1:
                assert await store.consume_link(nonce, int(time.time()) + 120, "me")
                traffic.nonces.append(nonce)
            else:
                await store.log_out_everywhere(user, 120)
                traffic.users.append(user)
        except StoreUnavailable:
            traffic.refused += 1
            traffic.refused_at.append(time.monotonic())
            await anyio.sleep(0.05)
        if count == 30:
            started.set()


async def all_still_there(store: RedisStore, traffic: Traffic) -> list[str]:
    """What of the acknowledged writes is missing now (nothing, when none was lost)."""
    issued = int(time.time()) - 60
    missing = [f"session {s.hex()}" for s in traffic.sessions if not await store.is_revoked(s, None, issued)]
    missing += [f"user {u}" for u in traffic.users if not await store.is_revoked(b"\x00" * 8, u, issued)]
    missing += [f"link {n}" for n in traffic.nonces if await store.consume_link(n, int(time.time()) + 120, "other")]
    return missing


def test_what_was_acknowledged_with_wait_replicas_survives_a_killed_primary(redis_cluster: LoopbackCluster) -> None:
    victim = redis_cluster.primaries()[0]
    (replica,) = redis_cluster.replicas_of(victim)
    traffic = Traffic()
    timings: dict[str, float] = {}

    async def run() -> list[str]:
        durable = RedisStore(redis_cluster.url, timeout=TIMEOUT, wait_replicas=1, key_prefix="shop")
        stop, started = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write_until, durable, traffic, stop, started)
            await started.wait()
            await anyio.sleep(seconds(0.5))
            before_kill = len(traffic.sessions) + len(traffic.nonces) + len(traffic.users)
            killed = time.monotonic()
            victim.kill()  # mid-run
            timings["promoted"] = await anyio.to_thread.run_sync(
                lambda: wait_for(lambda: redis_cluster.role(replica) == "master", "the replica's promotion")
            )
            # The promoted replica has no replica of its own until the old primary comes back: its slots
            # refuse writes that must wait for one (NotReplicated) until then. Bring it back as an operator would.
            await anyio.to_thread.run_sync(redis_cluster.restart, victim)
            timings["whole again"] = time.monotonic() - killed
            during = len(traffic.sessions) + len(traffic.nonces) + len(traffic.users) - before_kill
            await anyio.sleep(seconds(1.0, 15.0))
            stop.set()
        timings["acknowledged from the kill until whole again"] = during
        timings["last refusal after the kill"] = max(traffic.refused_at, default=killed) - killed
        reader = RedisStore(redis_cluster.url, timeout=10, key_prefix="shop")
        missing = await all_still_there(reader, traffic)
        await durable.aclose()
        await reader.aclose()
        return missing

    missing = anyio.run(run)
    total = len(traffic.sessions) + len(traffic.nonces) + len(traffic.users)
    print(f"\nfailover with wait_replicas=1: {total} writes acknowledged, {traffic.refused} refused, {timings}")
    assert missing == []
    assert traffic.refused > 0  # the victim's slots were unavailable for a while
    assert min(len(traffic.sessions), len(traffic.nonces), len(traffic.users)) > 10


def test_without_wait_replicas_a_write_the_replica_never_got_is_lost(redis_cluster: LoopbackCluster) -> None:
    """The loss the durability table states, made certain: the replica is cut off while the primary acknowledges."""
    victim = redis_cluster.primaries()[0]
    (replica,) = redis_cluster.replicas_of(victim)
    lost_session, durable_session = session_on(redis_cluster, victim), session_on(redis_cluster, victim)
    lost_nonce, durable_nonce = nonce_on(redis_cluster, victim), nonce_on(redis_cluster, victim)

    async def before() -> list[str]:
        fast = RedisStore(redis_cluster.url, timeout=TIMEOUT)
        durable = RedisStore(redis_cluster.url, timeout=TIMEOUT, wait_replicas=1)
        for store in (fast, durable):  # connected before the freeze (a frozen node stalls the first connection)
            await store.is_revoked(lost_session, None, 0)
        replica.pause()  # the replica cannot reconnect...
        with redis_cluster.client(victim) as primary:  # ...once its link is cut (as a partition cuts it)
            primary.client_kill_filter(_type="replica")
        outcomes = []
        await fast.revoke_session(lost_session, 120)  # acknowledged by the primary alone
        assert await fast.consume_link(lost_nonce, int(time.time()) + 120, "me")
        for write in (
            durable.revoke_session(durable_session, 120),
            durable.consume_link(durable_nonce, int(time.time()) + 120, "me"),
        ):
            try:
                await write
                outcomes.append("acknowledged")
            except revocation.NotReplicated:
                outcomes.append("not replicated")
        await fast.aclose()
        await durable.aclose()
        return outcomes

    try:
        assert anyio.run(before) == ["not replicated", "not replicated"]  # never reported as done
        victim.kill()
    finally:
        replica.resume()
    wait_for(lambda: redis_cluster.role(replica) == "master", "the replica's promotion")

    async def after() -> list[bool]:
        store = RedisStore(redis_cluster.url, timeout=10)
        seen = [
            await store.is_revoked(lost_session, None, int(time.time()) - 60),
            not await store.consume_link(lost_nonce, int(time.time()) + 120, "someone else"),
            not await store.consume_link(durable_nonce, int(time.time()) + 120, "me"),
        ]
        await store.aclose()
        return seen

    # The acknowledged revocation and first use are gone: the session is accepted again, the link used again.
    # The durable first use was refused (503) and undone: its link is simply usable, as the refusal promised.
    assert anyio.run(after) == [False, False, False]
    redis_cluster.restart(victim)


def cluster_state(cluster: LoopbackCluster, node: RedisServer) -> str:
    with cluster.client(node) as connection:
        state: str = connection.cluster("INFO")["cluster_state"]
        return state


def django_session_data(client: Any) -> Any:
    response = client.post("/ops/", json.dumps({"ops": []}), content_type="application/json")
    return json.loads(response.content)["session"]


@pytest.mark.parametrize("policy", ["closed", "open"])
def test_the_policies_during_the_election(
    settings: Any, redis_cluster: LoopbackCluster, policy: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Both adapters, while the cluster has lost a primary and not yet promoted its replica (held back, frozen)."""
    victim = redis_cluster.primaries()[0]
    (replica,) = redis_cluster.replicas_of(victim)
    survivor = next(node for node in redis_cluster.primaries() if node is not victim)
    # Starlette: sessions and single-use links on one store.
    store = RedisStore(redis_cluster.url, timeout=TIMEOUT, on_unavailable=policy, key_prefix="tests")  # type: ignore[arg-type]
    root = write_files(tmp_path / "served")
    links = [make_signer().sign("/action", expires_in=60, single_use=True) for _ in range(3)]
    app = build(store)
    app.router.routes.extend(build_app(root, store).router.routes)
    # Django: RedisStoreCache for both, with the same policy.
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "shared": {
            "BACKEND": "blake2sign_web.django.revocation.RedisStoreCache",
            "LOCATION": redis_cluster.url,
            "OPTIONS": {"socket_timeout": TIMEOUT},
        },
    }
    settings.BLAKE2SIGN_WEB = {
        "SESSIONS": {"REVOCATION_CACHE": "shared", "REVOCATION_KEY_PREFIX": "tests", "REVOCATION_UNAVAILABLE": policy},
        "SIGNED_URLS": {"SINGLE_USE_CACHE": "shared", "SINGLE_USE_UNAVAILABLE": policy},
    }
    settings.ROOT_URLCONF = "tests.signed_urls.django_urls"
    django_links = [sign_url(reverse("sig-plain", args=[1]), expires_in=60, single_use=True) for _ in range(3)]
    browser = Client()

    def django_requests() -> list[Any]:
        settings.ROOT_URLCONF = "tests.revocation.django_urls"
        seen = [django_session_data(browser), browser.cookies[settings.SESSION_COOKIE_NAME].value]
        settings.ROOT_URLCONF = "tests.signed_urls.django_urls"
        return [*seen, Client().get(django_links.pop(0)).status_code]

    settings.ROOT_URLCONF = "tests.revocation.django_urls"
    browser.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", 1]]}), content_type="application/json")
    cookie = browser.cookies[settings.SESSION_COOKIE_NAME].value
    assert django_requests() == [{"cart": 1}, cookie, 200]

    with TestClient(app) as client:
        devices = Devices(client)
        devices.set("browser", old_cookie(7))
        assert devices.who("browser") == "7"
        assert client.get(links[0]).status_code == 200
        replica.pause()
        try:
            victim.kill()
            wait_for(lambda: cluster_state(redis_cluster, survivor) == "fail", "the cluster to see the primary fail")
            with caplog.at_level(logging.ERROR):
                during = [devices.get("browser", "/whoami"), client.get(links[1])]
                django_during = django_requests()
        finally:
            replica.resume()
        wait_for(lambda: redis_cluster.role(replica) == "master", "the replica's promotion")
        wait_for(lambda: cluster_state(redis_cluster, survivor) == "ok", "the cluster to be ok again")
        after = [devices.who("browser"), client.get(links[2]).status_code]
    django_after = django_requests()
    redis_cluster.restart(victim)
    if policy == "closed":
        assert [during[0].text, during[1].status_code] == ["anonymous", 503]
        assert "set-cookie" not in during[0].headers  # the cookie is kept: the session comes back
        assert django_during == [{}, cookie, 503]  # read as empty, the cookie kept as it was
        assert "Session read as empty" in caplog.text
    else:
        assert [during[0].text, during[1].status_code] == ["7", 200]
        assert django_during == [{"cart": 1}, cookie, 200]
        assert "unchecked" in caplog.text
    assert after == ["7", 200]
    assert django_after == [{"cart": 1}, cookie, 200]
