"""The records' commands sent to Redis, one server or a cluster, blocking (Django) or ``redis.asyncio``.

What both stores need of Redis beyond one command: a write and its ``WAIT`` on one connection
to the primary serving its key (``WAIT`` counts the replicas that have everything that
connection wrote), ``MGET`` of keys in several cluster slots at once, a plan's ``Batch`` (commands on
keys of any slots) in one round trip, and a cluster's
redirections (MOVED, ASK, TRYAGAIN) followed on one connection. ``bounded`` is the deadline of a
``redis.asyncio`` call, and turns its failures into ``StoreUnavailable``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from .base import StoreUnavailable, logger, wait_milliseconds
from .plans import Batch

if TYPE_CHECKING:
    from redis.asyncio import RedisCluster

    from .plans import Replicas, Step


def is_async_cluster(client: object) -> bool:
    """Whether ``client`` is a ``redis.asyncio.RedisCluster`` (its commands go through ``cluster_execute``)."""
    try:
        from redis.asyncio.cluster import RedisCluster
    except ImportError:  # pragma: no cover - redis is this module's dependency
        return False
    return isinstance(client, RedisCluster)


@asynccontextmanager
async def bounded(timeout: float, action: str) -> AsyncIterator[None]:
    """At most ``timeout`` seconds, by anyio's deadline (docs/revocation.md says why not asyncio's); any failure of
    the store becomes StoreUnavailable."""
    import anyio  # the redis extra brings it; here: a Django site never calls this
    from redis.exceptions import RedisClusterException, RedisError

    deadline: anyio.CancelScope | None = None
    try:
        with anyio.fail_after(timeout) as deadline:
            yield
    except (RedisError, RedisClusterException, OSError) as error:  # OSError: TimeoutError from fail_after
        raise StoreUnavailable(f"Redis failed to {action}: {type(error).__name__}") from None
    except anyio.get_cancelled_exc_class():
        # Python before 3.11: redis-py can raise a new CancelledError while the deadline cancels it (awaiting
        # in an error handler), which fail_after does not recognise as its own. It is the deadline's when it
        # fired and no enclosing scope is cancelled or past its own deadline (anyio re-delivers theirs).
        if (
            deadline is not None
            and deadline.cancel_called
            and anyio.current_effective_deadline() > anyio.current_time()
        ):
            raise StoreUnavailable(f"Redis failed to {action}: TimeoutError") from None
        raise


def mget(client: Any, is_cluster: bool, keys: list[str]) -> Awaitable[list[Any]]:
    """The values of ``keys``: one ``MGET``, or on a cluster one per slot (``cluster_mget``)."""
    return cluster_mget(client, keys) if is_cluster else client.mget(keys)


async def send_async(client: Any, is_cluster: bool, replicas: Replicas, step: Step | Batch) -> Any:
    """A plan's step (``stores.plans``) on a ``redis.asyncio`` client: a write with its ``WAIT``, or one command (a
    ``Batch``: ``batch_async``)."""
    if isinstance(step, Batch):
        return await batch_async(client, is_cluster, replicas, step.steps)
    if step.write:
        return await write_async(client, is_cluster, step.key, step.command, replicas.wanted, replicas.timeout)
    return (await run_async(client, is_cluster, step.key, step.command))[0]


def send_sync(
    client: Any, is_cluster: bool, replicas: Replicas, pause: Callable[[float], None], step: Step | Batch
) -> Any:
    """``send_async`` on a blocking redis-py client; ``pause``: how to wait before a TRYAGAIN is tried again."""
    if isinstance(step, Batch):
        return batch_sync(client, is_cluster, replicas, pause, step.steps)
    if step.write:
        return write_sync(client, is_cluster, step.key, step.command, replicas.wanted, replicas.timeout, pause)
    return client.execute_command(*step.command)


def _commands(step: Step, replicas: Replicas) -> tuple[tuple[Any, ...], ...]:
    """A step's commands: with its ``WAIT`` when it writes and replicas must acknowledge it."""
    if step.write and replicas.wanted:
        return (step.command, _wait(replicas.wanted, replicas.timeout))
    return (step.command,)


def _replies(steps: tuple[Step, ...], replies: list[Any], counts: list[int]) -> list[Any]:
    """Each step's reply from a pipeline's flat ``replies`` (``counts``: commands per step): a write's is (reply,
    replicas that acknowledged it), as ``write_async`` gives it."""
    answers, at = [], 0
    for step, count in zip(steps, counts, strict=True):
        mine, at = replies[at : at + count], at + count
        answers.append((mine[0], int(mine[1]) if count > 1 else 0) if step.write else mine[0])
    return answers


