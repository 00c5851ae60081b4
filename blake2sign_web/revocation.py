"""Server-side state for revocation and single-use links, without a framework: keys, lifetimes, decisions.

Signed cookies and signed links need no store, which is their point; this module is the
small, optional exception. Four kinds of record, each with a TTL so the store never grows:

- ``once:<nonce>``: a single-use link was used. Written with SET NX (atomic: of any number
  of concurrent first uses, on any number of machines, exactly one wins) and kept until
  the link expires. Its value is a digest of the client that used it.
- ``once-budget:<nonce>``: for a link to a file, the bytes the same client may still fetch
  with Range requests after the first use (the file's size, once): an interrupted download
  resumes, a download manager fetches in pieces, and a used link never yields the file again
  whole nor more than once more in pieces (see ``continuation_cost``).
- ``sid:<session id>``: a session was ended (logout, flush). Kept until that session's
  token would have expired anyway.
- ``user:<user id>``: the user logged out everywhere at the time stored; every session of
  that user issued before it is refused. One key per user, kept for the longest lifetime
  a session can have.

The adapters (``django.revocation``, ``starlette.revocation``) do the I/O; what is decided
here is shared so that both decide alike.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from .files import ByteRange

#: Prefix of every key this project writes, so they can be told from the application's own.
KEY_PREFIX: Final = "blake2sign_web:"
#: What to do when the store cannot be reached in time.
Policy = Literal["closed", "open"]
POLICIES: Final = ("closed", "open")
#: Default seconds to wait for the store before applying the policy.
DEFAULT_TIMEOUT: Final = 0.5
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_.@+-]{1,64}")


class StoreUnavailable(Exception):
    """The store did not answer (refused, reset, timed out): the caller applies its policy."""


def single_use_key(nonce: str) -> str:
    return f"{KEY_PREFIX}once:{nonce}"


def budget_key(nonce: str) -> str:
    return f"{KEY_PREFIX}once-budget:{nonce}"


def session_key(session_id: bytes) -> str:
    return f"{KEY_PREFIX}sid:{session_id.hex()}"


def user_key(user_id: object) -> str:
    """The not-before key of a user; ids that are not plain (spaces, long, non-ASCII) are hashed."""
    text = str(user_id)
    if not _PLAIN_ID.fullmatch(text):
        text = "h" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"{KEY_PREFIX}user:{text}"


def ttl_until(expires_at: float, now: float) -> int:
    """Whole seconds from ``now`` to ``expires_at``, rounded up, at least 1 (a store refuses 0)."""
    return max(1, math.ceil(expires_at - now))


def client_digest(client: str) -> str:
    """What a single-use record keeps of its client: a digest, so the store holds no address."""
    return hashlib.blake2b(client.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def same_client(recorded: str | bytes | None, client: str) -> bool:
    """Whether the client that used a single-use link (``recorded``) is ``client``: a constant-time comparison."""
    if recorded is None:
        return False
    if isinstance(recorded, str):
        recorded = recorded.encode("ascii", "replace")
    return hmac.compare_digest(recorded, client_digest(client).encode("ascii"))


def continuation_cost(method: str, requested: ByteRange | None, size: int) -> int | None:
    """What a request for an already used single-use file link would fetch, or None if it cannot continue it.

    Only a file response continues a first use, and only with what resumes or splits a
    download: HEAD (no bytes), or GET of one satisfiable byte range shorter than the file,
    as ``files.requested_range`` reads it (so an unparseable Range, or an If-Range that does
    not match, asks for the whole file, which a used link never gives again). What a
    continuation fetches is deducted from the link's byte budget (the file's size).
    """
    if method == "HEAD":
        return 0
    if method != "GET" or requested is None or requested.length >= size:
        return None
    return requested.length


def not_before_value(now: float) -> int:
    """The not-before time written by "log out everywhere": sessions issued in an earlier second end.

    A session re-issued in the same second (the one that changed the password, say) is
    kept; one issued earlier is refused. Whole seconds, because tokens carry whole seconds.
    """
    return int(now)


def is_revoked(issued_at: int, *, session_revoked: object | None, not_before: str | bytes | int | None) -> bool:
    """Whether a verified session must be refused, given the two records read for it."""
    if session_revoked is not None:
        return True
    if not_before is None:
        return False
    try:
        cutoff = int(not_before)
    except (TypeError, ValueError):  # not written by us: refuse rather than guess
        return True
    return issued_at < cutoff


def check_policy(value: object, name: str) -> Policy:
    if value not in POLICIES:
        raise ValueError(f"{name} must be 'closed' (refuse when the store is down) or 'open'; got {value!r}")
    return value


def check_timeout(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 60:
        raise ValueError(f"{name} must be a number of seconds greater than 0 and at most 60; got {value!r}")
    return float(value)
