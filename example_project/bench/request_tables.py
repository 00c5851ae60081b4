"""The page's tables of what a session adds to a request: callgrind's counts, the clock, the many-user run."""

from __future__ import annotations

import statistics
from typing import Any

from . import callgrind as callgrind_module
from .formatting import kilo, us, where_note
from .targets import LABELS, TITLES, added_ir, baseline_name


def callgrind_section(part: dict[str, Any]) -> list[str]:
    lines = ["### The deterministic instrument: instructions and cache misses per request", ""]
    if "error" in part:
        return [*lines, f"Not run: {part['error']}", ""]
    s = part.get("settings", {})
    lines += [
        f"{where_note(part)}. Blocks of {s.get('requests')} requests in process"
        + (
            f", {s.get('server_requests')} on a server"
            + (f" after {s['server_warmup']} uncounted ones" if s.get("server_warmup") else "")
            if s.get("server_requests")
            else ", no server run"
        )
        + f", {s.get('repeats')} repeats each; caches {' '.join(s.get('caches', []))}. Added over the "
        "session-less baseline, per request: instructions (Ir), L1 data-cache read misses (D1mr), "
        "last-level data misses (DLmr + DLmw), and callgrind's usual estimate of cycles (Ir + 10 x L1 misses + "
        "100 x last-level misses), medians of the repeats. *Cold caches*: each request follows a 12 MiB copy "
        "(more than the simulated last level), as a server's kernel, HTTP parser and event loop run between two "
        "requests; the copy is in the baseline too, so what is added is the session's code and data fetched "
        "from memory again.",
        "",
    ]
    for key, title in (("in_process", "in process"), ("server", "on a server worker")):
        data = part.get(key) or {}
        for framework in ("django", "starlette"):
            by_workload = data.get(framework)
            if not isinstance(by_workload, dict):
                continue
            if "error" in by_workload:
                lines += [f"{TITLES[framework]}, {title}: not run: {by_workload['error'][:300]}", ""]
                continue
            base = baseline_name(framework)
            lines += [
                f"#### {TITLES[framework]}, {title}",
                "",
                "| engine | request | instructions | added | added range | added D1 misses | added LL misses "
                "| added est. cycles | cookie |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for workload in ("api", "read", "write", "cold read", "cold write"):
                rows = by_workload.get(workload) or {}
                if base not in rows:
                    continue
                for engine, row in rows.items():
                    total = statistics.median(row["Ir"])
                    if engine == base:
                        lines.append(f"| {engine} | {LABELS[workload]} | {kilo(total)} | baseline | | | | | |")
                        continue
                    cycles = statistics.median(callgrind_module.estimated_cycles(row)) - statistics.median(
                        callgrind_module.estimated_cycles(rows[base])
                    )
                    added = added_ir(rows, engine, base)
                    d1 = statistics.median(added_ir(rows, engine, base, "D1mr"))
                    ll = statistics.median(added_ir(rows, engine, base, "DLmr")) + statistics.median(
                        added_ir(rows, engine, base, "DLmw")
                    )
                    cookie = f"{row['cookie_bytes']} B" if row.get("cookie_bytes") else ""
                    lines.append(
                        f"| {engine} | {LABELS[workload]} | {kilo(total)} | {kilo(statistics.median(added))} | "
                        f"{kilo(min(added))} - {kilo(max(added))} | {d1:,.0f} | {ll:,.1f} | {kilo(cycles)} | {cookie} |"
                    )
            lines.append("")
    return lines


def clock_tables(part: dict[str, Any]) -> list[str]:
    lines = ["### The clock: in process and over HTTP (one connection)", ""]
    s = part.get("settings", {})
    lines += [
        f"{where_note(part)}. In process: {s.get('rounds')} interleaved rounds of about "
        f"{s.get('block_s', 0) * 1000:.0f} ms per configuration"
        + (f", pinned to CPU {s['pinned_cpu']}" if s.get("pinned_cpu") is not None else "")
        + ". Over HTTP: "
        + (
            f"{s.get('http_rounds')} interleaved rounds of {s.get('http_seconds', 0):g} s per configuration, load "
            f"from {s.get('load_generator')}, server on CPU {s.get('server_cpu')}, load on CPU {s.get('client_cpu')}"
            if part.get("http")
            else "not run"
        )
        + f". Optional servers that answered: {', '.join(s.get('services', [])) or 'none'}.",
        "",
    ]
    results, http = part.get("results", {}), part.get("http", {})
    for framework in ("django", "starlette"):
        for workload in ("api", "read", "write"):
            rows = results.get(framework, {}).get(workload)
            if not rows:
                continue
            http_rows = http.get(framework, {}).get(workload, {})
            lines += [
                f"#### {TITLES[framework]}, {LABELS[workload]}",
                "",
                "| engine | in process: added | q1-q3 | HTTP: added CPU | q1-q3 | HTTP: added (1/rps) | p99 | "
                "requests/s | cookie |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for engine, row in rows.items():
                h = http_rows.get(engine)
                cookie = f"{row['cookie_bytes']} B" if row["cookie_bytes"] is not None else ""
                if engine == row["baseline"]:
                    first = f"baseline, {us(row['per_request_us_median'])}", ""
                else:
                    first = us(row["added_us_median"]), f"{us(row['added_us_q1'])} - {us(row['added_us_q3'])}"
                if h is None:
                    rest = ["", "", "", "", ""]
                elif engine == h["baseline"]:
                    rest = [
                        f"baseline, {us(h['per_request_us_median'])}",
                        "",
                        "",
                        us(h["p99_us_median"]),
                        f"{h['rps_median']:.0f}",
                    ]
                else:
                    rest = [
                        us(h["added_us_median"]),
                        f"{us(h['added_us_q1'])} - {us(h['added_us_q3'])}",
                        us(h["added_wall_us_median"]),
                        us(h["p99_us_median"]),
                        f"{h['rps_median']:.0f}",
                    ]
                lines.append(f"| {engine} | {first[0]} | {first[1]} | " + " | ".join(rest) + f" | {cookie} |")
            lines.append("")
    lines.append(
        "Starlette rows whose store waits on I/O (starsessions' RedisStore) run on an event loop in process, "
        "and are measured against the session-less app on the same loop."
    )
    lines.append("")
    return lines


def many_users_section(part: dict[str, Any]) -> list[str]:
    lines = ["### A workload like a real site: 10,000 users, keep-alive, 1 and 4 workers", ""]
    results = part.get("results") or {}
    if "error" in results:
        return [*lines, f"Not run: {results['error']}", ""]
    s = part.get("settings", {})
    lines += [
        f"{where_note(part)}. {s.get('users'):,} users' cookies per engine, {s.get('connections')} keep-alive "
        f"connections, {s.get('rounds')} interleaved rounds of {s.get('seconds', 0):g} s; Django on "
        f"{s.get('django_worker')}, Starlette on {s.get('starlette_worker')}. *Added CPU* is the workers' CPU "
        "time per request over the session-less server's with as many workers, in the same round (median); "
        "p50 and p99 are wrk's latencies at saturation.",
        "",
    ]
    for framework in ("django", "starlette"):
        for workers, kinds in (results.get(framework) or {}).items():
            lines += [
                f"#### {TITLES[framework]}, {workers} worker{'s' if workers != '1' else ''}",
                "",
                "| request | engine | added CPU | CPU per request | requests/s | p50 | p99 |",
                "|---|---|---:|---:|---:|---:|---:|",
            ]
            for kind in ("api", "read", "write"):
                for engine, row in (kinds.get(kind) or {}).items():
                    added = "baseline" if engine == row["baseline"] else us(row["added_cpu_us_median"])
                    lines.append(
                        f"| {LABELS[kind]} | {engine} | {added} | {us(row['cpu_us_median'])} | "
                        f"{row['rps_median']:,.0f} | {us(row['p50_us_median'])} | {us(row['p99_us_median'])} |"
                    )
            lines.append("")
    return lines
