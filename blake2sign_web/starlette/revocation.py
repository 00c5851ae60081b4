"""Redis for Starlette and FastAPI: single-use links, ended sessions, "log out everywhere".

    store = RedisStore("redis://127.0.0.1:6379/0")  # or RedisStore(redis.asyncio.Redis(...))
    app.add_middleware(SessionMiddleware, secret_key=..., revocation=store, user_key="user_id")
    Route("/files/{name:path}", SignedFiles(signer, root, single_use=store))

Every call is bounded by ``timeout`` (0.5 s by default): a Redis that is down, or hung,
raises ``StoreUnavailable`` within it, and the caller applies ``on_unavailable``:
``"closed"`` (the default: a single-use link gets 503, a session is read as empty) or
``"open"`` (accept, and log an error). Use one store per policy if links and sessions
should differ; they may share one ``redis.asyncio`` client.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio

from .. import revocation
from ..revocation import DEFAULT_CLOCK_SKEW, DEFAULT_TIMEOUT, Policy, StoreUnavailable
from ..serializer import SESSION_ID_SIZE

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]

logger: Final = logging.getLogger("blake2sign_web.revocation")


#: First use of a file link (record the client, set the byte budget), or a continuation by the same
#: client that the budget still covers (deduct it); one atomic script. Returns 1 to allow, 0 to refuse.
_CONSUME_FILE_LINK: Final = """
if redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then
    redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
    return 1
end
local cost = tonumber(ARGV[4])
if cost < 0 or redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
local left = tonumber(redis.call('GET', KEYS[2]) or '-1')
if left < cost then
    return 0
end
redis.call('DECRBY', KEYS[2], cost)
return 1
"""


class RedisStore:
    """The records of ``blake2sign_web.revocation`` in Redis, through ``redis.asyncio``.

    ``client``: a ``redis.asyncio.Redis`` or a ``redis://`` URL (a client is then made
    with ``timeout`` as its socket timeouts). Records carry TTLs: the store never grows.
    ``clock_skew``: how many seconds the clocks of the servers sharing this Redis may
    differ; "log out everywhere" also refuses sessions issued that long after its cut-off.
    ``key_prefix``: this application's name in its keys; give every application that shares
    the Redis its own (letters, digits, ``_.-``), or they end each other's sessions.
    """

    def __init__(
        self,
        client: Redis | str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_unavailable: Policy = "closed",
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        key_prefix: str = "",
        clock: Any = time.time,
    ) -> None:
        self.timeout = revocation.check_timeout(timeout, "RedisStore timeout")
        self.on_unavailable = revocation.check_policy(on_unavailable, "RedisStore on_unavailable")
        self.clock_skew = revocation.check_clock_skew(clock_skew, "RedisStore clock_skew")
        self.key_prefix = revocation.check_key_prefix(key_prefix, "RedisStore key_prefix")
        self._clock = clock
        if isinstance(client, str):
            from redis.asyncio import Redis

            client = Redis.from_url(client, socket_timeout=self.timeout, socket_connect_timeout=self.timeout)
        elif not callable(getattr(client, "pipeline", None)):
            raise TypeError(f"RedisStore needs a redis.asyncio.Redis or a redis:// URL, not {type(client).__name__}")
        self.client = client

    def __repr__(self) -> str:
        return (
            f"RedisStore(timeout={self.timeout!r}, on_unavailable={self.on_unavailable!r}, "
            f"clock_skew={self.clock_skew!r}, key_prefix={self.key_prefix!r})"
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

        ``file_size``: the link serves a file, whose size becomes the budget of its continuations;
        ``continuation``: what this request would fetch as one (``revocation.continuation_cost``).
        """
        key = revocation.single_use_key(nonce)
        digest = revocation.client_digest(client)
        ttl = revocation.single_use_ttl(expires_at, self._clock(), self.clock_skew)
        async with self._bounded("consume a single-use link"):
            if file_size is None:
                return bool(await self.client.set(key, digest, ex=ttl, nx=True))
            outcome = await self.client.eval(
                _CONSUME_FILE_LINK,
                2,
                key,
                revocation.budget_key(nonce),
                digest,
                ttl,
                file_size,
                -1 if continuation is None else continuation,
            )
        return bool(outcome)

    async def revoke_session(self, session_id: bytes, expires_at: float) -> None:
        """End one session (by its id) until ``expires_at``, when its token ends anyway."""
        ttl = revocation.session_record_ttl(expires_at, self._clock(), self.clock_skew)
        async with self._bounded("revoke a session"):
            await self.client.set(revocation.session_key(session_id, self.key_prefix), revocation.SESSION_ENDED, ex=ttl)

    async def log_out_everywhere(self, user_id: object, lifetime: int, *, keep: bytes | None = None) -> None:
        """End every session of ``user_id`` issued until now, but the one with session id ``keep``.

        The record lasts ``lifetime`` seconds (the longest a session lives) plus the clock-skew allowance.
        """
        value = revocation.not_before_value(self._clock(), keep)
        ttl = revocation.not_before_ttl(lifetime, self.clock_skew)
        async with self._bounded("log a user out everywhere"):
            await self.client.set(revocation.user_key(user_id, self.key_prefix), value, ex=ttl)

    async def is_revoked(self, session_id: bytes | None, user_id: object | None, issued_at: int) -> bool:
        """Whether a verified session was ended: one round trip (MGET of its records)."""
        session_keys = [] if session_id is None else revocation.session_keys(session_id, self.key_prefix)
        user_keys = [] if user_id is None else revocation.user_keys(user_id, self.key_prefix)
        if not session_keys and not user_keys:
            return False
        async with self._bounded("check a session"):
            values = await self.client.mget([*session_keys, *user_keys])
        return revocation.is_revoked(
            issued_at,
            session_id=session_id,
            session_records=values[: len(session_keys)],
            user_records=values[len(session_keys) :],
            skew=self.clock_skew,
        )

    @asynccontextmanager
    async def _bounded(self, action: str) -> AsyncIterator[None]:
        """At most ``timeout`` seconds; any failure of the store becomes StoreUnavailable."""
        from redis.exceptions import RedisError

        try:
            with anyio.fail_after(self.timeout):
                yield
        except (RedisError, OSError) as error:  # OSError includes TimeoutError, raised by fail_after
            raise StoreUnavailable(f"Redis failed to {action}: {type(error).__name__}") from None

    async def aclose(self) -> None:
        await self.client.aclose()


