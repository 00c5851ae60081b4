"""Link groups in Django, revoked and checked in a real redis-server: RedisCache and RedisStoreCache."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse

from blake2sign_web.django import sign_url
from blake2sign_web.django.revocation import arevoke_link_group, revoke_link_group
from blake2sign_web.django.signed_urls import get_signer
from tests.django_links import use_served_storage, use_single_use_cache
from tests.redis_server import PATIENT_OPTIONS, PATIENT_TIMEOUT, LoopbackCluster, RedisServer

from .single_use_apps import CONTENT, write_files

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")

WITHDRAWN = b"This link has been withdrawn."
BACKENDS = ("django.core.cache.backends.redis.RedisCache", "blake2sign_web.django.revocation.RedisStoreCache")


def use_cache(settings: Any, location: str, backend: str = BACKENDS[0], **options: Any) -> None:
    """SIGNED_URLS' SINGLE_USE_CACHE on ``location`` with ``backend``; ``options`` go to SIGNED_URLS."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "links": {"BACKEND": backend, "LOCATION": location, "OPTIONS": PATIENT_OPTIONS},
    }
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": "links", **options}}


@pytest.fixture(params=BACKENDS, ids=["RedisCache", "RedisStoreCache"])
def backend(request: pytest.FixtureRequest, settings: Any, redis_server: RedisServer, tmp_path: Path) -> str:
    use_cache(settings, redis_server.url, request.param)
    root = write_files(tmp_path / "served")
    (root / "videos").mkdir()
    (root / "videos" / "seg-1.ts").write_bytes(b"segment one")
    use_served_storage(settings, root)
    return str(request.param)


def grouped(name: str, *args: Any, group: str = "course-42", **options: Any) -> str:
    return sign_url(reverse(name, args=args), expires_in=600, group=group, **options)


@pytest.mark.parametrize("name", ["sig-echo", "sig-async", "sig-class", "sig-async-class"])
def test_revoking_a_group_withdraws_its_links_issued_before(backend: str, name: str) -> None:
    before, other = grouped(name), grouped(name, group="course-43")
    client = Client()
    assert [client.get(link).status_code for link in (before, before, other)] == [200, 200, 200]
    revoke_link_group("course-42", 3600)
    at_once = grouped(name)  # re-issued within the clocks' allowance (5 s): refused too
    refused = client.get(before)
    assert (refused.status_code, refused.content) == (410, WITHDRAWN)
    assert [client.get(link).status_code for link in (at_once, other)] == [410, 200]


def test_files_and_folders(backend: str) -> None:
    download = grouped("sig-files", "report.bin")
    prefix = reverse("sig-files", args=["videos/seg-1.ts"]).removesuffix("seg-1.ts")
    segment = get_signer().sign_prefix(prefix, expires_in=600, group="course-42").link("seg-1.ts")
    client = Client()
    whole, part = client.get(download), client.get(segment)
    assert (whole.status_code, b"".join(whole.streaming_content)) == (200, CONTENT)  # type: ignore[attr-defined]
    assert part.status_code == 200
    revoke_link_group("course-42", 3600)
    assert [client.get(link).content for link in (download, segment)] == [WITHDRAWN, WITHDRAWN]


def test_grouped_and_single_use(backend: str) -> None:
    once, withdrawn = grouped("sig-echo", single_use=True), grouped("sig-echo", single_use=True)
    download = grouped("sig-files", "report.bin", single_use=True)
    client = Client()
    assert [client.get(once).status_code, client.get(once).status_code] == [200, 410]
    start = client.get(download, headers={"range": "bytes=0-99"})
    rest = client.get(download, headers={"range": "bytes=100-"})
    assert (start.status_code, rest.status_code) == (206, 206)
    assert b"".join(rest.streaming_content) == CONTENT[100:]  # type: ignore[attr-defined]
    revoke_link_group("course-42", 3600)
    assert client.get(withdrawn).content == WITHDRAWN
    assert client.get(download, headers={"range": "bytes=0-9"}).content == WITHDRAWN


def test_the_async_revocation(backend: str) -> None:
    link = grouped("sig-echo")
    anyio.run(arevoke_link_group, "course-42", 60)
    assert Client().get(link).status_code == 410


