"""RedisStore's deadline: whatever the Redis client raises when it runs out, the caller gets StoreUnavailable.

On Python before 3.11, redis-py can raise a CancelledError of its own while anyio's deadline cancels it (it
awaits in an error handler, as its cluster client's ``initialize()`` does when a node refuses connections during
a failover). anyio does not recognise that one as its scope's: it escaped ``fail_after`` and ended the request
(tests/revocation/test_cluster_failover.py saw it about one run in four on Python 3.10).
"""

from __future__ import annotations

import asyncio

import anyio
import pytest

from blake2sign_web.starlette.revocation import RedisStore, StoreUnavailable

STORE = RedisStore("redis://127.0.0.1:1/0", timeout=0.05)  # never connected: _bounded is all this uses


async def redis_like_handler() -> None:
    """Waits past the deadline; cancelled, it raises a CancelledError without anyio's message from inside the
    handler of another error, as a future awaited in redis-py's handler does on Python 3.10."""
    cancelled = False
    try:
        await anyio.sleep(5)
    except BaseException:
        cancelled = True
    if cancelled:
        try:
            raise ConnectionRefusedError("Connect call failed")
        except ConnectionRefusedError:
            raise asyncio.CancelledError()  # noqa: B904  # its context is the ConnectionRefusedError, as there


def test_a_cancellation_raised_anew_at_the_deadline_is_store_unavailable() -> None:
    async def call() -> None:
        async with STORE._bounded("check a session"):
            await redis_like_handler()

    with pytest.raises(StoreUnavailable, match="TimeoutError"):
        anyio.run(call)


def test_a_cancellation_from_the_caller_still_cancels() -> None:
    async def call() -> str:
        with anyio.move_on_after(0.01) as caller:  # before the store's 0.05 s
            async with STORE._bounded("check a session"):
                await anyio.sleep(5)
        return "cancelled by the caller" if caller.cancelled_caught else "not cancelled"

    assert anyio.run(call) == "cancelled by the caller"
