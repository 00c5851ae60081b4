"""Revocation, log out everywhere and single-use links on a real Redis Cluster (three primaries, three replicas).

A session's record and its user's are in different slots, usually on different nodes; the records under
earlier names (before key prefixes) are in slots of their own too. Every test here spreads its records over
several nodes, and the adapters must neither raise CROSSSLOT nor miss a record.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client
from django.urls import reverse
from redis.crc import key_slot
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django import sign_url
from blake2sign_web.django.revocation import RedisStoreCache, log_out_everywhere
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from tests.django_links import use_served_storage
from tests.redis_server import PATIENT_TIMEOUT, LoopbackCluster

from .single_use_apps import CONTENT, build_app, make_signer, write_files
from .test_keys import TOMORROW
from .test_sessions_starlette import Devices, build, old_cookie

SOME_SESSION = b"\x02" * 8
#: What a primary takes from its replicas on their own clock (REPLCONF ACK each second), not from a client.
REPLICATION = frozenset({"cmdstat_replconf", "cmdstat_psync", "cmdstat_sync"})


def cluster_store(cluster: LoopbackCluster, **options: Any) -> RedisStore:
    return RedisStore(cluster.url, timeout=PATIENT_TIMEOUT, **{"key_prefix": "tests", **options})


def thirty_seconds_ago() -> int:
    return int(time.time()) - 30


def nodes_of(cluster: LoopbackCluster, keys: list[str]) -> set[int]:
    return {cluster.node_of_key(key).port for key in keys}


def links_on_every_node(cluster: LoopbackCluster, signer: URLSigner, least: int = 12) -> list[str]:
    """At least ``least`` single-use links whose records fall on every primary.

    Twelve random nonces leave one of three nodes out about one time in forty, so links are signed until
    each node has some; the cap only stops a broken slot map from looping forever.
    """
    links: list[str] = []
    nodes: set[int] = set()
    primaries = len(cluster.primaries())
    while len(links) < least or len(nodes) < primaries:
        assert len(links) < 200, f"200 single-use records on {len(nodes)} of {primaries} nodes"
        link = signer.sign("/action", expires_in=60, single_use=True)
        links.append(link)
        nonce = signer.verify_link(link).nonce
        assert nonce is not None
        nodes |= nodes_of(cluster, [revocation.single_use_key(nonce)])
    return links


def some_user_on_another_node(cluster: LoopbackCluster, session_id: bytes, prefix: str = "") -> int:
    """A user id whose record is on another node than the session's: the case a single MGET cannot read."""
    session_node = cluster.node_of_key(revocation.session_key(session_id, prefix)).port
    for user_id in range(1, 100):
        if cluster.node_of_key(revocation.user_key(user_id, prefix)).port != session_node:
            return user_id
    raise AssertionError("every user record on the session's node")


# Starlette: RedisStore on the cluster.


@pytest.fixture
def devices(redis_cluster: LoopbackCluster) -> Iterator[Devices]:
    with TestClient(build(cluster_store(redis_cluster, key_prefix="shop"))) as client:
        yield Devices(client)


def test_starlette_logout_and_log_out_everywhere_across_nodes(devices: Devices, redis_cluster: LoopbackCluster) -> None:
    devices.get("browser", "/login", user=7)
    devices.set("thief", devices.jars["browser"])
    assert devices.who("thief") == "7"
    devices.get("browser", "/logout")
    assert devices.who("thief") == "anonymous"

    devices.set("phone", old_cookie(8))
    devices.set("laptop", old_cookie(8, age=100))
    devices.set("other user", old_cookie(9))
    devices.get("laptop", "/everywhere", keep="1")
    assert [devices.who("phone"), devices.who("laptop"), devices.who("other user")] == ["anonymous", "8", "9"]
    written = [key.decode() for node in redis_cluster.primaries() for key in redis_cluster.client(node).keys("*")]
    assert sorted(key.split(":")[2] for key in written) == ["sid", "user"]


