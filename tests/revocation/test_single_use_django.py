"""Single-use links in Django, consumed in a real redis-server through Django's RedisCache."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import reverse

from blake2sign_web.django import sign_url
from tests.django_links import use_served_storage, use_single_use_cache
from tests.redis_server import FROZEN_OPTIONS, RedisServer

from .single_use_apps import CONTENT, write_files

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")


@pytest.fixture
def redis_links(settings: Any, redis_server: RedisServer) -> RedisServer:
    use_single_use_cache(settings, redis_server)
    return redis_server


@pytest.fixture
def files(settings: Any, tmp_path: Path) -> Path:
    root = write_files(tmp_path / "served")
    use_served_storage(settings, root)
    return root


def once(name: str, *args: Any) -> str:
    return sign_url(reverse(name, args=args), expires_in=60, single_use=True)


@pytest.mark.parametrize("name", ["sig-async", "sig-class", "sig-async-class", "sig-echo"])
def test_first_use_succeeds_second_is_gone(redis_links: RedisServer, name: str) -> None:
    link = once(name)
    client = Client()
    assert client.get(link).status_code == 200
    second = client.get(link)
    assert (second.status_code, second.content) == (410, b"This link has already been used.")


def test_a_link_used_where_the_clock_is_fast_stays_used_where_it_is_slow(
    redis_links: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record must outlive the link by every clock that verifies it, not only by the one that wrote it."""
    from blake2sign_web.django import revocation as django_revocation

    link = sign_url(reverse("sig-echo"), expires_in=3, single_use=True)  # expires in 2 to 3 s
    with monkeypatch.context() as patch:
        patch.setattr(django_revocation, "time", SimpleNamespace(time=lambda: time.time() + 5))  # 5 s ahead
        assert Client().get(link).status_code == 200
    time.sleep(1.2)  # the link is still valid here
    second = Client(HTTP_USER_AGENT="someone else").get(link)
    assert second.status_code == 410


def test_record_lives_as_long_as_the_link_and_the_clocks_margin(redis_links: RedisServer) -> None:
    import redis

    link = sign_url(reverse("sig-echo"), expires_in=120, single_use=True)
    assert Client().get(link).status_code == 200
    (key,) = redis.Redis.from_url(redis_links.url).keys("*once*")
    ttl = redis.Redis.from_url(redis_links.url).ttl(key)
    assert 110 + 60 <= ttl <= 120 + 60  # RECORD_MARGIN: 60 s


def test_used_status_follows_expired_status(settings: Any, redis_server: RedisServer) -> None:
    use_single_use_cache(settings, redis_server, EXPIRED_STATUS=403)
    link = once("sig-plain", 1)
    assert [Client().get(link).status_code for _ in range(2)] == [200, 403]


def test_range_continuation_by_the_same_client_only(redis_links: RedisServer, files: Path) -> None:
    link = once("sig-files", "report.bin")
    client = Client(HTTP_USER_AGENT="downloader")
    first = client.get(link, HTTP_RANGE="bytes=0-9")
    rest = client.get(link, HTTP_RANGE="bytes=10-")
    head = client.head(link)
    whole_again = client.get(link)
    other = Client(HTTP_USER_AGENT="forwarded").get(link, HTTP_RANGE="bytes=10-")
    assert (first.status_code, b"".join(first.streaming_content)) == (206, CONTENT[:10])
    assert (rest.status_code, b"".join(rest.streaming_content)) == (206, CONTENT[10:])
    assert head.status_code == 200
    assert whole_again.status_code == 410
    assert other.status_code == 410


def test_ordinary_links_are_untouched(redis_links: RedisServer) -> None:
    link = sign_url(reverse("sig-plain", args=[1]), expires_in=60)
    assert [Client().get(link).status_code for _ in range(2)] == [200, 200]
    assert redis_links.command("DBSIZE") == b":0\r\n"


