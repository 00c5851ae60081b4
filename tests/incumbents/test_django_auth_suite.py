"""Django's own ``auth_tests`` (from the installed Django's sdist) with this project's engine and revocation on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.redis_server import RedisServer, redis_server_fixture

from .runner import (
    DJANGO_AUTH_OWN_SKIPS,
    DJANGO_AUTH_SKIPS,
    SuiteRun,
    check,
    django_version,
    run_django_auth_suite,
    skips_for,
)

KEY_PREFIX = "auth-tests"


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


@pytest.fixture(scope="module")
def suite(server: RedisServer) -> SuiteRun:
    return run_django_auth_suite("revocation", server.url, KEY_PREFIX)


def test_djangos_auth_tests_pass_with_revocation(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_AUTH_SKIPS, django_version())
    check(suite, "auth_tests", "auth_tests (REVOCATION_CACHE, real Redis)", skips, DJANGO_AUTH_OWN_SKIPS)


def test_the_auth_tests_ended_sessions_in_redis(suite: SuiteRun, server: RedisServer) -> None:
    """The run had revocation on: logouts and password changes wrote their records, under the key prefix."""
    names = [name.decode() for name in redis.Redis.from_url(server.url).keys("*")]
    ours = [name for name in names if f":{KEY_PREFIX}:" in name]
    assert ours == names, f"records outside the key prefix {KEY_PREFIX!r}: {sorted(set(names) - set(ours))[:5]}"
    assert any(f"{KEY_PREFIX}:sid:" in name for name in names), f"no session was ended in Redis: {names[:5]}"
    assert any(f"{KEY_PREFIX}:user:" in name for name in names), f"no user was logged out everywhere: {names[:5]}"