def test_starlette_check_reads_records_on_different_nodes(redis_cluster: LoopbackCluster) -> None:
    user = some_user_on_another_node(redis_cluster, SOME_SESSION, "shop")

    async def scenario() -> list[bool]:
        store = cluster_store(redis_cluster, key_prefix="shop")
        seen = [await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())]
        await store.log_out_everywhere(user, 3600)
        seen.append(await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago()))
        other = secrets.token_bytes(8)
        await store.revoke_session(other, 3600)
        seen.append(await store.is_revoked(other, None, thirty_seconds_ago()))
        seen.append(await store.is_revoked(other, user + 1000, thirty_seconds_ago()))
        await store.aclose()
        return seen

    assert anyio.run(scenario) == [False, True, True, True]


def test_starlette_check_is_one_request_per_node(redis_cluster: LoopbackCluster) -> None:
    """The records of a check go out in one pipeline: one MGET per slot, at most one request per node."""
    user = some_user_on_another_node(redis_cluster, SOME_SESSION, "shop")
    # During an upgrade's window: the earlier names too, each in its own slot.
    keys = revocation.session_keys(SOME_SESSION, "shop", True) + revocation.user_keys(user, "shop", True)
    store = cluster_store(redis_cluster, key_prefix="shop", earlier_names_until=TOMORROW)
    admins = {node.port: redis_cluster.client(node) for node in redis_cluster.primaries()}

    async def check() -> None:
        await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())  # connects, learns the slots
        for admin in admins.values():
            admin.config_resetstat()
        await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())
        await store.aclose()

    anyio.run(check)
    calls = {port: admin.info("commandstats") for port, admin in admins.items()}
    mgets = {port: stats.get("cmdstat_mget", {}).get("calls", 0) for port, stats in calls.items()}
    assert sum(mgets.values()) == len({key_slot(key.encode()) for key in keys})
    assert {port for port, count in mgets.items() if count} == nodes_of(redis_cluster, keys)
    ours = {"cmdstat_mget", "cmdstat_config|resetstat", "cmdstat_info"}
    seen = {name for stats in calls.values() for name in stats} - REPLICATION
    assert not seen - ours  # no other round trip on the common path


@pytest.mark.parametrize(
    ("key", "value", "user", "revoked"),
    [
        ("blake2sign_web:user:42", "{old}", 42, True),  # before key prefixes, Unix seconds alone
        ("blake2sign_web:sid:" + SOME_SESSION.hex(), "1", None, True),
        ("blake2sign_web:user:42", "{old}:", 42, True),  # a release whose prefix was optional, before this one took it
        ("blake2sign_web:user:42", "g:" + "ab" * 16 + ":{old}", 42, False),  # no release wrote a generation there
        ("blake2sign_web:shop:sid:" + SOME_SESSION.hex(), "ended", None, True),  # this release's own
    ],
)
def test_starlette_honours_records_under_earlier_names_in_other_slots(
    redis_cluster: LoopbackCluster, key: str, value: str, user: object, revoked: bool
) -> None:
    """A rolling upgrade to a cluster-aware release brings no ended session back (read during its window)."""
    redis.RedisCluster(startup_nodes=[redis.cluster.ClusterNode(*redis_cluster.startup_nodes[0])]).set(
        key, value.format(old=int(time.time())), ex=60
    )

    async def scenario() -> bool:
        store = cluster_store(redis_cluster, key_prefix="shop", earlier_names_until=TOMORROW)
        result = await store.is_revoked(SOME_SESSION, user, thirty_seconds_ago())
        await store.aclose()
        return result

    assert anyio.run(scenario) is revoked