#: Where SessionMiddleware leaves what it knows of the request's session token, for the functions below.
SCOPE_KEY: Final = "blake2sign_web.session"


class SessionToken:
    """The facts of the request's session that revocation needs (set by SessionMiddleware in the scope)."""

    __slots__ = ("expires_at", "lifetime", "revoke_on_clear", "session_id", "store", "unchecked", "user_key")

    def __init__(
        self, store: RedisStore, session_id: bytes, expires_at: float | None, lifetime: int, user_key: str
    ) -> None:
        self.store = store
        #: The id written into the next cookie; a new one after the session is revoked.
        self.session_id = session_id
        #: When the client's cookie stops being accepted anyway (None: no valid cookie came).
        self.expires_at = expires_at
        #: The middleware's max_age: how long any session can live, so how long a not-before record lasts.
        self.lifetime = lifetime
        self.user_key = user_key
        #: Whether the cookie that came is still to be revoked when the session is emptied.
        self.revoke_on_clear = expires_at is not None
        #: The client's session was read as empty because the store was down ("closed"): its cookie must
        #: stay as it is (the session comes back with the store), unless the request clears the session.
        self.unchecked = False


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
    if token.revoke_on_clear and token.expires_at is not None:
        await token.store.revoke_session(token.session_id, token.expires_at)
    token.revoke_on_clear = False
    token.session_id = new_session_id()
    request.session.clear()


async def log_out_everywhere(request: Any, user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the request's ``session[user_key]``) issued until now.

    ``keep_current=True`` keeps the request's own session when it is one of that user's
    ("log out my other devices", a password change): it is re-signed under a new session
    id, which the cut-off exempts; every other session of the user is refused, including
    copies of this one's cookie and sessions re-signed by requests still running. Otherwise
    the request's session ends too.
    """
    token = _token(request)
    session_user = request.session.get(token.user_key)
    if user_id is None:
        user_id = session_user
        if user_id is None:
            raise ValueError(f"no user id in request.session[{token.user_key!r}]: pass user_id")
    own = session_user is not None and str(session_user) == str(user_id)
    kept = new_session_id() if keep_current and own else None
    await token.store.log_out_everywhere(user_id, token.lifetime, keep=kept)
    if kept is not None:
        token.session_id = kept
        request.session.mark_modified()  # re-signed at the response under the id the cut-off keeps
    elif not keep_current:
        await revoke_session(request)


def new_session_id() -> bytes:
    return secrets.token_bytes(SESSION_ID_SIZE)
