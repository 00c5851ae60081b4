"""Store URLs, the Django RedisStoreCache on one Redis, and writes that wait for replicas that are not there."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse
from starlette.testclient import TestClient

from blake2sign_web.django import revocation as django_revocation
from blake2sign_web.django import sign_url
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from blake2sign_web.stores.revocation import NotReplicated, StoreLocation, StoreUnavailable, parse_store_url
from tests.redis_server import PATIENT_OPTIONS, PATIENT_TIMEOUT, RedisServer

from .single_use_apps import build_app, make_signer, write_files


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://127.0.0.1:6379/2", StoreLocation("single", "redis://127.0.0.1:6379/2")),
        ("unix:///run/redis.sock?db=1", StoreLocation("single", "unix:///run/redis.sock?db=1")),
        (
            "redis+cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002",
            StoreLocation(
                "cluster",
                "redis+cluster://10.0.0.1:7000,10.0.0.2,[::1]:7002",
                (("10.0.0.1", 7000), ("10.0.0.2", 6379), ("::1", 7002)),
            ),
        ),
        (
            "rediss+cluster://app:s%40cret@node-1:6380/",
            StoreLocation(
                "cluster",
                "rediss+cluster://app:s%40cret@node-1:6380/",
                (("node-1", 6380),),
                "",
                0,
                "app",
                "s@cret",
                True,
            ),
        ),
        (
            "redis+sentinel://:pw@s1,s2:26380/mymaster/3?sentinel_password=watch",
            StoreLocation(
                "sentinel",
                "redis+sentinel://:pw@s1,s2:26380/mymaster/3?sentinel_password=watch",
                (("s1", 26379), ("s2", 26380)),
                "mymaster",
                3,
                None,
                "pw",
                False,
                "watch",
            ),
        ),
    ],
)
def test_store_urls(url: str, expected: StoreLocation) -> None:
    assert parse_store_url(url) == expected


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("127.0.0.1:6379", "needs a scheme"),
        ("redis+cluster://", "names no host"),
        ("redis+cluster://h:1/2", "no database"),
        ("redis+cluster://h:x", "bad host:port"),
        ("redis+sentinel://h:26379", "ends with /<service>"),
        ("redis+sentinel://h:26379/name/x", "ends with /<service>"),
        ("redis+cluster://h:1?ssl_cert_reqs=none", "make the client yourself"),
    ],
)
def test_bad_store_urls_say_what_is_wrong(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_store_url(url)
    with pytest.raises(ValueError, match=problem):
        RedisStore(url)


@pytest.mark.parametrize("value", [-1, 17, 1.0, True, "1", None])
def test_wait_replicas_is_checked(value: Any) -> None:
    with pytest.raises(ValueError, match="RedisStore wait_replicas must be a number of replicas"):
        RedisStore("redis://127.0.0.1:1/0", wait_replicas=value)


# The Django backend on one Redis.


def two_backends(settings: Any, server: RedisServer, **options: Any) -> None:
    """The same Redis through Django's RedisCache ("django") and through RedisStoreCache ("ours")."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "django": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": server.url,
            "OPTIONS": PATIENT_OPTIONS,
        },
        "ours": {
            "BACKEND": "blake2sign_web.django.revocation.RedisStoreCache",
            "LOCATION": server.url,
            "OPTIONS": {**PATIENT_OPTIONS, **options},
        },
    }


def test_switching_an_alias_to_the_store_cache_keeps_every_record(settings: Any, redis_server: RedisServer) -> None:
    """Same key names and values as RedisCache: an upgrade that changes the backend resurrects nothing."""
    two_backends(settings, redis_server)
    before, after = caches["django"], caches["ours"]
    session, other = secrets.token_bytes(8), secrets.token_bytes(8)
    django_revocation.revoke_session(before, session, 60, "shop")
    django_revocation.record_generation(before, 42, revocation.new_generation(), 60, prefix="shop")
    before.set(revocation.session_key(other), 1, 60)  # as the release before key prefixes wrote it
    nonce = secrets.token_urlsafe(16)
    expires = int(time.time()) + 60
    assert django_revocation.consume_link(before, nonce, expires, "me", file_size=10)
    assert django_revocation.is_session_revoked(after, session, None, int(time.time()) - 30, prefix="shop")
    assert django_revocation.is_session_revoked(after, secrets.token_bytes(8), 42, int(time.time()) - 30, prefix="shop")
    window = time.time() + 60  # an upgrade's: the names of the release before key prefixes are read too
    assert django_revocation.is_session_revoked(
        after, other, None, int(time.time()) - 30, prefix="shop", earlier_until=window
    )
    assert not django_revocation.consume_link(after, nonce, expires, "me")
    assert django_revocation.consume_link(after, nonce, expires, "me", file_size=10, continuation=4)  # its budget
    assert django_revocation.consume_link(before, nonce, expires, "me", file_size=10, continuation=6)
    assert not django_revocation.consume_link(after, nonce, expires, "me", file_size=10, continuation=1)  # spent
    # ...and back: what the store cache writes, RedisCache reads.
    third = secrets.token_bytes(8)
    django_revocation.revoke_session(after, third, 60, "shop")
    assert django_revocation.is_session_revoked(before, third, None, int(time.time()) - 30, prefix="shop")


