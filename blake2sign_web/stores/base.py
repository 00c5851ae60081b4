"""What every store of revocation and single-use records shares, whatever the framework: its failures,
where a store URL points, waiting for replicas, the Redis scripts, and the redis-py client for a URL.

The adapters do the I/O (a Django cache, ``redis.asyncio``); what a store URL means, how long a write waits
for its replicas and what the scripts do are decided here, once.
"""

from __future__ import annotations

import inspect
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import parse_qsl, unquote

if TYPE_CHECKING:
    from redis.asyncio import Redis, RedisCluster

#: Every log line about revocation and single-use records and their stores, in both frameworks.
logger: Final = logging.getLogger("blake2sign_web.revocation")
#: The most replicas a write may be made to wait for (``wait_replicas``): more is a configuration mistake.
MAX_WAIT_REPLICAS: Final = 16
#: URL schemes for a Redis Cluster and for a primary that Sentinel manages; ``redis://``, ``rediss://`` and
#: ``unix://`` name one server, as redis-py reads them.
CLUSTER_SCHEMES: Final = ("redis+cluster", "rediss+cluster")
SENTINEL_SCHEMES: Final = ("redis+sentinel", "rediss+sentinel")
_DEFAULT_PORTS: Final = {"cluster": 6379, "sentinel": 26379}
#: Query parameters of a store URL whose values are credentials (``password``, ``sentinel_password``, a token).
_SECRET_PARAMETER: Final = re.compile(r"pass|secret|token|auth|credential", re.IGNORECASE)


def redacted(url: str) -> str:
    """``url`` as a message or a log line may show it: its credentials as ``***``.

    Everything between the scheme and the last ``@`` (``user:password@``; a password with an unescaped
    ``/``, ``?`` or ``#`` in it too, which a parser would split elsewhere), and the value of every query
    parameter named like a credential (``?password=``, ``?sentinel_password=``).
    """
    scheme, separator, rest = url.partition("://") if "://" in url else ("", "", url)
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    head, question, query = rest.partition("?")
    if question:
        query = "&".join(
            f"{name}=***" if _SECRET_PARAMETER.search(name) else part
            for part in query.split("&")
            for name in (part.partition("=")[0],)
        )
    return f"{scheme}{separator}{head}{question}{query}"


class StoreUnavailable(Exception):
    """The store did not answer (refused, reset, timed out): the caller applies its policy."""


class NotReplicated(StoreUnavailable):
    """A write was made on the primary but fewer replicas than ``wait_replicas`` acknowledged it in time (a
    single-use link's first use is undone first: docs/revocation.md, "Durability: wait_replicas")."""


@dataclass(frozen=True)
class StoreLocation:
    """Where a store URL points: one server (``url`` as given, for redis-py), a cluster, or a Sentinel service.
    Its repr shows no credential (``redacted``)."""

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

    def __repr__(self) -> str:
        shown = ("***" if value else value for value in (self.password, self.sentinel_password))
        password, sentinel_password = shown
        return (
            f"StoreLocation(kind={self.kind!r}, url={redacted(self.url)!r}, nodes={self.nodes!r}, "
            f"service={self.service!r}, db={self.db!r}, username={self.username!r}, password={password!r}, "
            f"tls={self.tls!r}, sentinel_password={sentinel_password!r})"
        )


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
    scheme, shown = scheme.lower(), redacted(url)
    if not separator:
        raise ValueError(f"a store URL needs a scheme (redis://, rediss://, redis+cluster://, ...); got {shown!r}")
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
    nodes = tuple(_address(part, _DEFAULT_PORTS[kind], shown) for part in hosts.split(",") if part)
    if not nodes:
        raise ValueError(f"the store URL {shown!r} names no host")
    parts = [unquote(p) for p in path.split("/") if p]
    options = dict(parse_qsl(query))
    sentinel_password = options.pop("sentinel_password", None)
    if options:
        raise ValueError(
            f"the store URL {shown!r} has options this project does not read ({', '.join(options)}): make the client "
            "yourself and pass it in"
        )
    if kind == "cluster":
        if parts not in ([], ["0"]) or sentinel_password is not None:
            raise ValueError(f"a cluster URL has no database nor sentinel password (a cluster has only 0): {shown!r}")
        return StoreLocation(kind, url, nodes, "", 0, username, password, scheme.startswith("rediss"))
    if not parts or len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise ValueError(
            f"a sentinel URL ends with /<service>[/<db>] (redis+sentinel://host:26379/mymaster/0): {shown!r}"
        )
    db = int(parts[1]) if len(parts) == 2 else 0
    return StoreLocation(
        kind, url, nodes, parts[0], db, username, password, scheme.startswith("rediss"), sentinel_password
    )


