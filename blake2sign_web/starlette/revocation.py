"""Redis for Starlette and FastAPI: single-use links, ended sessions, "log out everywhere".

    store = RedisStore("redis://127.0.0.1:6379/0")  # or RedisStore(redis.asyncio.Redis(...))
    store = RedisStore("redis+cluster://10.0.0.1:6379,10.0.0.2:6379")  # or a redis.asyncio.RedisCluster
    store = RedisStore("redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/mymaster")  # or Sentinel's master_for()
    app.add_middleware(SessionMiddleware, secret_key=..., revocation=store, user_key="user_id")
    Route("/files/{name:path}", SignedFiles(signer, root, single_use=store))

Every call is bounded by ``timeout`` (0.5 s by default): a Redis that is down, or hung,
raises ``StoreUnavailable`` within it, and the caller applies ``on_unavailable``:
``"closed"`` (the default: a single-use link gets 503, a session is read as empty) or
``"open"`` (accept, and log an error). Use one store per policy if links and sessions
should differ; they may share one ``redis.asyncio`` client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio

from .. import revocation
from ..records import new_session_id as new_session_id
from ..redis_commands import cluster_mget, is_async_cluster, run_async, write_async
from ..revocation import DEFAULT_CLOCK_SKEW, DEFAULT_TIMEOUT, NotReplicated, Policy, StoreUnavailable
from ..session_revocation import SessionState
from ..stores import logger as logger
from ..stores import not_replicated, redis_client

if TYPE_CHECKING:
    from redis.asyncio import Redis, RedisCluster

__all__ = ["NotReplicated", "RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


class RedisStore:
    """The records of ``blake2sign_web.revocation`` in Redis, through ``redis.asyncio``.

    ``client``: a ``redis.asyncio.Redis`` (one server, or ``Sentinel(...).master_for(name)``), a
    ``redis.asyncio.RedisCluster``, or a URL: ``redis://``, ``rediss://``, ``unix://`` (one server),
    ``redis+cluster://host:port,host:port`` (a cluster) or ``redis+sentinel://host:port,.../<name>[/<db>]``
    (the primary the sentinels monitor as ``<name>``), see ``revocation.parse_store_url``; a client is
    then made with ``timeout`` as its socket timeouts. Records carry TTLs: the store never grows.
    ``clock_skew``: how many seconds the clocks of the servers sharing this Redis may
    differ; "log out everywhere" also refuses sessions issued that long after its cut-off.
    ``key_prefix``: this application's name in its keys; give every application that shares
    the Redis its own (letters, digits, ``_.-``), or they end each other's sessions.
    ``wait_replicas``: how many replicas must have each revocation and each use of a single-use
    link before it counts as done (Redis ``WAIT``, up to half of ``timeout``); fewer raise
    ``NotReplicated`` (a ``StoreUnavailable``). 0, the default, does not wait: a primary that dies
    before replicating loses what it acknowledged last (docs/revocation.md, "Deployment").
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
        self._clock = clock
        if isinstance(client, str):
            client = client_from_url(client, self.timeout)
        elif not callable(getattr(client, "pipeline", None)):
            raise TypeError(
                "RedisStore needs a redis.asyncio.Redis, a redis.asyncio.RedisCluster or a URL (redis://, "
                f"redis+cluster://, redis+sentinel://), not {type(client).__name__}"
            )
        self.client = client
        self.is_cluster = is_async_cluster(client)

    def __repr__(self) -> str:
        return (
            f"RedisStore(timeout={self.timeout!r}, on_unavailable={self.on_unavailable!r}, "
            f"clock_skew={self.clock_skew!r}, key_prefix={self.key_prefix!r}, wait_replicas={self.wait_replicas!r})"
        )

    @property
    def fails_open(self) -> bool:
        return self.on_unavailable == "open"

    async def consume_link(
        self,
        nonce: str,
        expires_at: int,
        client: str,
        *,
        file_size: int | None = None,
        continuation: int | None = None,
    ) -> bool:
        """Use up a single-use link: True for its first use, and for the same client's continuations of a file.

        The records, their lifetimes and the command are the core's (``revocation.link_use``).
        With ``wait_replicas``, a first use its replicas do not acknowledge is undone, then refused
        (``NotReplicated``): the link stays usable, and was not used.
        """
        use = revocation.link_use(
            nonce,
            expires_at,
            client,
            file_size=file_size,
            continuation=continuation,
            skew=self.clock_skew,
            clock=self._clock,
        )
        async with self._bounded("consume a single-use link"):
            outcome, acknowledged = await self._write(use.key, use.command())
            if acknowledged < self.wait_replicas and outcome:
                if use.first_use(outcome):
                    await self._run(use.key, use.undo_command())
                raise not_replicated("use a single-use link", acknowledged, self.wait_replicas, self.timeout)
        return bool(outcome)

    async def revoke_session(self, session_id: bytes, lifetime: int) -> None:
        """End one session (by its id); ``lifetime``: the longest any token of it lives (the middleware's max_age)."""
        await self._set(
            revocation.ended_session(session_id, lifetime, self.key_prefix, self.clock_skew), "revoke a session"
        )

    async def log_out_everywhere(self, user_id: object, lifetime: int) -> str:
        """End every session of ``user_id`` that exists now: a new generation, which only later logins get.

        Returns it, for a session to keep (``SessionToken.generation``).
        """
        generation = revocation.new_generation()
        record = revocation.user_generation_record(
            user_id, generation, lifetime, self.key_prefix, self.clock_skew, clock=self._clock
        )
        await self._set(record, "log a user out everywhere")
        return generation

    async def user_generation(self, user_id: object) -> str:
        """The generation a session logging in as ``user_id`` carries: its user's record's, "" if none."""
        key = revocation.user_key(user_id, self.key_prefix)
        async with self._bounded("read a user's generation"):
            values = await self._run(key, ("GET", key))
        return revocation.recorded_generation(values[0])

    async def is_revoked(
        self, session_id: bytes | None, user_id: object | None, issued_at: int, generation: str | None = ""
    ) -> bool:
        """Whether a verified session was ended: one round trip for the records the core names.

        One server: one ``MGET``. A cluster: the records are in different slots (a session's and
        its user's), so one ``MGET`` per slot, sent together in one pipeline to the nodes serving
        them: each node gets one request, all at once, and the check waits for the slowest answer.
        """
        check = revocation.session_check(session_id, user_id, issued_at, generation, self.key_prefix, self.clock_skew)
        if check is None:
            return False
        async with self._bounded("check a session"):
            if self.is_cluster:
                values = await cluster_mget(self.client, check.keys)  # type: ignore[arg-type]
            else:
                values = await self.client.mget(check.keys)
        return check.revoked(values)

    async def _set(self, record: revocation.Record, action: str) -> None:
        async with self._bounded(action):
            _, acknowledged = await self._write(record.key, ("SET", record.key, record.value, "EX", record.ttl))
        if acknowledged < self.wait_replicas:
            raise not_replicated(action, acknowledged, self.wait_replicas, self.timeout)

    async def _write(self, key: str, command: tuple[Any, ...]) -> tuple[Any, int]:
        return await write_async(self.client, self.is_cluster, key, command, self.wait_replicas, self.timeout)

    async def _run(self, key: str, *commands: tuple[Any, ...]) -> list[Any]:
        return await run_async(self.client, self.is_cluster, key, *commands)

    @asynccontextmanager
    async def _bounded(self, action: str) -> AsyncIterator[None]:
        """At most ``timeout`` seconds; any failure of the store becomes StoreUnavailable."""
        from redis.exceptions import RedisClusterException, RedisError

        deadline: anyio.CancelScope | None = None
        try:
            with anyio.fail_after(self.timeout) as deadline:
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

    async def aclose(self) -> None:
        await self.client.aclose()


