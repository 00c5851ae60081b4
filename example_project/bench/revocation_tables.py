"""The page's revocation sections: what revocation adds to one request, and revocation at scale."""

from __future__ import annotations

from typing import Any

from .formatting import us, where_note

COST_FRAMEWORKS = {"django": "Django", "starlette": "Starlette"}
#: What one added cost is "noisy" at: quartiles that reach zero, or span more than this fraction of the median.
COST_NOISE = 0.5


def cost_noisy(row: dict[str, Any]) -> bool:
    q1, median, q3 = float(row["added_us_q1"]), float(row["added_us_median"]), float(row["added_us_q3"])
    return q1 <= 0 or median <= 0 or q3 - q1 > COST_NOISE * median


def revocation_cost_section(part: dict[str, Any]) -> list[str]:
    lines = ["## Revocation: what one request adds", ""]
    if not part:
        return [*lines, "Not run yet: `python -m example_project.bench revocation-cost`.", ""]
    if "error" in part:
        return [*lines, f"Not run: {part['error']}", ""]
    s = part.get("settings", {})
    v = s.get("versions", {})
    given = str(s.get("redis", "")).startswith("given")
    lines += [
        f"{where_note(part)}; Django {v.get('Django', '?')}, Starlette {v.get('starlette', '?')}, redis-py "
        f"{v.get('redis-py', '?')}, Redis {v.get('redis-server', '?')}. What the optional revocation store and "
        "single-use links add to one request, against the same request without them (see "
        "[Revocation: Cost](revocation.md#cost)), in process, "
        + (
            "against the Redis given with `--redis`"
            if given
            else "against a redis-server the benchmark started on 127.0.0.1"
        )
        + f": {s.get('rounds')} interleaved rounds of about {s.get('block_s', 0) * 1000:.0f} ms per configuration; "
        "what Redis adds is taken per round, against the stateless twin in the same round, and summarised by its "
        "median and quartiles. *Sessions*: a read-only request on a logged-in session, the stateless "
        "engine/middleware, then revocation on (one `get_many` / `MGET` of the session's and its user's records). "
        "*Links*: a fresh signed link per request, ordinary, then single-use (one `SET NX`); both sign the link, so "
        "what is added is the nonce and the store. Django: its handler with our middleware and `RequestFactory` "
        "requests, the store Django's `RedisCache`. Starlette: the whole application awaited on one asyncio event "
        "loop (`redis.asyncio`), the stateless requests on the same loop.",
        "",
        f"**On this {s.get('cores')}-core machine the client and the redis-server share the cores**: each round "
        "trip waits for a server that runs beside the client, so these figures are not those of a Redis with "
        "cores of its own (shorter) or across a network (plus its latency).",
        "",
        "| request | stateless | with Redis | added (median) | added (q1-q3) |",
        "|---|---:|---:|---:|---:|",
    ]
    noisy = False
    for framework, title in COST_FRAMEWORKS.items():
        for row in (part.get("results") or {}).get(framework, {}).values():
            spread = f"{us(row['added_us_q1'])} - {us(row['added_us_q3'])}"
            if cost_noisy(row):
                noisy = True
                spread += " (noisy)"
            lines.append(
                f"| {title}, {row['request']}; {row['setting']} | {us(row['stateless_us_median'])} | "
                f"{us(row['with_redis_us_median'])} | {us(row['added_us_median'])} | {spread} |"
            )
    lines.append("")
    if noisy:
        lines += [
            f"*Noisy*: the run's quartiles of what Redis adds reach zero or span more than {COST_NOISE:.0%} of its "
            "median; that figure is not settled by this run (rerun the part on a quieter machine).",
            "",
        ]
    ref = part.get("reference") or {}
    if all(key in ref for key in ("mget_sync", "mget_async", "django_get_many", "redis_client")):
        client = ref["redis_client"]["median_us"]
        get_many = ref["django_get_many"]["median_us"]
        lines += [
            "One raw round trip in the same run (median): redis-py `MGET` of two keys "
            f"{us(ref['mget_sync']['median_us'])} (sync), {us(ref['mget_async']['median_us'])} (`redis.asyncio`, "
            "one `run_until_complete` each). What "
            "Redis adds to a request is that one round trip plus the client's work around it. Django's `RedisCache` "
            f"takes {us(get_many)} for `get_many` of the same two keys: it builds a `redis.Redis` client over its "
            f"connection pool on every call, and building one took {us(client)} in this run (about "
            f"{client / get_many:.0%} of its `get_many`), which is Django's and redis-py's work, not this project's. "
            "Requests without a valid session cookie (anonymous visitors, bots) and ordinary links pay none of this.",
            "",
        ]
    return lines