def test_signing_single_use_needs_the_cache_and_an_expiry(settings: Any, redis_links: RedisServer) -> None:
    with pytest.raises(ValueError, match="needs an expiry"):
        sign_url("/a", single_use=True)
    settings.BLAKE2SIGN_WEB = {}
    with pytest.raises(ImproperlyConfigured, match="SINGLE_USE_CACHE"):
        sign_url("/a", expires_in=60, single_use=True)


def test_single_use_link_without_cache_is_refused(
    settings: Any, redis_links: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    link = once("sig-plain", 1)
    settings.BLAKE2SIGN_WEB = {}
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.signed_urls"):
        assert Client().get(link).status_code == 403
    assert "SINGLE_USE_CACHE is not configured" in caplog.text


def test_cache_down_fails_closed_then_recovers(settings: Any, own_redis_server: RedisServer) -> None:
    use_single_use_cache(settings, own_redis_server)
    client = Client()
    assert client.get(once("sig-plain", 1)).status_code == 200
    own_redis_server.stop()
    down = client.get(once("sig-async"))
    plain = client.get(sign_url(reverse("sig-plain", args=[2]), expires_in=60))
    own_redis_server.start()
    assert client.get(once("sig-plain", 3)).status_code == 200
    assert (down.status_code, down.content) == (503, b"This link cannot be checked right now; try again shortly.")
    assert plain.status_code == 200


def test_hung_cache_fails_closed_within_its_socket_timeout(settings: Any, own_redis_server: RedisServer) -> None:
    use_single_use_cache(settings, own_redis_server, FROZEN_OPTIONS)
    client = Client()
    assert client.get(once("sig-plain", 1)).status_code == 200
    own_redis_server.pause()
    try:
        frozen = client.get(once("sig-plain", 2))
    finally:
        own_redis_server.resume()
    assert frozen.status_code == 503


def test_cache_down_fails_open_when_asked(
    settings: Any, own_redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    use_single_use_cache(settings, own_redis_server, SINGLE_USE_UNAVAILABLE="open")
    link = once("sig-plain", 1)
    own_redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.signed_urls"):
        assert [Client().get(link).status_code for _ in range(2)] == [200, 200]
    assert "unchecked (SINGLE_USE_UNAVAILABLE='open')" in caplog.text


def custom_client(request: Any) -> str:
    return str(request.headers.get("X-Device", ""))


def test_client_function_from_settings(settings: Any, redis_server: RedisServer, files: Path) -> None:
    use_single_use_cache(
        settings, redis_server, SINGLE_USE_CLIENT="tests.revocation.test_single_use_django.custom_client"
    )
    link = once("sig-files", "report.bin")
    assert Client(HTTP_X_DEVICE="a").get(link).status_code == 200
    assert Client(HTTP_X_DEVICE="a", HTTP_USER_AGENT="changed").head(link).status_code == 200
    assert Client(HTTP_X_DEVICE="b").head(link).status_code == 410


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"SINGLE_USE_CACHE": "missing"}, "SINGLE_USE_CACHE'] must be None or an alias in CACHES"),
        ({"SINGLE_USE_UNAVAILABLE": "refuse"}, "SINGLE_USE_UNAVAILABLE'] must be 'closed'"),
        ({"SINGLE_USE_CLIENT": "no.such.function"}, "SINGLE_USE_CLIENT'] cannot be imported"),
        ({"SINGLE_USE_CLIENT": 42}, "SINGLE_USE_CLIENT'] must be a function"),
    ],
)
def test_bad_settings_are_system_check_errors(settings: Any, options: dict[str, Any], message: str) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": options}
    errors = [e for e in run_checks() if e.id == "blake2sign_web.E008"]
    assert len(errors) == 1
    assert message in errors[0].msg


def test_template_tag_signs_single_use_links(redis_links: RedisServer) -> None:
    from django.template import Context, Template

    rendered = Template("{% load blake2sign %}{% signed_url 'sig-plain' 5 expires_in=60 single_use=True %}").render(
        Context()
    )
    link = rendered.replace("&amp;", "&")
    assert "once=" in link
    client = Client()
    assert [client.get(link).status_code for _ in range(2)] == [200, 410]