def test_starlette_single_use_links_on_the_cluster(redis_cluster: LoopbackCluster, tmp_path: Path) -> None:
    root = write_files(tmp_path / "served")
    signer = make_signer()
    links = links_on_every_node(redis_cluster, signer)
    with TestClient(build_app(root, cluster_store(redis_cluster))) as client:
        assert [client.get(link).status_code for link in links] == [200] * len(links)
        assert [client.get(link).status_code for link in links] == [410] * len(links)
        download = signer.sign("/files/report.bin", expires_in=60, single_use=True)
        first = client.get(download, headers={"range": "bytes=0-99"})
        rest = client.get(download, headers={"range": "bytes=100-"})
        again = client.get(download)
        other = client.get(download, headers={"range": "bytes=0-9", "user-agent": "someone else"})
    assert (first.status_code, rest.status_code, rest.content) == (206, 206, CONTENT[100:])
    assert (again.status_code, other.status_code) == (410, 410)


def test_a_redis_cluster_client_and_its_url_are_both_accepted(redis_cluster: LoopbackCluster) -> None:
    from redis.asyncio.cluster import ClusterNode, RedisCluster

    async def scenario() -> list[bool]:
        seen = []
        for client in (
            RedisCluster(startup_nodes=[ClusterNode(host, port) for host, port in redis_cluster.startup_nodes[:2]]),
            redis_cluster.url,
            "redis+cluster://" + ",".join(f"{h}:{p}" for h, p in [("127.0.0.1", 1), *redis_cluster.startup_nodes]),
        ):
            store = RedisStore(client, timeout=PATIENT_TIMEOUT)
            assert store.is_cluster
            session = secrets.token_bytes(8)
            await store.revoke_session(session, 60)
            seen.append(await store.is_revoked(session, 1, thirty_seconds_ago()))
            await store.aclose()
        return seen

    assert anyio.run(scenario) == [True, True, True]  # the third starts from a node that is down


def test_starlette_waits_for_a_replica_on_the_cluster(redis_cluster: LoopbackCluster) -> None:
    async def scenario() -> list[bool]:
        store = cluster_store(redis_cluster, wait_replicas=1, key_prefix="shop")
        sessions = [secrets.token_bytes(8) for _ in range(6)]
        for session in sessions:
            await store.revoke_session(session, 60)
        await store.log_out_everywhere(42, 60)
        nonce = secrets.token_urlsafe(16)
        used = [await store.consume_link(nonce, int(time.time()) + 60, "me") for _ in range(2)]
        seen = [await store.is_revoked(s, None, thirty_seconds_ago()) for s in sessions] + used
        await store.aclose()
        return seen

    assert anyio.run(scenario) == [True] * 6 + [True, False]
    for primary in redis_cluster.primaries():  # every acknowledged write is on the primary's replica already
        (replica,) = redis_cluster.replicas_of(primary)
        assert redis_cluster.client(replica).dbsize() == redis_cluster.client(primary).dbsize()


# Django: RedisStoreCache on the cluster.


def use_store_cache(settings: Any, location: str, **options: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "shared": {
            "BACKEND": "blake2sign_web.django.revocation.RedisStoreCache",
            "LOCATION": location,
            "OPTIONS": {"socket_timeout": PATIENT_TIMEOUT, **options},
        },
    }
    settings.BLAKE2SIGN_WEB = {
        "SESSIONS": {"REVOCATION_CACHE": "shared", "REVOCATION_KEY_PREFIX": "shop"},
        "SIGNED_URLS": {"SINGLE_USE_CACHE": "shared"},
    }


@pytest.fixture
def django_cluster(settings: Any, redis_cluster: LoopbackCluster) -> LoopbackCluster:
    use_store_cache(settings, redis_cluster.url)
    return redis_cluster


def whoami(client: Client) -> str:
    return client.get("/whoami/").content.decode()


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
def test_django_logout_and_log_out_everywhere_on_the_cluster(settings: Any, django_cluster: LoopbackCluster) -> None:
    from .test_sessions_django import copy_of, log_in
    from .test_sessions_django import old_cookie as django_old_cookie

    users = get_user_model()
    ada = users.objects.create_user("ada")
    for _ in range(5):  # user ids whose records fall on different nodes
        users.objects.create_user(secrets.token_hex(4))
    browser = log_in()
    thief = copy_of(browser)
    assert whoami(thief) == "ada"
    browser.post("/logout/")
    assert [whoami(thief), whoami(browser)] == ["anonymous", "anonymous"]

    phone, laptop = Client(), Client()
    django_old_cookie(phone, ada)
    django_old_cookie(laptop, ada, age=100)
    assert whoami(laptop) == "ada"
    log_out_everywhere(ada)
    assert [whoami(phone), whoami(laptop)] == ["anonymous", "anonymous"]
    cache = caches["shared"]
    assert isinstance(cache, RedisStoreCache)
    assert cache.client.exists(cache.make_and_validate_key(revocation.user_key(ada.pk, "shop")))


