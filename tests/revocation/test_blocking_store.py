"""The core's blocking ``RedisStore`` (``blake2sign_web.stores.redis_stores``, Flask's), in a real redis-server and a
real Redis Cluster: single-use links and their continuations, link groups, the guard's calls, the store down.

Its options are checked as Starlette's store checks them (the same ``StoreOptions``): tests/revocation's
other modules cover those words; here, what a blocking client makes of the plans.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import pytest

from blake2sign_web.links.guard import LinkGuard
from blake2sign_web.links.signer import VerifiedLink, get_url_signer
from blake2sign_web.stores.redis_stores import RedisStore
from blake2sign_web.stores.revocation import NotReplicated, StoreUnavailable
from tests.redis_server import PATIENT_TIMEOUT, LoopbackCluster, RedisServer

SECRET = "a-secret-of-at-least-32-characters-for-the-tests"


def later(seconds: int = 60) -> int:
    return int(time.time()) + seconds


def now_us() -> int:
    return time.time_ns() // 1000


@pytest.fixture
def store(redis_server: RedisServer) -> Any:
    made = RedisStore(redis_server.url, timeout=PATIENT_TIMEOUT, key_prefix="tests")
    yield made
    made.close()


def test_a_single_use_link_is_used_once_and_by_its_client_only(store: RedisStore) -> None:
    nonce, expires = secrets.token_urlsafe(16), later()
    assert [store.consume_link(nonce, expires, "me"), store.consume_link(nonce, expires, "me")] == [True, False]
    assert store.consume_link(secrets.token_urlsafe(16), expires, "someone else") is True


def test_a_file_link_continues_for_its_client_within_the_file_size(store: RedisStore) -> None:
    nonce, expires = secrets.token_urlsafe(16), later()
    steps = [
        store.consume_link(nonce, expires, "me", file_size=100),
        store.consume_link(nonce, expires, "me", file_size=100, continuation=60),
        store.consume_link(nonce, expires, "me", file_size=100, continuation=60),  # past the file's size
        store.consume_link(nonce, expires, "someone else", file_size=100, continuation=1),
        store.consume_link(nonce, expires, "me", file_size=100, continuation=40),
    ]
    assert steps == [True, True, False, False, True]


def test_a_revoked_group_withdraws_the_links_issued_before_it(store: RedisStore) -> None:
    issued = now_us()
    assert store.check_link(None, later(), "me", group="course-42", issued_us=issued) == "ok"
    store.revoke_link_group("course-42", 600)
    assert store.check_link(None, later(), "me", group="course-42", issued_us=issued) == "withdrawn"
    assert store.check_link(None, later(), "me", group="course-7", issued_us=issued) == "ok"
    time.sleep(0.002)
    assert store.check_link(None, later(), "me", group="course-42", issued_us=now_us()) == "withdrawn"  # re-issued
    # at once: within the clocks' allowance (clock_skew, 5 s), refused too; signed after it, it works.
    assert store.check_link(None, later(), "me", group="course-42", issued_us=now_us() + 5_000_000) == "ok"


def test_a_link_signed_by_a_clock_ahead_is_withdrawn(store: RedisStore) -> None:
    """The signer's clock 2 s ahead of the revoking server's: a link signed 0.5 s before the revocation carries a
    time 1.5 s after it, and is refused (clock_skew applies, as to every other cross-server comparison)."""
    signed = now_us() - 500_000 + 2_000_000
    store.revoke_link_group("course-8", 600)
    assert store.check_link(None, later(), "me", group="course-8", issued_us=signed) == "withdrawn"


def test_a_grouped_single_use_link_is_checked_and_used_in_one_call(store: RedisStore) -> None:
    nonce, issued = secrets.token_urlsafe(16), now_us()
    answers = [store.check_link(nonce, later(), "me", group="g", issued_us=issued) for _ in range(2)]
    assert answers == ["ok", "used"]
    store.revoke_link_group("g", 600)
    assert store.check_link(nonce, later(), "me", group="g", issued_us=issued) == "withdrawn"  # withdrawn wins


def test_sessions_and_users_as_the_async_store_records_them(store: RedisStore) -> None:
    thirty_seconds_ago = int(time.time()) - 30
    session = secrets.token_bytes(8)
    assert store.is_revoked(session, "ada", thirty_seconds_ago, "") is False
    store.revoke_session(session, 60)
    assert store.is_revoked(session, "ada", thirty_seconds_ago, "") is True
    assert store.user_generation("ada") == ""
    generation = store.log_out_everywhere("ada", 60)
    assert store.user_generation("ada") == generation != ""
    assert store.is_revoked(secrets.token_bytes(8), "ada", thirty_seconds_ago, "") is True  # an older generation
    assert store.is_revoked(secrets.token_bytes(8), "ada", thirty_seconds_ago, generation) is False


def guard_of(store: RedisStore) -> LinkGuard:
    return LinkGuard.for_store(
        get_url_signer(SECRET, purpose="tests.blocking_store"), 410, store, lambda request: str(request), "flask"
    )


def verified(guard: LinkGuard, url: str, path: str) -> VerifiedLink:
    link = guard.check(url, None, path, "GET")
    assert isinstance(link, VerifiedLink), link
    return link


def test_the_guard_calls_its_link_methods(store: RedisStore) -> None:
    """What a Flask view does: ``guard.use(link, path, store.consume_link, request, check=store.check_link)``."""
    guard = guard_of(store)
    once = verified(guard, guard.signer.sign("/report.pdf", expires_in=60, single_use=True), "/report.pdf")
    uses = [guard.use(once, "/report.pdf", store.consume_link, "me", check=store.check_link) for _ in range(2)]
    assert uses[0] is None
    assert uses[1] is not None
    assert uses[1].status == 410
    grouped = verified(guard, guard.signer.sign("/a.mp4", expires_in=60, group="course-42"), "/a.mp4")
    assert guard.use(grouped, "/a.mp4", store.consume_link, "me", check=store.check_link) is None
    store.revoke_link_group("course-42", 600)
    refused = guard.use(grouped, "/a.mp4", store.consume_link, "me", check=store.check_link)
    assert refused is not None
    assert refused.status == 410


@pytest.mark.parametrize(("policy", "status"), [("closed", 503), ("open", None)])
def test_a_stopped_server_fails_closed_or_open(own_redis_server: RedisServer, policy: Any, status: Any) -> None:
    store = RedisStore(own_redis_server.url, timeout=0.5, on_unavailable=policy)
    guard = guard_of(store)
    link = verified(guard, guard.signer.sign("/r.pdf", expires_in=60, single_use=True), "/r.pdf")
    own_redis_server.stop()
    try:
        with pytest.raises(StoreUnavailable, match="Redis failed to consume a single-use link"):
            store.consume_link(secrets.token_urlsafe(16), later(), "me")
        with pytest.raises(StoreUnavailable, match="Redis failed to check a session"):
            store.is_revoked(b"\x01" * 8, "ada", int(time.time()), "")
        refused = guard.use(link, "/r.pdf", store.consume_link, "me", check=store.check_link)
        assert (refused and refused.status) == status
    finally:
        own_redis_server.start()
    assert store.fails_open is (policy == "open")


def test_a_write_no_replica_acknowledges_is_not_replicated(store: RedisStore, redis_server: RedisServer) -> None:
    durable = RedisStore(redis_server.url, timeout=0.2, wait_replicas=1)
    nonce = secrets.token_urlsafe(16)
    with pytest.raises(NotReplicated, match="0 of the 1 replicas"):  # its own words, not wrapped
        durable.consume_link(nonce, later(), "me")
    assert store.consume_link(nonce, later(), "me") is True  # the refused first use was undone


def test_the_wrong_kind_of_client_is_refused_at_once() -> None:
    from redis.asyncio import Redis

    with pytest.raises(TypeError, match=r"needs a redis\.Redis, a redis\.RedisCluster or a URL"):
        RedisStore(Redis())
    with pytest.raises(ValueError, match="RedisStore timeout must be"):
        RedisStore("redis://127.0.0.1:1/0", timeout=0)
    assert repr(RedisStore("redis://127.0.0.1:1/0", key_prefix="x")).startswith("RedisStore(timeout=0.5, ")


def test_on_a_cluster_links_and_sessions_work(redis_cluster: LoopbackCluster) -> None:
    store = RedisStore(redis_cluster.url, timeout=PATIENT_TIMEOUT, key_prefix="tests")
    assert store.is_cluster
    nonce, expires = secrets.token_urlsafe(16), later()
    steps = [
        store.consume_link(nonce, expires, "me", file_size=100),
        store.consume_link(nonce, expires, "me", file_size=100, continuation=60),
        store.consume_link(nonce, expires, "me", file_size=100, continuation=60),
    ]
    assert steps == [True, True, False]
    issued = now_us()
    store.revoke_link_group("g", 600)
    assert store.check_link(secrets.token_urlsafe(16), later(), "me", group="g", issued_us=issued) == "withdrawn"
    session = secrets.token_bytes(8)
    store.revoke_session(session, 60)
    assert store.is_revoked(session, "ada", int(time.time()) - 30, "") is True
    store.close()