SCALE_LABELS = {
    "one Redis": "one Redis (one `MGET`)",
    "cluster": "cluster (one `MGET` per slot, two nodes at once)",
}
WRITE_STORES = {"one Redis": "one Redis + replica", "cluster": "cluster"}


def revocation_scale_section(part: dict[str, Any]) -> list[str]:
    lines = ["## Revocation at scale", ""]
    if not part:
        return [*lines, "Not run yet: `python -m example_project.bench revocation-scale`.", ""]
    if "error" in part:
        return [*lines, f"Not run: {part['error']}", ""]
    s = part.get("settings", {})
    v = s.get("versions", {})
    cores = s.get("cores")
    lines += [
        f"{where_note(part)}; redis-py {v.get('redis-py', '?')}, Redis {v.get('redis-server', '?')}. What the "
        "optional revocation store costs as a site grows (see [Revocation: Deployment](revocation.md#scale)): "
        "Starlette's `RedisStore` checking logged-in sessions of "
        f"{s.get('users', 0):,} users (one in 50 logged out everywhere, some sessions ended), against one "
        "redis-server with a replica and against a Redis Cluster of three primaries with a replica each, all "
        "started by the benchmark on 127.0.0.1. A check reads the session's record and its user's: one `MGET` "
        "on one Redis; on the cluster the two records are in different slots, so one `MGET` per slot, sent "
        "together to the two nodes serving them, and the check waits for the slower answer. Django's store reads "
        "the same records through redis-py's synchronous client; it is not measured here.",
        "",
        f"**On this {cores}-core machine the redis-servers (two for one Redis, six for the cluster) and the "
        "application processes share the cores, so these figures are a floor**: they show what the cluster's "
        "extra hop and client work cost, not the capacity it adds when its primaries have machines of their "
        "own (each primary serves a third of the keys).",
        "",
        "### One check, one request at a time: the latency a request adds",
        "",
        f"One process, {s.get('samples', 0):,} checks per store, the two stores alternating.",
        "",
        "| store | median | p99 |",
        "|---|---:|---:|",
    ]
    for name, row in (part.get("latency") or {}).items():
        lines.append(f"| {SCALE_LABELS.get(name, name)} | {us(row['median_us'])} | {us(row['p99_us'])} |")
    throughput = part.get("throughput") or {}
    lines += [
        "",
        "### Checks per second from N processes",
        "",
        f"Each process an asyncio event loop with {s.get('concurrency')} checks in flight (as an ASGI worker "
        f"under load), {s.get('seconds', 0):g} s per run, one Redis and the cluster alternating; checks per "
        "second from all the processes, and the latency of each check under that load.",
        "",
        "| store | processes | checks/s | median latency | p99 latency |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, by_count in throughput.items():
        for count, row in by_count.items():
            lines.append(
                f"| {name} | {count} | {row['checks_per_s']:,.0f} | {us(row['median_us'])} | {us(row['p99_us'])} |"
            )
    lines.append("")
    if throughput:
        lines += ["![Revocation checks per second and their latency, by processes](img/revocation-scale.png)", ""]
    top = max((row["checks_per_s"] for by_count in throughput.values() for row in by_count.values()), default=0.0)
    ceiling = part.get("ceiling")
    if ceiling:
        lines += [
            "The server is not what limits these runs: `redis-benchmark` sends a check's `MGET` "
            f"({ceiling['keys']} keys) to the one Redis {ceiling['one_at_a_time_rps']:,.0f} times per second from "
            f"{ceiling['connections']} connections one at a time, and {ceiling['pipelined_rps']:,.0f} times "
            f"pipelined {ceiling['pipeline']} deep, against the {top:,.0f} checks per second the Python clients "
            "reach at most here.",
            "",
        ]
    lines += [
        "### What `WAIT` adds to a write",
        "",
        f"Writes one at a time, {s.get('write_samples', 0):,} of each, `wait_replicas=0` and `wait_replicas=1` "
        "alternating: `revoke_session` (a logout) and `consume_link` (the first use of a single-use link). "
        "`WAIT` adds one replica's acknowledgement to each write; session checks are reads and never wait.",
        "",
        "| store | write | `wait_replicas=0` median (p99) | `wait_replicas=1` median (p99) | WAIT adds (median) |",
        "|---|---|---:|---:|---:|",
    ]
    for name, by_write in (part.get("writes") or {}).items():
        for write, by_wait in by_write.items():
            plain, waited = by_wait["0"], by_wait["1"]
            lines.append(
                f"| {WRITE_STORES.get(name, name)} | `{write}` | {us(plain['median_us'])} ({us(plain['p99_us'])}) | "
                f"{us(waited['median_us'])} ({us(waited['p99_us'])}) | "
                f"{us(waited['median_us'] - plain['median_us'])} |"
            )
    lines.append("")
    return lines