@pytest.mark.urls("tests.signed_urls.django_urls")
def test_django_single_use_links_on_the_cluster(settings: Any, django_cluster: LoopbackCluster, tmp_path: Path) -> None:
    root = write_files(tmp_path / "served")
    use_served_storage(settings, root)
    links = [sign_url(reverse("sig-plain", args=[1]), expires_in=60, single_use=True) for _ in range(12)]
    client = Client()
    assert [client.get(link).status_code for link in links] == [200] * 12
    assert [client.get(link).status_code for link in links] == [410] * 12
    download = sign_url(reverse("sig-files", args=["report.bin"]), expires_in=60, single_use=True)
    first = client.get(download, headers={"range": "bytes=0-99"})
    rest = client.get(download, headers={"range": "bytes=100-"})
    assert (first.status_code, rest.status_code) == (206, 206)
    assert b"".join(rest.streaming_content) == CONTENT[100:]  # type: ignore[attr-defined]
    assert client.get(download).status_code == 410
    assert Client(HTTP_USER_AGENT="someone else").get(download, headers={"range": "bytes=0-9"}).status_code == 410


def test_django_store_cache_operations_on_the_cluster(django_cluster: LoopbackCluster) -> None:
    cache = caches["shared"]
    keys = [f"key-{i}" for i in range(20)]
    for number, key in enumerate(keys):
        cache.set(key, number, 60)
    assert cache.get_many([*keys, "missing"]) == {key: number for number, key in enumerate(keys)}
    assert cache.add("a", "x", 60) is True
    assert cache.add("a", "y", 60) is False
    assert cache.get("a") == "x"
    assert cache.incr("key-3", 5) == 8
    assert cache.decr("key-3", 10) == -2
    with pytest.raises(ValueError, match="not found"):
        cache.decr("missing")
    assert cache.get("missing") is None  # decr did not create it
    assert cache.touch("a", 1000) is True
    assert cache.delete("a") is True
    assert cache.has_key("a") is False
    cache.clear()
    assert cache.get_many(keys) == {}


# Both adapters: a file link's two records in one slot, whatever the Django cache's prefix.


@pytest.mark.parametrize("cache_prefix", ["", "site-a"])
def test_a_file_link_is_consumed_in_one_slot(settings: Any, redis_cluster: LoopbackCluster, cache_prefix: str) -> None:
    from blake2sign_web.django.revocation import consume_link

    use_store_cache(settings, redis_cluster.url)
    settings.CACHES["shared"]["KEY_PREFIX"] = cache_prefix
    cache = caches["shared"]
    nonce = secrets.token_urlsafe(16)
    expires = int(time.time()) + 60
    steps = [
        consume_link(cache, nonce, expires, "me", file_size=100),
        consume_link(cache, nonce, expires, "me", file_size=100, continuation=60),
        consume_link(cache, nonce, expires, "me", file_size=100, continuation=60),
        consume_link(cache, nonce, expires, "someone else", file_size=100, continuation=1),
        consume_link(cache, nonce, expires, "me", file_size=100, continuation=40),
    ]
    assert steps == [True, True, False, False, True]
    once = cache.make_and_validate_key(revocation.single_use_key(nonce))
    found = [k for node in redis_cluster.primaries() for k in redis_cluster.client(node).keys(f"*{nonce}*")]
    assert len(found) == 2
    assert {key_slot(k) for k in found} == {key_slot(once.encode())}
