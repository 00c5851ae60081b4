"""Server-side state for revocation and single-use links, without a framework: keys, lifetimes, decisions.

Signed cookies and signed links need no store, which is their point; this module is the
small, optional exception. Four kinds of record, each with a TTL so the store never grows:

- ``once:<nonce>``: a single-use link was used. Written with SET NX (atomic: of any number
  of concurrent first uses, on any number of machines, exactly one wins) and kept until
  the link expires, plus a margin for clocks that run behind. Its value is a digest of
  the client that used it.
- ``once-budget:{<once record's name>}``: for a link to a file, the bytes the same client may
  still fetch with Range requests after the first use (the file's size, once): an interrupted
  download resumes, a download manager fetches in pieces, and a used link never yields the
  file again whole nor more than once more in pieces (see ``continuation_cost``). Kept as its
  ``once``, and in its cluster slot (``budget_key``).
- ``sid:<session id>``: a session was ended (logout, flush). Every token of a session keeps its
  id, however often it is re-signed, and none is signed once the record exists; so the record is
  kept for the longest any token of a session can live (``record_ttl``), from the moment it is
  written, plus the clocks' margins: a copy re-signed just before the logout cannot outlive it.
- ``user:<user id>``: the user's session generation, ``g:<random hex>``, written by "log out
  everywhere". Each session of a logged-in user carries the generation its user had when it
  logged in (read at login); a session whose generation is not the one recorded is refused. A
  new login reads the new generation, so it works at once, and every session that existed before
  is refused, however often re-signed: no clock is compared. Kept as long as a ``sid:`` record:
  by then every session of an earlier generation has ended. (Records of earlier releases hold a
  cut-off time, ``<seconds>:<kept session>``, and keep their rule until they expire.)

Session and user keys carry an application's prefix when it has one
(``blake2sign_web:<prefix>:sid:...``), so that applications sharing one Redis never read or
overwrite each other's records.

The adapters (``django.revocation``, ``starlette.revocation``) do the I/O; what is decided
here is shared so that both decide alike.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import parse_qsl, unquote

from .formats import SESSION_ID_SIZE
from .serializer import CLOCK_SKEW

if TYPE_CHECKING:
    from .files import ByteRange

#: Prefix of every key this project writes, so they can be told from the application's own.
KEY_PREFIX: Final = "blake2sign_web:"
#: The wall clock that dates records and their lifetimes; a store may be given another (a test's server ahead).
CLOCK: Final[Callable[[], float]] = time.time
#: What to do when the store cannot be reached in time.
Policy = Literal["closed", "open"]
POLICIES: Final = ("closed", "open")
#: Default seconds to wait for the store before applying the policy.
DEFAULT_TIMEOUT: Final = 0.5
#: Default seconds by which the clocks of the servers sharing the store may differ (see ``is_revoked``).
DEFAULT_CLOCK_SKEW: Final = 5.0
#: The largest clock-skew allowance accepted: beyond it, clocks need fixing, not a wider window.
MAX_CLOCK_SKEW: Final = 600
#: Seconds every record outlives what it guards, at least: a server whose clock runs behind the one that
#: wrote it still accepts the link or token that long. The core's own tolerance for clocks (tokens dated up
#: to this far ahead load) is the bound: a record costs a few bytes, a record gone too early is a bypass.
RECORD_MARGIN: Final = CLOCK_SKEW
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


#: The most replicas a write may be made to wait for (``wait_replicas``): more is a configuration mistake.
MAX_WAIT_REPLICAS: Final = 16
#: URL schemes for a Redis Cluster and for a primary that Sentinel manages; ``redis://``, ``rediss://`` and
#: ``unix://`` name one server, as redis-py reads them.
CLUSTER_SCHEMES: Final = ("redis+cluster", "rediss+cluster")
SENTINEL_SCHEMES: Final = ("redis+sentinel", "rediss+sentinel")
_DEFAULT_PORTS: Final = {"cluster": 6379, "sentinel": 26379}


class StoreUnavailable(Exception):
    """The store did not answer (refused, reset, timed out): the caller applies its policy."""


class NotReplicated(StoreUnavailable):
    """A write was made on the primary but fewer replicas than ``wait_replicas`` acknowledged it in time.

    A revocation stays written on the primary (it is lost only if that primary dies before
    replicating it); a single-use link's first use is undone first, so that the link is not
    used up by a request that was refused.
    """


@dataclass(frozen=True)
class StoreLocation:
    """Where a store URL points: one server (``url`` as given, for redis-py), a cluster, or a Sentinel service."""

    kind: Literal["single", "cluster", "sentinel"]
    url: str
    #: Cluster: nodes to start from (any of them, the client learns the rest); Sentinel: the sentinels.
    nodes: tuple[tuple[str, int], ...] = ()
    #: Sentinel: the name of the monitored primary (``sentinel monitor <name> ...``).
    service: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False
    #: Sentinel: the sentinels' own password, if they have one (``?sentinel_password=``).
    sentinel_password: str | None = None


def parse_store_url(url: str) -> StoreLocation:
    """Read a store URL. Besides redis-py's own (``redis://``, ``rediss://``, ``unix://``, one server):

    - ``redis+cluster://[user:password@]host:port[,host:port...]`` (``rediss+cluster://`` for TLS): a
      Redis Cluster, from any of its nodes (give several: a node that is down is skipped). No database:
      a cluster has only database 0.
    - ``redis+sentinel://[user:password@]host:port[,host:port...]/<service>[/<db>]`` (``rediss+sentinel://``):
      the primary that the sentinels at those addresses monitor as ``<service>``; the credentials are the
      data nodes' (``?sentinel_password=`` for the sentinels' own). Ports default to 6379 (cluster) and
      26379 (sentinels).

    Anything else (client certificates, other options) is for a client you make and pass in.
    """
    scheme, separator, rest = url.partition("://")
    scheme = scheme.lower()
    if not separator:
        raise ValueError(f"a store URL needs a scheme (redis://, rediss://, redis+cluster://, ...); got {url!r}")
    if scheme not in CLUSTER_SCHEMES + SENTINEL_SCHEMES:
        return StoreLocation("single", url)
    kind: Literal["cluster", "sentinel"] = "cluster" if scheme in CLUSTER_SCHEMES else "sentinel"
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    nodes = tuple(_address(part, _DEFAULT_PORTS[kind], url) for part in hosts.split(",") if part)
    if not nodes:
        raise ValueError(f"the store URL {url!r} names no host")
    parts = [unquote(p) for p in path.split("/") if p]
    options = dict(parse_qsl(query))
    sentinel_password = options.pop("sentinel_password", None)
    if options:
        raise ValueError(
            f"the store URL {url!r} has options this project does not read ({', '.join(options)}): make the client "
            "yourself and pass it in"
        )
    if kind == "cluster":
        if parts not in ([], ["0"]) or sentinel_password is not None:
            raise ValueError(f"a cluster URL has no database nor sentinel password (a cluster has only 0): {url!r}")
        return StoreLocation(kind, url, nodes, "", 0, username, password, scheme.startswith("rediss"))
    if not parts or len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise ValueError(
            f"a sentinel URL ends with /<service>[/<db>] (redis+sentinel://host:26379/mymaster/0): {url!r}"
        )
    db = int(parts[1]) if len(parts) == 2 else 0
    return StoreLocation(
        kind, url, nodes, parts[0], db, username, password, scheme.startswith("rediss"), sentinel_password
    )


def _address(text: str, default_port: int, url: str) -> tuple[str, int]:
    if text.startswith("["):  # [IPv6]:port
        host, _, port = text[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not host or (port and not port.isdigit()):
        raise ValueError(f"bad host:port {text!r} in the store URL {url!r}")
    return host, int(port) if port else default_port


def check_wait_replicas(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WAIT_REPLICAS:
        raise ValueError(
            f"{name} must be a number of replicas from 0 (do not wait) to {MAX_WAIT_REPLICAS} that must have each "
            f"revocation and single-use record before it counts as done; got {value!r}"
        )
    return value


def wait_milliseconds(timeout: float) -> int:
    """How long a write waits for its replicas (WAIT): half the store's timeout, so that the write and its wait
    both fit in it, and a replica that is late is reported as such (``NotReplicated``), not as a timeout."""
    return max(1, int(timeout * 500))


# The Redis scripts of both adapters (``EVAL``): each runs on one node, its keys in one slot.

#: First use of a file link (record the client, set the byte budget), or a continuation by the same
#: client that the budget still covers (deduct it); one atomic script. Returns 2 for a first use, 1 for a
#: continuation, 0 to refuse. Its two keys share a cluster slot (``revocation.budget_key``).
CONSUME_FILE_LINK_SCRIPT: Final = """
if redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then
    redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[2])
    return 2
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

