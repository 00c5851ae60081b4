"""The records of revocation and single-use links: their names in the store, their values, and the formats
earlier releases wrote under earlier names (see ``revocation`` for the four kinds of record and what they decide).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from typing import Final

from ..signing.formats import SESSION_ID_SIZE

#: Prefix of every key this project writes, so they can be told from the application's own.
KEY_PREFIX: Final = "blake2sign_web:"
#: The wall clock that dates records and their lifetimes; a store may be given another (a test's server ahead).
CLOCK: Final[Callable[[], float]] = time.time
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_.@+-]{1,64}")
_APP_PREFIX: Final = re.compile(r"[A-Za-z0-9_.-]{0,64}")
#: The value of a ``sid:`` record. Any value at a record's own name ends the session; under an
#: earlier name only the earlier value (1) counts, which only the code before key prefixes wrote.
SESSION_ENDED: Final = "ended"
#: The value of a ``user:`` record starts so: ``g:`` and the user's session generation, in hex.
GENERATION_PREFIX: Final = "g:"
GENERATION_BYTES: Final = 16
#: The session data's key for the generation its user had at login (with revocation on, a logged-in
#: session only): written by the adapters when they sign, taken out when they read (never the application's).
GENERATION_KEY: Final = "_b2sw_generation"

#: Longest group id, in characters.
MAX_GROUP_LENGTH: Final = 64
#: What a group id may be: it names a store key as it is (no ":", which separates a key's parts, no braces,
#: which Redis Cluster reads as a hash tag) and is written into links and logs as it is.
GROUP_ID: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def check_group(group: object) -> str:
    """``group`` as a link group id; ValueError (TypeError for a non-str) saying what one may be."""
    if not isinstance(group, str):
        raise TypeError(f"group must be a str such as 'course-42', not {type(group).__name__}")
    if not GROUP_ID.fullmatch(group):
        raise ValueError(
            f"group must be 1 to {MAX_GROUP_LENGTH} letters, digits, '_', '.' or '-' (it names a store key and is "
            f"written into links as it is), such as 'course-42'; got {group[:80]!r}"
        )
    return group


def issued_now(clock: Callable[[], float]) -> int:
    """The issue time of a link signed now by ``clock`` (Unix seconds): Unix microseconds."""
    return int(clock() * 1_000_000)


def single_use_key(nonce: str) -> str:
    return f"{KEY_PREFIX}once:{nonce}"


def budget_key(nonce: str, once_key: str | None = None) -> str:
    """The byte budget of a file link: ``once-budget:{<its once record's name>}``, in that record's cluster slot
    (docs/revocation.md, "A file link's budget"); ``once_key``: that name as the store sees it, when it is not
    ``single_use_key(nonce)`` (a Django cache adds its ``KEY_PREFIX`` and version)."""
    return f"{KEY_PREFIX}once-budget:{{{single_use_key(nonce) if once_key is None else once_key}}}"


def check_key_prefix(value: object, name: str) -> str:
    """An application's key prefix: letters, digits, ``_``, ``.``, ``-`` (no ``:``, which separates the parts)."""
    if not isinstance(value, str) or not _APP_PREFIX.fullmatch(value):
        raise ValueError(
            f"{name} must be a str of at most 64 letters, digits, '_', '.' or '-' (it names this application's "
            f"records, so that applications sharing one Redis keep theirs apart); got {value!r}"
        )
    return value


def missing_key_prefix(prefix: str, setting: str) -> str | None:
    """Why session revocation cannot run without a key prefix (None when it has one); ``setting``: its name
    (docs/revocation.md, "Names, and the names of earlier releases")."""
    if prefix:
        return None
    return (
        f"{setting} must name this site (e.g. 'shop'): sites sharing a Redis would otherwise overwrite each other's "
        "revocation records (a user id of one is a user id of the other), and a session one of them ended would "
        "come back. Choose a name no other site on that Redis uses, and keep it"
    )


def _namespace(prefix: str) -> str:
    # "blake2sign_web:" + "<prefix>:" + "<kind>:<id>". A prefix has no ":", an id in a key has none either
    # (plain ids, hex, "~" + hex), so no two (prefix, kind, id) make the same key, "" included.
    return f"{KEY_PREFIX}{prefix}:" if prefix else KEY_PREFIX


def session_key(session_id: bytes, prefix: str = "") -> str:
    return f"{_namespace(prefix)}sid:{session_id.hex()}"


def user_key(user_id: object, prefix: str = "") -> str:
    """The not-before key of a user; ids that are not plain (spaces, long, non-ASCII) are hashed: ``~`` and 32 hex
    digits, which no plain id can spell."""
    text = str(user_id)
    if not _PLAIN_ID.fullmatch(text):
        text = "~" + _id_digest(text)
    return f"{_namespace(prefix)}user:{text}"


def group_key(group: str, prefix: str = "") -> str:
    """The revocation record of a link group (``check_group``: no ":", so no other kind's name)."""
    return f"{_namespace(prefix)}group:{group}"


def session_keys(session_id: bytes, prefix: str = "", earlier: bool = False) -> list[str]:
    """The names a session's record is read under: its own, then (``earlier``, with a prefix) the one without it,
    which releases before key prefixes wrote (docs/revocation.md, "Names, and the names of earlier releases")."""
    keys = [session_key(session_id, prefix)]
    if prefix and earlier:
        keys.append(session_key(session_id))
    return keys


def user_keys(user_id: object, prefix: str = "", earlier: bool = False) -> list[str]:
    """The names a user's record is read under: its own, then (``earlier``) the earlier names that differ from it: the
    name without the prefix, then that of releases before key prefixes (docs/revocation.md, "Names, and the
    names of earlier releases")."""
    keys = [user_key(user_id, prefix)]
    if not earlier:
        return keys
    if prefix:
        keys.append(user_key(user_id))
    text = str(user_id)
    legacy = f"{KEY_PREFIX}user:{text if _PLAIN_ID.fullmatch(text) else 'h' + _id_digest(text)}"
    if legacy not in keys:
        keys.append(legacy)
    return keys


def _id_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def new_session_id() -> bytes:
    """The id of a new session: random, never derived (see ``derived_session_id`` for cookies without one)."""
    return secrets.token_bytes(SESSION_ID_SIZE)


def derived_session_id(token: str) -> bytes:
    """The session id of a verified cookie that carries none: the same cookie always gets the same id, so that
    ending its session refuses every copy of it (docs/revocation.md, "Which sessions a record refuses")."""
    return hashlib.blake2b(
        token.encode("utf-8", "surrogatepass"), digest_size=SESSION_ID_SIZE, person=b"b2sw-derived-sid"
    ).digest()


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


def new_generation() -> str:
    """A user's new session generation ("log out everywhere"): random, so no session can carry it beforehand."""
    return secrets.token_hex(GENERATION_BYTES)


def generation_record(generation: str, *, clock: Callable[[], float] = CLOCK) -> str:
    """The ``user:`` record of a generation written now (by ``clock``): ``g:<hex>:<Unix seconds>``; the time is
    for migrated cookies, which cannot carry a generation."""
    return f"{GENERATION_PREFIX}{generation}:{int(clock())}"


def recorded_generation(record: str | bytes | int | None) -> str:
    """The generation a login stamps on its session, from its user's record as read: "" if there is none, or if it
    is an earlier release's cut-off time, which keeps its own rule."""
    if record is None or isinstance(record, int):
        return ""
    text = record.decode("ascii", "replace") if isinstance(record, bytes) else str(record)
    return text[len(GENERATION_PREFIX) :].partition(":")[0] if text.startswith(GENERATION_PREFIX) else ""


def parse_not_before(value: str | bytes | int) -> tuple[int, bytes | None] | None:
    """A cut-off record of an earlier release: its second and kept session id; None if it is not one."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    text = str(value)
    seconds, _, kept = text.partition(":")
    if not seconds.isascii() or not seconds.isdigit():
        return None
    if not kept:
        return int(seconds), None
    try:
        kept_id = bytes.fromhex(kept)
    except ValueError:
        return None
    if len(kept_id) != SESSION_ID_SIZE:
        return None
    return int(seconds), kept_id


def earlier_session_record(value: object | None) -> bool:
    """A ``sid:`` record under the name without a prefix: ``1`` (before key prefixes) or ``ended`` (after)."""
    return value in (1, b"1", "1", SESSION_ENDED, SESSION_ENDED.encode())


def earlier_not_before(value: str | bytes | int, *, previous: bool) -> bool:
    """Whether a ``user:`` record under an earlier name is in the format the code that used that name wrote (Unix
    seconds; ``previous``, the name without a prefix: also ``<seconds>:<kept session id or nothing>``)."""
    if isinstance(value, int):
        return True
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
    if text.isascii() and text.isdigit():
        return True
    return previous and not text.startswith(GENERATION_PREFIX) and parse_not_before(text) is not None