def client_from_url(url: str, timeout: float) -> Redis | RedisCluster:
    """A ``redis.asyncio`` client for a store URL (``revocation.parse_store_url``), with ``timeout`` on its sockets."""
    sockets = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    client: Redis | RedisCluster = redis_client(revocation.parse_store_url(url), sockets, asynchronous=True)
    return client


#: Where SessionMiddleware leaves what it knows of the request's session token, for the functions below.
SCOPE_KEY: Final = "blake2sign_web.session"


class SessionToken(SessionState):
    """The facts of the request's session that revocation needs (set by SessionMiddleware in the scope).

    The rules are ``SessionState``'s; this adds the store, the middleware's ``max_age`` (how long
    any session lives, so how long its records last) and the session key of its user.
    """

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

    async def generation_for(self, user: object) -> str:
        """The generation to sign into the session of ``user``: as read, unless it logged in during the request."""
        known = self.known_generation(user)
        return known if known is not None else self.took(user, await self.store.user_generation(user))


def _token(scope_owner: Any) -> SessionToken:
    scope = getattr(scope_owner, "scope", scope_owner)
    token = scope.get(SCOPE_KEY)
    if not isinstance(token, SessionToken):
        raise RuntimeError(
            "no session revocation for this request: add SessionMiddleware(..., revocation=RedisStore(...))"
        )
    return token


async def revoke_session(request: Any) -> None:
    """End the request's session here and now: its cookie is refused from now on, on every server.

    ``request.session`` is emptied (the response then deletes the cookie); a session
    started afterwards in the same request gets a new id. ``request.session.clear()``
    alone does the same when the response is sent; this one raises StoreUnavailable
    at once if Redis is down.
    """
    token = _token(request)
    if (client := token.client_session()) is not None:
        await token.store.revoke_session(client, token.lifetime)
    token.ended()
    request.session.clear()


async def log_out_everywhere(request: Any, user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the request's ``session[user_key]``) that exists now.

    The request's own session (``revocation.current_session_fate``): when it is that user's, it
    ends too, its cookie deleted on this response, unless ``keep_current=True`` keeps it ("log out
    my other devices", a password change: re-signed at the response with the user's new generation
    and a new session id). Every other session of the user is refused, copies of this one's cookie
    and sessions re-signed by requests still running included; a login after this call is not.
    An anonymous session is kept with ``keep_current``; another user's session is left as it is.
    """
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