#: Undo a first use that its replicas did not acknowledge (``wait_replicas``): only if it is still this
#: client's record, so that a refused request does not use the link up. KEYS: once, budget; ARGV: the value.
UNDO_FIRST_USE_SCRIPT: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1], KEYS[2])
end
return 0
"""


def single_use_key(nonce: str) -> str:
    return f"{KEY_PREFIX}once:{nonce}"


def budget_key(nonce: str, once_key: str | None = None) -> str:
    """The byte budget of a file link: ``once-budget:{<its once record's name>}``, in that record's cluster slot.

    Redis Cluster hashes only what is between the first ``{`` and the next ``}`` of a key
    that has them (a hash tag), and the whole key otherwise. The ``once`` record's name has
    no braces (nonces are base64url), so it is hashed whole; the budget carries that name as
    its tag, and so lands in the same slot: the one script that reads and writes both runs
    on a cluster. The ``once`` name is unchanged from earlier releases (a link used before
    an upgrade stays used after it). ``once_key``: that name as the store sees it, when it
    is not ``single_use_key(nonce)`` (a Django cache adds its ``KEY_PREFIX`` and version).
    """
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
    """Why session revocation cannot run without a key prefix (None when it has one); ``setting``: its name.

    A user id of one site is a user id of another: without a prefix, sites sharing a Redis
    overwrite each other's records, and a session one of them ended comes back when the other's
    shorter record expires. A derived default would change with every secret rotation.
    """
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
    """The not-before key of a user; ids that are not plain (spaces, long, non-ASCII) are hashed.

    A plain id stands for itself; a hashed one is ``~`` and 32 hex digits, which no plain id
    can spell (``~`` is not in the plain alphabet), so two users never share a key.
    """
    text = str(user_id)
    if not _PLAIN_ID.fullmatch(text):
        text = "~" + _id_digest(text)
    return f"{_namespace(prefix)}user:{text}"


def session_keys(session_id: bytes, prefix: str = "") -> list[str]:
    """The names a session's record is read under: its own, then (with a prefix) the one without it.

    Releases before this one wrote records without a prefix (it was optional); an application
    that now has one still reads its own earlier records, so an upgrade brings no ended session back.
    """
    keys = [session_key(session_id, prefix)]
    if prefix:
        keys.append(session_key(session_id))
    return keys


def user_keys(user_id: object, prefix: str = "") -> list[str]:
    """The names a user's record is read under: its own, then the earlier names that differ from it.

    With a prefix, second: the name without it, which releases with an optional prefix wrote
    (cut-off records, ``<seconds>:<kept id>``). Last: the name of releases before key prefixes,
    where hashed ids were ``h`` and 32 hex digits, which a plain id could also be; a record there
    counts only in that code's format (Unix seconds alone), so a plain user named ``h...`` cannot
    end another user's sessions (``is_revoked``, ``prefixed``).
    """
    keys = [user_key(user_id, prefix)]
    if prefix:
        keys.append(user_key(user_id))
    text = str(user_id)
    legacy = f"{KEY_PREFIX}user:{text if _PLAIN_ID.fullmatch(text) else 'h' + _id_digest(text)}"
    if legacy not in keys:
        keys.append(legacy)
    return keys


def _id_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def derived_session_id(token: str) -> bytes:
    """The session id of a verified cookie that carries none: the same cookie always gets the same id.

    Cookies of another engine being migrated (Django's ``signed_cookies``, Starlette's own
    middleware) and this project's tokens signed before revocation was turned on have no
    session id. Deriving one from the cookie itself (it is verified, so nobody chose it)
    lets such a cookie be ended like any other: the session it is re-issued as keeps this
    id, so logging that session out also refuses every copy of the original cookie.
    """
    return hashlib.blake2b(
        token.encode("utf-8", "surrogatepass"), digest_size=SESSION_ID_SIZE, person=b"b2sw-derived-sid"
    ).digest()


def ttl_until(expires_at: float, now: float) -> int:
    """Whole seconds from ``now`` to ``expires_at``, rounded up, at least 1 (a store refuses 0)."""
    return max(1, math.ceil(expires_at - now))


def single_use_ttl(expires_at: float, skew: float = RECORD_MARGIN, *, clock: Callable[[], float] = CLOCK) -> int:
    """Seconds to keep a single-use record: until the link expires, by any clock up to ``skew`` behind ours.

    A server whose clock is slow still takes the link as valid after it expired by ours;
    the record that refuses a second use must outlive that. ``skew`` never goes below
    ``RECORD_MARGIN``: a longer record costs nothing, a shorter one lets a link be used twice. ``clock``: the
    store's (``CLOCK`` unless a test gives it another).
    """
    return ttl_until(expires_at, clock()) + math.ceil(max(skew, RECORD_MARGIN))


def record_ttl(lifetime: int, skew: float = RECORD_MARGIN) -> int:
    """Seconds to keep a ``sid:`` or ``user:`` record, from when it is written: until every token it refuses has ended.

    Once the record exists, every check refuses those tokens, so none is re-signed: the last was
    signed at most now, by a clock up to ``skew`` ahead of ours (dated that much later), and lives
    at most ``lifetime`` seconds (with revocation on, the adapters refuse a ``set_expiry()`` longer
    than their lifetime, see ``check_expiry_within``); a server whose clock is up to ``skew`` (never
    less than ``RECORD_MARGIN``) behind ours accepts it that much longer. The presented cookie's
    own end is no bound: a copy of it may have been re-signed since, with a later one.
    """
    return max(1, lifetime) + math.ceil(skew) + math.ceil(max(skew, RECORD_MARGIN))


def check_expiry_within(seconds: float, lifetime: int, setting: str) -> None:
    """ValueError for a ``set_expiry()`` that would outlive ``lifetime``, the longest a record is kept.

    ``seconds``: how long the expiry asked for lasts from now. With revocation on, an ended
    session's record lives ``lifetime`` (``record_ttl``): a token that lived longer would come
    back after it. ``setting``: the lifetime's name in the user's framework.
    """
    if seconds > lifetime:
        raise ValueError(
            f"set_expiry() of {math.ceil(seconds)} seconds is longer than {setting} ({lifetime} seconds), the "
            f"longest a session lives with revocation on (an ended session's record is kept that long): raise "
            f"{setting}, or choose a shorter expiry"
        )


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


def new_generation() -> str:
    """A user's new session generation ("log out everywhere"): random, so no session can carry it beforehand."""
    return secrets.token_hex(GENERATION_BYTES)


def generation_record(generation: str, *, clock: Callable[[], float] = CLOCK) -> str:
    """The ``user:`` record of a generation written now (by ``clock``): ``g:<hex>:<Unix seconds>``.

    The time is for cookies that cannot carry a generation: another engine's, accepted during a
    migration (and written by servers still running it), are refused if signed by then (plus the
    clocks' allowance), as before generations.
    """
    return f"{GENERATION_PREFIX}{generation}:{int(clock())}"


def recorded_generation(record: str | bytes | int | None) -> str:
    """The generation a login stamps on its session, from its user's record as read: "" if there is none.

    A record of an earlier release (a cut-off time) also gives "": that record keeps its own rule.
    """
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


def is_revoked(
    issued_at: int,
    *,
    session_id: bytes | None = None,
    generation: str | None = None,
    session_records: Sequence[object | None] = (),
    user_records: Sequence[str | bytes | int | None] = (),
    skew: float = DEFAULT_CLOCK_SKEW,
    prefixed: bool = False,
) -> bool:
    """Whether a verified session must be refused, given its records as read (``session_keys``, ``user_keys``).

    A session is refused if it was ended by its id, or if its user has a generation record
    (``g:<hex>:<seconds>``, "log out everywhere") and the session carries another generation
    (``generation``: what it was stamped with at login, "" for none). ``generation=None``: a
    cookie of another engine being migrated, which cannot carry one, is refused if it was signed
    by the record's time plus ``skew`` (a server still running that engine can log the user in
    after it: its clock decides, as before generations). The first record
    of each list is under the current name; the others, under earlier names (``session_keys``,
    ``user_keys``, read with a key prefix when ``prefixed``), count only in the formats earlier
    releases wrote there. A cut-off record of an earlier release keeps its rule until it expires:
    sessions issued at or before the cut-off plus ``skew`` are refused, but the one it kept.
    """
    if session_records and (
        session_records[0] is not None or any(_earlier_session_record(r) for r in session_records[1:])
    ):
        return True
    for position, record in enumerate(user_records):
        if record is None or (position and not _earlier_not_before(record, previous=prefixed and position == 1)):
            continue
        text = record.decode("ascii", "replace") if isinstance(record, bytes) else str(record)
        if text.startswith(GENERATION_PREFIX):
            current, _, written = text[len(GENERATION_PREFIX) :].partition(":")
            if generation is None:  # a migrated cookie: by the clock
                if not written.isascii() or not written.isdigit() or issued_at <= int(written) + skew:
                    return True
            elif not hmac.compare_digest(current.encode("ascii", "replace"), generation.encode("ascii", "replace")):
                return True
            continue
        cut_off = parse_not_before(text)
        if cut_off is None:  # not written by us: refuse rather than guess
            return True
        cutoff, kept = cut_off
        if kept is not None and session_id == kept:
            continue
        if issued_at <= cutoff + skew:
            return True
    return False


def _earlier_session_record(value: object | None) -> bool:
    """A ``sid:`` record under the name without a prefix: ``1`` (before key prefixes) or ``ended`` (after)."""
    return value in (1, b"1", "1", SESSION_ENDED, SESSION_ENDED.encode())


def _earlier_not_before(value: str | bytes | int, *, previous: bool) -> bool:
    """Whether a ``user:`` record under an earlier name is in a format the code that used that name wrote.

    Unix seconds alone, before key prefixes; ``previous``: the name without a prefix, where the
    releases whose prefix was optional also wrote ``<seconds>:<kept session id or nothing>``.
    """
    if isinstance(value, int):
        return True
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
    if text.isascii() and text.isdigit():
        return True
    return previous and not text.startswith(GENERATION_PREFIX) and parse_not_before(text) is not None


def check_policy(value: object, name: str) -> Policy:
    if value not in POLICIES:
        raise ValueError(f"{name} must be 'closed' (refuse when the store is down) or 'open'; got {value!r}")
    return value


def check_clock_skew(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_CLOCK_SKEW:
        raise ValueError(
            f"{name} must be a number of seconds from 0 to {MAX_CLOCK_SKEW} (how far the clocks of the servers "
            f"sharing the store may differ); got {value!r}"
        )
    return float(value)


def check_timeout(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 60:
        raise ValueError(f"{name} must be a number of seconds greater than 0 and at most 60; got {value!r}")
    return float(value)