async def batch_async(client: Any, is_cluster: bool, replicas: Replicas, steps: tuple[Step, ...]) -> list[Any]:
    """A ``Batch`` in one round trip: one pipeline, or on a cluster one request per node (``cluster_execute``,
    each step on the primary serving its key, a write with its ``WAIT``)."""
    batches = [_commands(step, replicas) for step in steps]
    counts = [len(commands) for commands in batches]
    if is_cluster:
        per_step = await cluster_execute(client, [(step.key, b) for step, b in zip(steps, batches, strict=True)])
        return _replies(steps, [reply for replies in per_step for reply in replies], counts)
    async with client.pipeline(transaction=False) as pipe:
        for commands in batches:
            for command in commands:
                pipe.execute_command(*command)
        return _replies(steps, list(await pipe.execute()), counts)


def batch_sync(
    client: Any, is_cluster: bool, replicas: Replicas, pause: Callable[[float], None], steps: tuple[Step, ...]
) -> list[Any]:
    """``batch_async`` on a blocking client. On a cluster with replica waits (a ``WAIT`` must follow its write on
    one connection, which redis-py's cluster pipeline does not keep), one step after the other."""
    if is_cluster and replicas.wanted:
        return [send_sync(client, True, replicas, pause, step) for step in steps]
    batches = [_commands(step, replicas) for step in steps]
    # redis-py's cluster pipeline sends each node its commands before it reads a reply: one round trip.
    with client.pipeline() if is_cluster else client.pipeline(transaction=False) as pipe:
        for commands in batches:
            for command in commands:
                pipe.execute_command(*command)
        return _replies(steps, list(pipe.execute()), [len(commands) for commands in batches])


async def run_async(client: Any, is_cluster: bool, key: str, *commands: tuple[Any, ...]) -> list[Any]:
    """``commands`` (on ``key``'s slot) in one request to the node serving it: their replies."""
    if not is_cluster:
        if len(commands) == 1:
            return [await client.execute_command(*commands[0])]
        async with client.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())
    (replies,) = await cluster_execute(client, [(key, commands)])
    return replies


async def write_async(
    client: Any, is_cluster: bool, key: str, command: tuple[Any, ...], wait_replicas: int, store_timeout: float
) -> tuple[Any, int]:
    """Run ``command`` (it writes ``key``): its reply, and how many replicas acknowledged it.

    Without ``wait_replicas``: the reply alone (the count is then 0, and nobody asks). With it:
    the command and ``WAIT`` (half of ``store_timeout``) in one request, on one connection.
    """
    if not wait_replicas:
        (reply,) = await run_async(client, is_cluster, key, command)
        return reply, 0
    reply, acknowledged = await run_async(client, is_cluster, key, command, _wait(wait_replicas, store_timeout))
    return reply, int(acknowledged)


def write_sync(
    client: Any,
    is_cluster: bool,
    name: str,
    command: tuple[Any, ...],
    wait_replicas: int,
    store_timeout: float,
    pause: Callable[[float], None],
) -> tuple[Any, int]:
    """``write_async`` for a blocking redis-py client; ``pause``: how to wait before a TRYAGAIN is tried again."""
    if not wait_replicas:
        return client.execute_command(*command), 0
    wait = _wait(wait_replicas, store_timeout)
    if not is_cluster:
        with client.pipeline(transaction=False) as pipe:
            pipe.execute_command(*command)
            pipe.execute_command(*wait)
            reply, acknowledged = pipe.execute()
        return reply, int(acknowledged)
    return _cluster_write_and_wait(client, name, command, wait, pause)


def _wait(replicas: int, timeout: float) -> tuple[Any, ...]:
    return ("WAIT", replicas, wait_milliseconds(timeout))


async def cluster_mget(cluster: RedisCluster, keys: list[str]) -> list[Any]:
    """The values of ``keys``: one MGET per slot, all sent at once, one request per node."""
    slots: dict[int, list[str]] = {}
    for key in keys:
        slots.setdefault(cluster.keyslot(key), []).append(key)
    groups = list(slots.values())
    replies = await cluster_execute(cluster, [(group[0], (("MGET", *group),)) for group in groups])
    found = {
        key: value
        for group, (values,) in zip(groups, replies, strict=True)
        for key, value in zip(group, values, strict=True)
    }
    return [found[key] for key in keys]


