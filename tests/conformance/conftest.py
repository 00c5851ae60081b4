"""The conformance suite's fixtures: a real redis-server for revocation, shared by the suite's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_server import RedisServer, redis_server_fixture


@pytest.fixture(scope="session")
def conformance_redis() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


@pytest.fixture
def redis_url(conformance_redis: RedisServer) -> str:
    """An emptied redis-server's URL: each test starts with no records."""
    conformance_redis.start()
    conformance_redis.flush()
    return conformance_redis.url
