"""Redis for Starlette and FastAPI: single-use links, link groups, ended sessions, "log out everywhere".

    store = RedisStore("redis://127.0.0.1:6379/0")  # or redis+cluster://..., redis+sentinel://..., a client
    app.add_middleware(SessionMiddleware, secret_key=..., revocation=store, user_key="user_id")
    Route("/files/{name:path}", SignedFiles(signer, root, single_use=store))

``RedisStore`` is the core's ``stores.redis_stores.AsyncRedisStore`` (Quart's too): its timeout and
``on_unavailable``, docs/revocation.md, "When Redis is unreachable".
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from ..sessions.revocable import aask, ending, logging_out
from ..sessions.revocation import SessionState
from ..stores.plans import adrive
from ..stores.records import new_session_id as new_session_id
from ..stores.redis_stores import AsyncRedisStore as RedisStore
from ..stores.revocation import NotReplicated, StoreUnavailable

__all__ = ["NotReplicated", "RedisStore", "StoreUnavailable", "log_out_everywhere", "revoke_session"]


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
    await adrive(ending(request.session, token, token.lifetime), partial(aask, token.store))


async def log_out_everywhere(request: Any, user_id: object | None = None, *, keep_current: bool = False) -> None:
    """End every session of ``user_id`` (default: the request's ``session[user_key]``) that exists now; a login
    after this call is not ended. The request's own session: ``revocation.current_session_fate`` (that user's
    ends too unless ``keep_current=True``: docs/revocation.md, "What log out everywhere guarantees")."""
    token = _token(request)
    steps = logging_out(
        request.session, token, token.user_key, token.lifetime, user_id, keep_current, "request.session"
    )
    await adrive(steps, partial(aask, token.store))