def _address(text: str, default_port: int, shown: str) -> tuple[str, int]:
    if text.startswith("["):  # [IPv6]:port
        host, _, port = text[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", "")
    if not host or (port and not port.isdigit()):
        raise ValueError(f"bad host:port {text!r} in the store URL {shown!r}")
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


#: INCRBY that never creates its key: nil if it does not exist (Django's ``incr`` raises ValueError then):
#: ``RedisStoreCache.incr``.
INCR_EXISTING_SCRIPT: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return false
"""


def not_replicated(action: str, acknowledged: int, wanted: int, timeout: float) -> NotReplicated:
    """The failure of a write that fewer than ``wanted`` replicas acknowledged within the store's ``timeout``."""
    return NotReplicated(
        f"Redis could not {action} durably: {acknowledged} of the {wanted} replicas required "
        f"acknowledged it within {wait_milliseconds(timeout)} ms"
    )


def redis_client(location: StoreLocation, options: dict[str, Any], *, asynchronous: bool) -> Any:
    """A redis-py client for a parsed store URL, blocking or ``redis.asyncio`` (the same classes and arguments).

    One server: ``Redis.from_url``; a cluster: ``RedisCluster`` from its nodes; Sentinel: the primary
    the sentinels monitor, followed through failovers. ``options``: the client's (socket timeouts...).
    """
    if asynchronous:
        import redis.asyncio as redis_module
        from redis.asyncio import cluster, sentinel
    else:
        import redis as redis_module  # type: ignore[no-redef]
        from redis import cluster, sentinel  # type: ignore[no-redef]
    if location.kind == "single":
        try:
            return redis_module.Redis.from_url(location.url, **options)
        except ValueError as error:  # its words may quote a piece of the password (an unescaped "#" ends the host)
            raise ValueError(unreadable_url(location.url, error)) from None
    credentials: dict[str, Any] = {"username": location.username, "password": location.password}
    if location.kind == "cluster":
        nodes = [cluster.ClusterNode(host, port) for host, port in location.nodes]
        return cluster.RedisCluster(startup_nodes=nodes, ssl=location.tls, **credentials, **options)
    sockets = {k: v for k, v in options.items() if k in ("socket_timeout", "socket_connect_timeout")}
    # Any: redis-py types Sentinel.__init__ from 8.2 on and not before; the call is the same on both.
    sentinel_class: Any = sentinel.Sentinel
    sentinels = sentinel_class(
        list(location.nodes),
        sentinel_kwargs={"password": location.sentinel_password, "ssl": location.tls, **sockets},
        ssl=location.tls,
        **options,
    )
    return sentinels.master_for(location.service, db=location.db, **credentials)


def unreadable_url(url: str, error: Exception) -> str:
    """Why redis-py could not read ``url``, without its credentials: redis-py's own words only for a URL that
    has none (a password with ``#``, ``?`` or ``/`` in it is split there, and the rest quoted as a port)."""
    shown = redacted(url)
    if shown == url:
        return f"redis-py cannot read the store URL {shown!r}: {error}"
    return (
        f"redis-py cannot read the store URL {shown!r} ({type(error).__name__}; its words are not shown, as they "
        "may quote the password): percent-encode the password's '#', '?', '/', '@' and ':' (%23, %3F, %2F, %40, %3A)"
    )


def client_from_url(url: str, timeout: float) -> Redis | RedisCluster:
    """A ``redis.asyncio`` client for a store URL (``parse_store_url``), with ``timeout`` on its sockets."""
    sockets = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    client: Redis | RedisCluster = redis_client(parse_store_url(url), sockets, asynchronous=True)
    return client


def client_problem(client: object, *, asynchronous: bool = True) -> str | None:
    """Why ``client`` cannot be a ``RedisStore``'s (None: it can): a redis-py client (it has ``pipeline``), of
    ``redis.asyncio`` for an ``asynchronous`` store, blocking for the other (the wrong kind fails on each call)."""
    execute = getattr(client, "execute_command", None)
    if callable(getattr(client, "pipeline", None)) and inspect.iscoroutinefunction(execute) == asynchronous:
        return None
    kind = "redis.asyncio.Redis, a redis.asyncio.RedisCluster" if asynchronous else "redis.Redis, a redis.RedisCluster"
    return (
        f"RedisStore needs a {kind} or a URL (redis://, redis+cluster://, redis+sentinel://), "
        f"not {type(client).__module__}.{type(client).__name__}"
    )


def store_problem(value: object, option: str, needs: str) -> str | None:
    """Why ``value`` cannot be the store ``option`` names (it has no ``needs`` method, as a ``RedisStore`` has);
    None: it can, or it is None (no store)."""
    if value is None or callable(getattr(value, needs, None)):
        return None
    return f"{option} must be a RedisStore, not {type(value).__name__}"


def check_store(value: object, option: str, needs: str) -> None:
    """TypeError if ``value`` cannot be the store ``option`` names (``store_problem``)."""
    if (problem := store_problem(value, option, needs)) is not None:
        raise TypeError(problem)


def check_store_kind(
    store: object, asynchronous: bool, option: str, user: str, fix: str, method: str = "is_revoked"
) -> None:
    """TypeError unless ``store`` (what ``option`` names, for ``user``: the adapter) is of the kind its adapter
    calls: an asyncio store (its ``method`` a coroutine function) for one on an event loop (``asynchronous``), a
    blocking one for the other. ``fix``: what to set instead."""
    if inspect.iscoroutinefunction(getattr(store, method, None)) == asynchronous:
        return
    if asynchronous:
        found, wanted = "a blocking store (each of its calls would stop the event loop)", "an asyncio one"
    else:
        found, wanted = (
            "an asyncio store (its calls are coroutines, which a blocking view never runs)",
            "a blocking one",
        )
    raise TypeError(f"{option} is {found}: {user} needs {wanted}, {fix}")