async def cluster_execute(
    cluster: RedisCluster, batches: list[tuple[str, tuple[tuple[Any, ...], ...]]]
) -> list[list[Any]]:
    """Run each batch (the commands of one slot, named by one of its keys) on the primary serving that slot, all at
    once, each batch on one connection, following MOVED, ASK and TRYAGAIN here rather than in redis-py until the
    caller's deadline (why and how: docs/revocation.md, "Redis Cluster: redirections followed by the store")."""
    import anyio  # here: a Django site, which never calls this, may not have it
    from redis.asyncio.cluster import PipelineCommand
    from redis.exceptions import (
        AskError,
        ClusterDownError,
        ConnectionError,
        MovedError,
        SlotNotCoveredError,
        TimeoutError,
        TryAgainError,
    )

    results: list[list[Any] | None] = [None] * len(batches)
    targets: dict[int, tuple[Any, bool]] = {}  # batch -> (node, after ASK)
    redirections = 0
    while True:
        pending = [i for i, done in enumerate(results) if done is None]
        if not pending:
            return results  # type: ignore[return-value]
        nodes: dict[str, tuple[Any, list[tuple[int, list[Any]]]]] = {}
        try:
            await cluster.initialize()  # a no-op while the slot table is known
            for i in pending:
                node, asking = targets.get(i) or (cluster.get_node_from_key(batches[i][0]), False)
                if node is None:
                    raise SlotNotCoveredError(f"no node serves the slot of {batches[i][0]!r}")
                targets[i] = (node, asking)
                commands = [PipelineCommand(0, "ASKING")] if asking else []
                commands += [PipelineCommand(0, *command) for command in batches[i][1]]
                nodes.setdefault(node.name, (node, []))[1].append((i, commands))
            await asyncio.gather(
                *(node.execute_pipeline([c for _, cs in work for c in cs]) for node, work in nodes.values())
            )
        except (ConnectionError, TimeoutError, SlotNotCoveredError):
            await cluster.aclose()  # as redis-py does: drop the connections, learn the layout again
            targets.clear()
            await anyio.sleep(0.1)
            continue
        relearn = pause = False
        for _node, work in nodes.values():
            for i, commands in work:
                replies = [c.result for c in commands if c.args[0] != "ASKING"]
                redirect = next(
                    (r for r in replies if isinstance(r, (AskError, TryAgainError, ClusterDownError))), None
                )
                if redirect is None:
                    for reply in replies:
                        if isinstance(reply, Exception):
                            raise reply
                    results[i] = replies
                    continue
                del targets[i]
                if isinstance(redirect, ClusterDownError):  # an election: wait for its end (within the timeout)
                    relearn = pause = True
                    continue
                redirections += 1
                pause = pause or redirections > _QUICK_REDIRECTIONS  # never a busy loop; the timeout bounds it
                if isinstance(redirect, MovedError):  # before AskError, its base class
                    relearn = True
                elif isinstance(redirect, AskError):
                    target = cluster.get_node(host=redirect.host, port=redirect.port)
                    if target is None:
                        relearn = True
                    else:
                        targets[i] = (target, True)
                else:
                    pause = True
        if relearn:
            await cluster.nodes_manager.initialize()
        if pause:
            await anyio.sleep(0.05)


#: Redirections (MOVED, ASK, TRYAGAIN) one call follows at once; after them, it pauses between two.
_QUICK_REDIRECTIONS: Final = 5


def _cluster_write_and_wait(
    cluster: Any, name: str, command: tuple[Any, ...], wait: tuple[Any, ...], pause: Callable[[float], None]
) -> tuple[Any, int]:
    """``command`` then ``WAIT`` on one connection to the primary serving ``name`` (as ``cluster_execute``)."""
    from redis.exceptions import AskError, ConnectionError, MovedError, TimeoutError, TryAgainError

    node = cluster.get_node_from_key(name)
    asking = False
    for _ in range(_REDIRECTIONS):
        try:
            with cluster.get_redis_connection(node).pipeline(transaction=False) as pipe:
                if asking:
                    pipe.execute_command("ASKING")
                pipe.execute_command(*command)
                pipe.execute_command(*wait)
                replies = pipe.execute(raise_on_error=False)
        except (ConnectionError, TimeoutError):
            _relearn(cluster)  # a primary down: has a replica taken its slots over yet?
            if cluster.get_node_from_key(name) == node:
                raise  # not yet: unavailable (the policy applies), the next call asks again
            node, asking = cluster.get_node_from_key(name), False
            continue
        reply, acknowledged = replies[-2:]
        asking = False
        if isinstance(reply, MovedError):  # before AskError, its base class
            cluster.exists(name)  # through the cluster client, which follows MOVED and updates its slot table
            node = cluster.get_node_from_key(name)
            continue
        if isinstance(reply, AskError):
            node = cluster.get_node(host=reply.host, port=reply.port) or node
            asking = True
            continue
        if isinstance(reply, TryAgainError):
            pause(0.05)
            continue
        for failed in replies:
            if isinstance(failed, Exception):
                raise failed
        return reply, int(acknowledged)
    raise StoreUnavailable(f"Redis Cluster kept redirecting a write ({_REDIRECTIONS} times)")


def _relearn(cluster: Any) -> None:
    """Read the cluster's slot table again (as redis-py does after a connection error), if a node answers."""
    try:
        cluster.nodes_manager.initialize()
    except Exception as error:  # every node down: the next call tries again
        logger.debug("Redis Cluster layout not refreshed: %s", error)


#: How many redirections (MOVED, ASK, TRYAGAIN) a write that waits for its replicas follows before giving up.
_REDIRECTIONS: Final = 20
