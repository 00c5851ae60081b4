"""The records of ``stores.revocation`` in Redis: ``RedisStore`` through a blocking redis-py client (Flask), and
``AsyncRedisStore`` through ``redis.asyncio`` (Starlette and FastAPI, as ``starlette.revocation.RedisStore``;
Quart), each call returning its answer or a coroutine of it. The plans are the core's (``stores.plans``), sent
here. Every call is bounded by ``timeout``: a Redis that is down or hung raises ``StoreUnavailable``, and the
caller applies ``on_unavailable`` (docs/revocation.md, "When Redis is unreachable").
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Any

from .base import client_from_url, client_problem, parse_store_url, redis_client
from .commands import bounded, is_async_cluster, mget, send_async, send_sync
from .options import StoreOptions
from .plans import Plan, T, adrive, drive, unavailable_on_error
from .revocation import LinkAnswer, session_check


class RedisStore(StoreOptions):
    """``client``: a ``redis.Redis`` (one server, or Sentinel's ``master_for(name)``), a ``redis.RedisCluster``,
    or a store URL (``stores.parse_store_url``; its client gets ``timeout`` on its sockets). The other arguments:
    ``StoreOptions``."""

    def _connected(self, client: Any) -> tuple[Any, bool]:
        if isinstance(client, str):
            sockets = {"socket_timeout": self.timeout, "socket_connect_timeout": self.timeout}
            client = redis_client(parse_store_url(client), sockets, asynchronous=False)
        if (problem := client_problem(client, asynchronous=False)) is not None:
            raise TypeError(problem)
        from redis.cluster import RedisCluster

        return client, isinstance(client, RedisCluster)

    def consume_link(
        self, nonce: str, expires_at: int, client: str, *, file_size: int | None = None, continuation: int | None = None
    ) -> bool:
        """Use up a single-use link: True for its first use, and for the same client's continuations of a file."""
        return self._run(self._plans.use_link(nonce, expires_at, client, file_size, continuation))

    def check_link(
        self,
        nonce: str | None,
        expires_at: int,
        client: str,
        *,
        file_size: int | None = None,
        continuation: int | None = None,
        group: str,
        issued_us: int,
    ) -> LinkAnswer:
        """A grouped link's check: "withdrawn" if ``group`` was revoked at or after ``issued_us``, else for a
        single-use link (``nonce``) "ok" or "used" as ``consume_link``; one round trip."""
        return self._run(self._plans.check_link(nonce, expires_at, client, file_size, continuation, group, issued_us))

    def revoke_link_group(self, group: str, lifetime: int) -> None:
        """Withdraw every link of ``group`` issued until now (``lifetime``: the seconds the longest-lived of them
        still has); links signed after it work."""
        self._run(self._plans.revoke_link_group(group, lifetime))

    def revoke_session(self, session_id: bytes, lifetime: int) -> None:
        """End one session (by its id); ``lifetime``: the longest any token of it lives."""
        self._run(self._plans.end_session(session_id, lifetime))

    def log_out_everywhere(self, user_id: object, lifetime: int) -> str:
        """End every session of ``user_id`` that exists now: its new generation, which only later logins get."""
        return self._run(self._plans.log_out_everywhere(user_id, lifetime))

    def user_generation(self, user_id: object) -> str:
        """The generation a session logging in as ``user_id`` carries: its user's record's, "" if none."""
        return self._run(self._plans.user_generation(user_id))

    def is_revoked(
        self, session_id: bytes | None, user_id: object | None, issued_at: int, generation: str | None = ""
    ) -> bool:
        """Whether a verified session was ended: one ``MGET`` of the records the core names."""
        check = session_check(
            session_id, user_id, issued_at, generation, self.key_prefix, self.clock_skew, self.earlier_until, self.clock
        )
        if check is None:
            return False
        with unavailable_on_error("check a session", "Redis", keep=True):
            values = self.client.mget_nonatomic(check.keys) if self.is_cluster else self.client.mget(check.keys)
        return check.revoked(values)

    def close(self) -> None:
        self.client.close()

    def _run(self, plan: Plan[T]) -> T:
        with unavailable_on_error(plan.action, "Redis", keep=True):
            return drive(plan.steps, partial(send_sync, self.client, self.is_cluster, self._replicas, time.sleep))


if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager


class AsyncRedisStore(StoreOptions):
    """``client``: a ``redis.asyncio.Redis`` (one server, or Sentinel's ``master_for(name)``), a
    ``RedisCluster``, or a store URL (``stores.parse_store_url``; its client gets ``timeout`` on its sockets).
    The other arguments: ``StoreOptions`` (``wait_replicas``: fewer replicas than that raise ``NotReplicated``).
    docs/revocation.md, "Deployment", says more of each.
    """

    def _connected(self, client: Any) -> tuple[Any, bool]:
        client = client_from_url(client, self.timeout) if isinstance(client, str) else client
        if (problem := client_problem(client)) is not None:
            raise TypeError(problem)
        return client, is_async_cluster(client)

    async def consume_link(
        self, nonce: str, expires_at: int, client: str, *, file_size: int | None = None, continuation: int | None = None
    ) -> bool:
        """Use up a single-use link: True for its first use, and for the same client's continuations of a file."""
        return await self._run(self._plans.use_link(nonce, expires_at, client, file_size, continuation))

    async def check_link(
        self,
        nonce: str | None,
        expires_at: int,
        client: str,
        *,
        file_size: int | None = None,
        continuation: int | None = None,
        group: str,
        issued_us: int,
    ) -> LinkAnswer:
        """A grouped link's check: "withdrawn" if ``group`` was revoked at or after ``issued_us``, else for a
        single-use link (``nonce``) "ok" or "used" as ``consume_link``; one round trip (a cluster: one per node)."""
        return await self._run(
            self._plans.check_link(nonce, expires_at, client, file_size, continuation, group, issued_us)
        )

    async def revoke_link_group(self, group: str, lifetime: int) -> None:
        """Withdraw every link of ``group`` issued until now, on every server (links signed after it work);
        ``lifetime``: the seconds the longest-lived link of the group still out has left (the record lasts that
        long). ValueError for a bad group or lifetime; StoreUnavailable if Redis cannot be reached."""
        await self._run(self._plans.revoke_link_group(group, lifetime))

    async def revoke_session(self, session_id: bytes, lifetime: int) -> None:
        """End one session (by its id); ``lifetime``: the longest any token of it lives (the middleware's max_age)."""
        await self._run(self._plans.end_session(session_id, lifetime))

    async def log_out_everywhere(self, user_id: object, lifetime: int) -> str:
        """End every session of ``user_id`` that exists now: a new generation (returned, for a session to keep),
        which only later logins get."""
        return await self._run(self._plans.log_out_everywhere(user_id, lifetime))

    async def user_generation(self, user_id: object) -> str:
        """The generation a session logging in as ``user_id`` carries: its user's record's, "" if none."""
        return await self._run(self._plans.user_generation(user_id))

    async def is_revoked(
        self, session_id: bytes | None, user_id: object | None, issued_at: int, generation: str | None = ""
    ) -> bool:
        """Whether a verified session was ended: one round trip for the records the core names (a cluster: one
        ``MGET`` per slot, all sent at once, ``stores.commands.cluster_mget``)."""
        check = session_check(
            session_id, user_id, issued_at, generation, self.key_prefix, self.clock_skew, self.earlier_until, self.clock
        )
        if check is None:
            return False
        async with self._bounded("check a session"):
            values = await mget(self.client, self.is_cluster, check.keys)
        return check.revoked(values)

    async def _run(self, plan: Plan[T]) -> T:
        async with self._bounded(plan.action):
            return await adrive(plan.steps, partial(send_async, self.client, self.is_cluster, self._replicas))

    def _bounded(self, action: str) -> AbstractAsyncContextManager[None]:
        return bounded(self.timeout, action)

    async def aclose(self) -> None:
        await self.client.aclose()
