"""Real redis-servers for the revocation and single-use tests (see tests/redis_server.py): one, and a cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_server import LoopbackCluster, RedisServer, redis_cluster_fixture, redis_server_fixture


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


@pytest.fixture(scope="session")
def shared_cluster() -> Iterator[LoopbackCluster]:
    """One Redis Cluster (three primaries, three replicas) for the whole run: it takes seconds to make."""
    yield from redis_cluster_fixture()


@pytest.fixture
def redis_cluster(shared_cluster: LoopbackCluster) -> LoopbackCluster:
    """The shared cluster, whole again (a test may have killed, frozen or moved nodes) and emptied."""
    for node in shared_cluster.nodes:
        node.resume()
        node.start()
    shared_cluster.wait_healthy()
    shared_cluster.flush()
    return shared_cluster
