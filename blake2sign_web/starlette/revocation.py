"""Redis for Starlette and FastAPI: single-use links, link groups, ended sessions, "log out everywhere".

    store = RedisStore("redis://127.0.0.1:6379/0")  # or redis+cluster://..., redis+sentinel://..., a client
    app.add_middleware(SessionMiddleware, secret_key=..., revocation=store, user_key="user_id")
    Route("/files/{name:path}", SignedFiles(signer, root, single_use=store))

Every call is bounded by ``timeout`` (0.5 s by default): a Redis that is down, or hung, raises
``StoreUnavailable`` within it, and ``on_unavailable`` applies: ``"closed"`` (the default: a single-use
link gets 503, a session is read as empty) or ``"open"`` (accept, and log an error). The commands and
what their replies mean are the core's plans (``store_plans``); this module sends them.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Final

from .. import revocation
from ..records import new_session_id as new_session_id
from ..redis_commands import bounded, is_async_cluster, mget, send_async
from ..revocation import DEFAULT_CLOCK_SKEW, DEFAULT_TIMEOUT, LinkAnswer, NotReplicated, Policy, StoreUnavailable
from ..session_revocation import SessionState
from ..store_plans import Plan, Replicas, StorePlans, T, adrive
from ..stores import client_from_url as client_from_url
from ..stores import client_problem
from ..stores import logger as logger

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from contextlib import AbstractAsyncContextManager

    from redis.asyncio import Redis, RedisCluster

__all__ = ["NotReplicated", "RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


class RedisStore:
    """The records of ``blake2sign_web.revocation`` in Redis, through ``redis.asyncio``.

    ``client``: a ``redis.asyncio.Redis`` (one server, or Sentinel's ``master_for(name)``), a
    ``RedisCluster``, or a store URL (``revocation.parse_store_url``; its client gets ``timeout`` on its
    sockets). ``clock_skew``: how far the clocks of the servers sharing this Redis may differ.
    ``key_prefix``: this application's name in its keys (applications sharing a Redis need their own).
    ``wait_replicas``: how many replicas must have each write (``WAIT``, up to half of ``timeout``);
    fewer raise ``NotReplicated``. docs/revocation.md, "Deployment", says more of each.
    """

    def __init__(
        self,
        client: Redis | RedisCluster | str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_unavailable: Policy = "closed",
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        key_prefix: str = "",
        wait_replicas: int = 0,
        clock: Callable[[], float] = revocation.CLOCK,
    ) -> None:
        self.timeout = revocation.check_timeout(timeout, "RedisStore timeout")
        self.on_unavailable = revocation.check_policy(on_unavailable, "RedisStore on_unavailable")
        self.clock_skew = revocation.check_clock_skew(clock_skew, "RedisStore clock_skew")
        self.key_prefix = revocation.check_key_prefix(key_prefix, "RedisStore key_prefix")
        self.wait_replicas = revocation.check_wait_replicas(wait_replicas, "RedisStore wait_replicas")
        self._replicas = Replicas(self.wait_replicas, self.timeout)
        self._plans = StorePlans(self.key_prefix, self.clock_skew, self._replicas, clock)
        self.client = client_from_url(client, self.timeout) if isinstance(client, str) else client
        if (problem := client_problem(self.client)) is not None:
            raise TypeError(problem)
        self.is_cluster = is_async_cluster(self.client)

    def __repr__(self) -> str:
        return (
            f"RedisStore(timeout={self.timeout!r}, on_unavailable={self.on_unavailable!r}, "
            f"clock_skew={self.clock_skew!r}, key_prefix={self.key_prefix!r}, wait_replicas={self.wait_replicas!r})"
        )

    @property
    def fails_open(self) -> bool:
        return self.on_unavailable == "open"

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
        ``MGET`` per slot, all sent at once, ``redis_commands.cluster_mget``)."""
        check = revocation.session_check(session_id, user_id, issued_at, generation, self.key_prefix, self.clock_skew)
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


#: Where SessionMiddleware leaves what it knows of the request's session token, for the functions below.
SCOPE_KEY: Final = "blake2sign_web.session"


class SessionToken(SessionState):
    """The request's ``SessionState`` (set by SessionMiddleware in the scope), with its store, the middleware's
    ``max_age`` (how long its records last) and the session key of its user."""

    __slots__ = ("lifetime", "store", "user_key")

    def __init__(
        self,
        store: RedisStore,
        session_id: bytes,
        came: bool,
        lifetime: int,
        user_key: str,
        user: object | None = None,
        generation: str = "",
    ) -> None:
        super().__init__(session_id, came, user, generation)
        self.store, self.lifetime, self.user_key = store, lifetime, user_key

    def end_client(self, session_id: bytes) -> Awaitable[None]:
        """End the client's session ``session_id`` in the store, its records kept as long as its tokens live."""
        return self.store.revoke_session(session_id, self.lifetime)


def _token(scope_owner: Any) -> SessionToken:
    scope = getattr(scope_owner, "scope", scope_owner)
    token = scope.get(SCOPE_KEY)
    if not isinstance(token, SessionToken):
        raise RuntimeError(
            "no session revocation for this request: add SessionMiddleware(..., revocation=RedisStore(...))"
        )
    return token


async def revoke_session(request: Any) -> None:
    """End the request's session now, on every server (``request.session.clear()`` does it as the response
    starts): StoreUnavailable is raised here if Redis is down. The session is emptied, its cookie deleted."""
    token = _token(request)
    if (client := token.client_session()) is not None:
        await token.store.revoke_session(client, token.lifetime)
    token.ended()
    request.session.clear()


async def log_out_everywhere(request: Any, user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the request's ``session[user_key]``) that exists now; a login
    after this call is not ended. The request's own session: ``revocation.current_session_fate`` (that user's
    ends too unless ``keep_current=True``: docs/revocation.md, "What log out everywhere guarantees")."""
    token = _token(request)
    owner = request.session.get(token.user_key)
    if user_id is None:
        user_id = owner
        if user_id is None:
            raise ValueError(f"no user id in request.session[{token.user_key!r}]: pass user_id")
    fate = revocation.current_session_fate(owner, user_id, keep_current)
    generation = await token.store.log_out_everywhere(user_id, token.lifetime)
    if fate == "keep":
        token.keep(user_id, generation)
        if owner is not None:
            request.session.mark_modified()  # re-signed at the response with the new generation
    elif fate == "end":
        await revoke_session(request)