def test_the_store_cache_bounds_its_wait_and_checks_its_options() -> None:
    from blake2sign_web.django.revocation import RedisStoreCache

    cache = RedisStoreCache("redis+cluster://127.0.0.1:1", {})
    assert cache.timeout == revocation.DEFAULT_TIMEOUT
    with pytest.raises(ValueError, match="wait_replicas"):
        RedisStoreCache("redis://127.0.0.1:1/0", {"OPTIONS": {"wait_replicas": -1}})
    with pytest.raises(ValueError, match="socket_timeout"):
        RedisStoreCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_timeout": 0}})
    with pytest.raises(ImproperlyConfigured, match="one URL"):
        RedisStoreCache(["redis://a", "redis://b"], {})
    down = RedisStoreCache("redis://127.0.0.1:1/0", {})
    with pytest.raises(StoreUnavailable):
        django_revocation.is_session_revoked(down, b"\x01" * 8, None, 0)


# wait_replicas on a Redis without replicas: nothing is acknowledged, so nothing counts as done.

NO_REPLICA_TIMEOUT = 1.0  # the WAIT gives up after half of it


def test_starlette_a_first_use_that_no_replica_has_is_undone_and_refused(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    root = write_files(tmp_path / "served")
    durable = RedisStore(redis_server.url, timeout=NO_REPLICA_TIMEOUT, wait_replicas=1)
    link = make_signer().sign("/files/report.bin", expires_in=60, single_use=True)
    with TestClient(build_app(root, durable)) as client:
        refused = client.get(link)
    assert (refused.status_code, redis_server.command("DBSIZE")) == (503, b":0\r\n")  # not used up
    with TestClient(build_app(root, RedisStore(redis_server.url, timeout=PATIENT_TIMEOUT))) as client:
        assert client.get(link).status_code == 200  # the link was still usable


def test_starlette_a_revocation_that_no_replica_has_is_kept_and_reported(redis_server: RedisServer) -> None:
    async def scenario() -> list[str]:
        durable = RedisStore(redis_server.url, timeout=NO_REPLICA_TIMEOUT, wait_replicas=1)
        problems = []
        for write in (
            durable.revoke_session(b"\x03" * 8, 60),
            durable.log_out_everywhere(42, 60),
        ):
            with pytest.raises(NotReplicated) as raised:
                await write
            problems.append(str(raised.value))
        await durable.aclose()
        return problems

    problems = anyio.run(scenario)
    assert "0 of the 1 replicas required acknowledged it within 500 ms" in problems[0]
    assert redis.Redis.from_url(redis_server.url).dbsize() == 2  # still written on the primary: safer so


@pytest.mark.urls("tests.signed_urls.django_urls")
def test_django_a_first_use_that_no_replica_has_is_undone_and_refused(settings: Any, redis_server: RedisServer) -> None:
    two_backends(settings, redis_server, wait_replicas=1, socket_timeout=NO_REPLICA_TIMEOUT)
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "ours"}}
    link = sign_url(reverse("sig-plain", args=[1]), expires_in=60, single_use=True)
    assert Client().get(link).status_code == 503
    assert redis_server.command("DBSIZE") == b":0\r\n"
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "django"}}
    assert Client().get(link).status_code == 200
    with pytest.raises(StoreUnavailable, match="NotReplicated"):
        django_revocation.revoke_session(caches["ours"], b"\x04" * 8, 60)
