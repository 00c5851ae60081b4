"""A real redis-server for the revocation and single-use tests (see tests/redis_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_server import RedisServer, redis_server_fixture


@pytest.fixture(scope="session")
def shared_redis() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


@pytest.fixture
def redis_server(shared_redis: RedisServer) -> RedisServer:
    """The shared server, emptied: each test starts with no records."""
    shared_redis.start()  # in case a test left it stopped
    shared_redis.flush()
    return shared_redis


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A server of this test's own, to stop, freeze and restart without disturbing the others."""
    yield from redis_server_fixture()
