"""Single-use links in Starlette and FastAPI, consumed in a real redis-server."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
import redis
from starlette.testclient import TestClient

from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from tests.redis_server import FROZEN_TIMEOUT, RedisServer, patient_store

from .single_use_apps import CONTENT, build_app, build_fastapi, make_signer, write_files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_files(tmp_path / "served")


def once(path: str, expires_in: int = 60) -> str:
    return make_signer().sign(path, expires_in=expires_in, single_use=True)


def test_first_use_succeeds_second_is_gone(redis_server: RedisServer, root: Path) -> None:
    link = once("/action")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        first = client.get(link)
        second = client.get(link)
    assert (first.status_code, first.text) == (200, "done")
    assert (second.status_code, second.text) == (410, "This link has already been used.")


def test_each_link_is_its_own(redis_server: RedisServer, root: Path) -> None:
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert [client.get(once("/action")).status_code for _ in range(3)] == [200, 200, 200]


def test_used_status_follows_expired_status(redis_server: RedisServer, root: Path) -> None:
    link = once("/action")
    with TestClient(build_app(root, patient_store(redis_server), expired_status=403)) as client:
        assert client.get(link).status_code == 200
        assert client.get(link).status_code == 403


def test_record_lives_as_long_as_the_link_and_the_clocks_margin(redis_server: RedisServer, root: Path) -> None:
    link = once("/action", expires_in=120)
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert client.get(link).status_code == 200
    nonce = make_signer().verify_link(link).nonce
    assert nonce is not None
    ttl = redis.Redis.from_url(redis_server.url).ttl(revocation.single_use_key(nonce))
    assert 110 + 60 <= ttl <= 120 + 60  # type: ignore[operator]  # RECORD_MARGIN: 60 s


def test_a_link_used_where_the_clock_is_fast_stays_used_where_it_is_slow(redis_server: RedisServer, root: Path) -> None:
    """The record must outlive the link by every clock that verifies it, not only by the one that wrote it."""
    link = once("/action", expires_in=3)  # expires in 2 to 3 s
    fast = RedisStore(redis_server.url, timeout=10, clock=lambda: time.time() + 5)  # a server 5 s ahead
    with TestClient(build_app(root, fast)) as ahead:
        assert ahead.get(link).status_code == 200
    time.sleep(1.2)  # the link is still valid here
    with TestClient(build_app(root, patient_store(redis_server))) as other_server:
        second = other_server.get(link, headers={"user-agent": "someone else"})
    assert (second.status_code, second.text) == (410, "This link has already been used.")


def test_tampered_nonce_is_refused_before_the_store(redis_server: RedisServer, root: Path) -> None:
    link = once("/action")
    nonce = make_signer().verify_link(link).nonce
    assert nonce is not None
    forged = link.replace(nonce, "A" * len(nonce))
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert client.get(forged).status_code == 403
    assert redis_server.command("DBSIZE") == b":0\r\n"  # nothing was written for a forged link


def test_expired_single_use_link_is_gone_without_a_store_write(redis_server: RedisServer, root: Path) -> None:
    signer = make_signer()
    signer._clock = lambda: 1_000_000_000.0  # signed long ago
    link = signer.sign("/action", expires_in=60, single_use=True)
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        response = client.get(link)
    assert (response.status_code, response.text) == (410, "This link has expired.")
    assert redis_server.command("DBSIZE") == b":0\r\n"


def test_endpoint_without_store_refuses_single_use_links(
    redis_server: RedisServer, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        TestClient(build_app(root, patient_store(redis_server))) as client,
        caplog.at_level(logging.ERROR),
    ):
        assert client.get(once("/storeless")).status_code == 403
        assert client.get(make_signer().sign("/storeless", expires_in=60)).status_code == 200
    assert "no single_use store" in caplog.text


def test_ordinary_links_pass_a_single_use_endpoint_without_store_traffic(redis_server: RedisServer, root: Path) -> None:
    link = make_signer().sign("/action", expires_in=60)
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert [client.get(link).status_code for _ in range(2)] == [200, 200]
    assert redis_server.command("DBSIZE") == b":0\r\n"


def test_the_same_client_may_continue_a_download_with_range(redis_server: RedisServer, root: Path) -> None:
    link = once("/files/report.bin")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        first = client.get(link, headers={"range": "bytes=0-99"})
        rest = client.get(link, headers={"range": "bytes=100-"})
        head = client.head(link)
        again_whole = client.get(link)
    assert (first.status_code, first.content) == (206, CONTENT[:100])
    assert (rest.status_code, rest.content) == (206, CONTENT[100:])
    assert head.status_code == 200
    assert again_whole.status_code == 410  # a whole second download is a second use


def test_another_client_cannot_continue(redis_server: RedisServer, root: Path) -> None:
    link = once("/files/report.bin")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert client.get(link).status_code == 200
        other = client.get(link, headers={"range": "bytes=1-", "user-agent": "someone-else"})
        other_head = client.head(link, headers={"user-agent": "someone-else"})
    assert other.status_code == 410
    assert other_head.status_code == 410


def test_fastapi_dependency(redis_server: RedisServer) -> None:
    link = once("/report")
    with TestClient(build_fastapi(patient_store(redis_server))) as client:
        assert client.get(link).json() == {"report": "ok"}
        second = client.get(link)
    assert (second.status_code, second.json()) == (410, {"detail": "This link has already been used."})


def test_redis_down_fails_closed_then_recovers(own_redis_server: RedisServer, root: Path) -> None:
    store = patient_store(own_redis_server)
    with TestClient(build_app(root, store)) as client:
        assert client.get(once("/action")).status_code == 200
        own_redis_server.stop()
        down = client.get(once("/action"))
        plain = client.get(make_signer().sign("/action", expires_in=60))
        own_redis_server.start()
        assert client.get(once("/action")).status_code == 200
    assert (down.status_code, down.text) == (503, "This link cannot be checked right now; try again shortly.")
    assert plain.status_code == 200  # links that are not single-use need no store


def test_redis_down_fails_open_when_asked(
    own_redis_server: RedisServer, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = patient_store(own_redis_server, on_unavailable="open")
    link = once("/action")
    own_redis_server.stop()
    with TestClient(build_app(root, store)) as client, caplog.at_level(logging.ERROR):
        assert [client.get(link).status_code for _ in range(2)] == [200, 200]
    assert "unchecked (on_unavailable='open')" in caplog.text


def test_hung_redis_answers_503_within_the_timeout(own_redis_server: RedisServer, root: Path) -> None:
    """SIGSTOP: the kernel accepts connections but nothing answers; without a timeout this would hang."""
    store = RedisStore(own_redis_server.url, timeout=FROZEN_TIMEOUT)
    with TestClient(build_app(root, store)) as client:
        assert client.get(once("/action")).status_code == 200  # connected before the freeze
        own_redis_server.pause()
        try:
            frozen = client.get(once("/action"))
        finally:
            own_redis_server.resume()
        assert client.get(once("/action")).status_code == 200
    assert frozen.status_code == 503


def test_hung_redis_with_a_client_without_timeouts(own_redis_server: RedisServer, root: Path) -> None:
    """A redis.asyncio client passed in with no socket timeout is still bounded by the store's timeout."""
    from redis.asyncio import Redis

    store = RedisStore(Redis.from_url(own_redis_server.url), timeout=FROZEN_TIMEOUT)
    with TestClient(build_app(root, store)) as client:
        own_redis_server.pause()
        try:
            frozen = client.get(once("/action"))
        finally:
            own_redis_server.resume()
    assert frozen.status_code == 503


def test_store_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="on_unavailable must be 'closed'"):
        RedisStore("redis://127.0.0.1:1/0", on_unavailable="refuse")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a number of seconds"):
        RedisStore("redis://127.0.0.1:1/0", timeout=0)
    with pytest.raises(TypeError, match=r"redis\.asyncio\.Redis, a redis\.asyncio\.RedisCluster or a URL"):
        RedisStore(object())  # type: ignore[arg-type]
