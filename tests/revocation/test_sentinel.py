"""Revocation and single-use links on a primary that Sentinel manages (one replica, one Sentinel), and its failover."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches

from blake2sign_web.django import revocation as django_revocation
from blake2sign_web.starlette.revocation import RedisStore, StoreUnavailable
from tests.redis_server import PATIENT_TIMEOUT, LoopbackSentinel, redis_sentinel_fixture

from .test_cluster import use_store_cache


@pytest.fixture
def sentinel() -> Iterator[LoopbackSentinel]:
    yield from redis_sentinel_fixture()


def test_starlette_through_the_sentinel_url_and_a_sentinel_client(sentinel: LoopbackSentinel) -> None:
    from redis.asyncio.sentinel import Sentinel

    async def scenario() -> list[bool]:
        seen = []
        sentinels = Sentinel([("127.0.0.1", sentinel.sentinel_port)], socket_timeout=PATIENT_TIMEOUT)
        for client in (sentinel.url, sentinels.master_for(sentinel.SERVICE)):
            store = RedisStore(client, timeout=PATIENT_TIMEOUT, wait_replicas=1, key_prefix="shop")
            session = secrets.token_bytes(8)
            await store.revoke_session(session, 60)
            await store.log_out_everywhere(7, 60)
            nonce = secrets.token_urlsafe(16)
            seen += [
                await store.is_revoked(session, None, int(time.time()) - 30),
                await store.is_revoked(secrets.token_bytes(8), 7, int(time.time()) - 30),
                await store.consume_link(nonce, int(time.time()) + 60, "me"),
                await store.consume_link(nonce, int(time.time()) + 60, "me"),
            ]
            await store.aclose()
        return seen

    assert anyio.run(scenario) == [True, True, True, False] * 2
    with sentinel.client(sentinel.replica) as replica:
        assert replica.dbsize() == 2 + 2 + 1  # every acknowledged write is on the replica (wait_replicas=1)


@pytest.mark.urls("tests.revocation.django_urls")
@pytest.mark.django_db
def test_django_through_the_sentinel_url(settings: Any, sentinel: LoopbackSentinel) -> None:
    from .test_sessions_django import copy_of, log_in, whoami

    use_store_cache(settings, sentinel.url, wait_replicas=1)
    get_user_model().objects.create_user("ada")
    browser = log_in()
    thief = copy_of(browser)
    browser.post("/logout/")
    assert whoami(thief) == "anonymous"
    cache = caches["shared"]
    nonce = secrets.token_urlsafe(16)
    assert django_revocation.consume_link(cache, nonce, int(time.time()) + 60, "me")
    assert not django_revocation.consume_link(cache, nonce, int(time.time()) + 60, "me")


def test_what_was_acknowledged_survives_a_sentinel_failover(
    settings: Any, sentinel: LoopbackSentinel, tmp_path: Path
) -> None:
    """The replica is promoted; both adapters' clients follow the Sentinel to it, records included."""
    use_store_cache(settings, sentinel.url, wait_replicas=1, socket_timeout=2)  # WAIT gives up after 1 s
    cache = caches["shared"]

    async def before() -> tuple[list[bytes], list[str]]:
        store = RedisStore(sentinel.url, timeout=PATIENT_TIMEOUT, wait_replicas=1)
        sessions = [secrets.token_bytes(8) for _ in range(5)]
        nonces = [secrets.token_urlsafe(16) for _ in range(5)]
        for session, nonce in zip(sessions, nonces, strict=True):
            await store.revoke_session(session, 60)
            assert await store.consume_link(nonce, int(time.time()) + 60, "me")
        await store.aclose()
        return sessions, nonces

    sessions, nonces = anyio.run(before)
    django_sessions = [secrets.token_bytes(8) for _ in range(5)]
    for session in django_sessions:
        django_revocation.revoke_session(cache, session, 60)
    promoted = sentinel.failover()

    async def after() -> list[bool]:
        store = RedisStore(sentinel.url, timeout=PATIENT_TIMEOUT)
        seen = [await store.is_revoked(s, None, int(time.time()) - 30) for s in sessions]
        seen += [not await store.consume_link(n, int(time.time()) + 60, "me") for n in nonces]
        fresh = secrets.token_bytes(8)
        await store.revoke_session(fresh, 60)  # written on the new primary
        seen.append(await store.is_revoked(fresh, None, int(time.time()) - 30))
        await store.aclose()
        return seen

    assert anyio.run(after) == [True] * 11
    with sentinel.client(promoted) as primary:
        assert primary.info("replication")["role"] == "master"
    # The Django process's client (made before the failover) follows too, within a retry or two.
    for _ in range(20):
        try:
            ended = [
                django_revocation.is_session_revoked(cache, s, None, int(time.time()) - 30) for s in django_sessions
            ]
            break
        except StoreUnavailable:
            time.sleep(0.2)
    else:
        pytest.fail("the Django client never followed the failover")
    assert ended == [True] * 5
    # Until the Sentinel makes the old primary a replica of the new one, the new one has none: a write that
    # must wait for one is refused (NotReplicated), and one that need not is written.
    with pytest.raises(StoreUnavailable, match="NotReplicated"):
        django_revocation.revoke_session(cache, secrets.token_bytes(8), 60)
    use_store_cache(settings, sentinel.url)
    django_revocation.revoke_session(caches["shared"], secrets.token_bytes(8), 60)