def test_the_withdrawn_status_follows_expired_status(settings: Any, redis_server: RedisServer) -> None:
    use_single_use_cache(settings, redis_server, EXPIRED_STATUS=403)
    link = grouped("sig-echo")
    revoke_link_group("course-42", 60)
    assert Client().get(link).status_code == 403


def reads_of(admin: redis.Redis, send: Any) -> int:
    """The read events the server processed for ``send()``: one for each request that reached it."""
    admin.config_resetstat()
    send()
    return int(admin.info("stats")["total_reads_processed"]) - 1  # less the INFO's own


@pytest.mark.parametrize(("backend", "round_trips"), [(BACKENDS[1], 1), (BACKENDS[0], 2)])
def test_round_trips(settings: Any, own_redis_server: RedisServer, backend: str, round_trips: int) -> None:
    """RedisStoreCache reads the group and uses the link up in one round trip; RedisCache has no pipeline in its
    API: a read, then the use."""
    use_cache(settings, own_redis_server.url, backend)
    admin = redis.Redis.from_url(own_redis_server.url)
    admin.ping()
    client = Client()
    assert client.get(grouped("sig-echo", single_use=True)).status_code == 200  # connects
    link = grouped("sig-echo", single_use=True)
    assert reads_of(admin, lambda: client.get(link)) == round_trips
    assert reads_of(admin, lambda: client.get(grouped("sig-echo"))) == 1


def test_grouped_links_need_the_single_use_cache(settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    settings.BLAKE2SIGN_WEB = {}
    with pytest.raises(ImproperlyConfigured, match=r"sign_url\(group=...\) needs .*SINGLE_USE_CACHE"):
        sign_url(reverse("sig-echo"), expires_in=60, group="g")
    with pytest.raises(ImproperlyConfigured, match=r"revoke_link_group\(\) needs .*SINGLE_USE_CACHE"):
        revoke_link_group("g", 60)
    link = get_signer().sign(reverse("sig-echo"), expires_in=60, group="g")  # signed elsewhere
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.signed_urls"):
        assert Client().get(link).status_code == 403
    assert "refused grouped URL for '/echo/': SINGLE_USE_CACHE is not configured" in caplog.text


@pytest.mark.parametrize("policy", ["closed", "open"])
def test_cache_down(
    settings: Any, own_redis_server: RedisServer, policy: str, caplog: pytest.LogCaptureFixture
) -> None:
    use_single_use_cache(settings, own_redis_server, SINGLE_USE_UNAVAILABLE=policy)
    links = [grouped("sig-echo"), grouped("sig-async", single_use=True)]
    own_redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.signed_urls"):
        statuses = [Client().get(link).status_code for link in links]
    assert statuses == ([503, 503] if policy == "closed" else [200, 200])
    if policy == "open":
        assert "accepted grouped URL for '/echo/' unchecked (SINGLE_USE_UNAVAILABLE='open')" in caplog.text
    else:
        assert "refused grouped URL for '/echo/': the cache failed to check a link group" in caplog.text


def test_on_the_cluster(settings: Any, redis_cluster: LoopbackCluster) -> None:
    """RedisStoreCache on a cluster: the group's record and the link's use in one cluster pipeline."""
    use_cache(settings, redis_cluster.url, BACKENDS[1])
    settings.CACHES["links"]["OPTIONS"] = {"socket_timeout": PATIENT_TIMEOUT}
    groups = [f"course-{n}" for n in range(8)]
    links = {group: grouped("sig-echo", group=group, single_use=True) for group in groups}
    client = Client()
    assert [client.get(link).status_code for link in links.values()] == [200] * len(groups)
    assert [client.get(link).status_code for link in links.values()] == [410] * len(groups)
    fresh = {group: grouped("sig-echo", group=group, single_use=True) for group in groups}
    for group in groups[::2]:
        revoke_link_group(group, 60)
    answers = {group: client.get(link).status_code for group, link in fresh.items()}
    assert answers == {group: 410 if n % 2 == 0 else 200 for n, group in enumerate(groups)}
