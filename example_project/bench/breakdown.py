"""Where the time goes: this run's numbers, our Starlette middleware part by part, py-spy's and callgrind's kinds."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from . import callgrind as callgrind_module
from . import profile, request_cost
from .formatting import kilo, us, where_note
from .targets import (
    DJANGO_OURS,
    DJANGO_THEIRS,
    LABELS,
    STARLETTE_OURS,
    STARLETTE_THEIRS,
    TITLES,
    baseline_name,
    decoding_added,
)

HERE = Path(__file__).parent


SHORT = {
    "encoding and signing the cookie": "encode, sign",
    "verifying and decoding the cookie": "verify, decode",
    "socket write (send syscall)": "socket write",
    "response headers (Set-Cookie, Vary)": "Set-Cookie, Vary",
    "the server parsing and validating headers": "server: headers",
    "finding the cookie": "find cookie",
    "building the session": "build session",
    "the session middleware's own code": "middleware's own code",
    "server, framework and view": "server, framework, view",
    "hashing (BLAKE2, HMAC, SHA)": "hashing",
    "JSON (orjson, json)": "JSON",
    "compression (zstd)": "zstd",
    "base64": "base64",
    "regular expressions": "regex",
    "memory allocation": "malloc",
    "garbage collector": "GC",
    "sockets, event loop, HTTP parser": "sockets, loop (C)",
    "libc string and memory copies": "libc copies",
    "interpreter (Python code)": "Python code",
    "other": "other",
}
#: The C-level kinds in the order the tables show them: verifying and decoding first.
KIND_ORDER = [
    "hashing (BLAKE2, HMAC, SHA)",
    "base64",
    "compression (zstd)",
    "JSON (orjson, json)",
    "interpreter (Python code)",
    "memory allocation",
    "regular expressions",
    "libc string and memory copies",
    "sockets, event loop, HTTP parser",
    "garbage collector",
    "other",
]


def profile_tables(prof: dict[str, Any]) -> list[str]:
    results = prof.get("results") or {}
    if "error" in results:
        return [f"The profile was not run: {results['error']}", ""]
    if not results:
        return []
    s = prof.get("settings", {})
    lines = [
        "### In the server, by kind of work (py-spy)",
        "",
        f"{where_note(prof)}. Added microseconds of the worker's CPU per request over the session-less server, by "
        f"kind of work (py-spy at {s.get('rate')} Hz for {s.get('seconds', 0):g} s per configuration under wrk on one "
        "connection; one sync gunicorn worker, one uvicorn worker with uvloop and httptools). One profile per "
        "configuration, on the clock: read the large entries, not the small ones, and not the negative ones (noise). "
        "*Server: headers* is the server's HTTP parser reading and validating headers (gunicorn's; uvicorn's "
        "httptools callbacks); *server, framework, view* is what was not sorted into another kind.",
        "",
    ]
    for framework in ("django", "starlette"):
        kinds = results.get(framework) or {}
        base = profile.ENGINES[framework][0]
        rows = [
            (k, e) for k in ("api", "read", "write") for e in profile.ENGINES[framework][1:] if e in kinds.get(k, {})
        ]
        if not rows:
            continue
        lines += [
            f"#### {TITLES[framework]}",
            "",
            "| engine | request | " + " | ".join(SHORT[c] for c in profile.ORDER) + " | total added |",
            "|---|---|" + "---:|" * (len(profile.ORDER) + 1),
        ]
        for kind, engine in rows:
            row = kinds[kind][engine]
            total = row["cpu_us_per_request"] - kinds[kind].get(base, {}).get("cpu_us_per_request", 0.0)
            cells = [f"{row.get('added_us_per_request', {}).get(c, 0.0):.1f}" for c in profile.ORDER]
            lines.append(f"| {engine} | {LABELS[kind]} | " + " | ".join(cells) + f" | {us(total)} |")
        lines.append("")
    return lines


def callgrind_kind_tables(cg: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key, title, workloads, groups_key, unit in (
        ("in_process", "in process", ("api", "read", "write"), "groups", "instructions"),
        ("server", "on a server worker", ("api", "read", "write"), "groups", "instructions"),
        ("in_process", "in process, cold caches", ("cold read", "cold write"), "groups_LLm", "last-level misses"),
    ):
        data = cg.get(key) or {}
        for framework in ("django", "starlette"):
            by_workload = data.get(framework)
            if not isinstance(by_workload, dict) or "error" in by_workload:
                continue
            base = baseline_name(framework)
            rows = [
                (w, e)
                for w in workloads
                if base in (by_workload.get(w) or {})
                for e in by_workload[w]
                if e != base and groups_key in by_workload[w][e]
            ]
            if not rows:
                continue
            present = {g for w, e in rows for g in by_workload[w][e][groups_key]}
            kinds = [k for k in KIND_ORDER if k in present]
            scale = (lambda v: kilo(v)) if unit == "instructions" else (lambda v: f"{v:,.1f}")
            lines += [
                f"#### {unit.capitalize()} added {title}, by kind of C-level work: {TITLES[framework]}",
                "",
                "| engine | request | " + " | ".join(SHORT[k] for k in kinds) + " | total |",
                "|---|---|" + "---:|" * (len(kinds) + 1),
            ]
            for w, e in rows:
                mine, theirs = by_workload[w][e][groups_key], by_workload[w][base][groups_key]
                cells = [scale(mine.get(k, 0.0) - theirs.get(k, 0.0)) for k in kinds]
                total = sum(mine.values()) - sum(theirs.values())
                lines.append(f"| {e} | {LABELS[w]} | " + " | ".join(cells) + f" | {scale(total)} |")
            lines.append("")
    if lines:
        lines = [
            "### In the instructions, by kind of C-level work (callgrind)",
            "",
            "Each instruction is counted where it ran: *Python code* is the interpreter running the bytecode of "
            "every Python function (the middleware, the session classes, the framework, the HTTP parser when it is "
            "Python); the other kinds are C functions, named by their object file and function "
            "(`example_project/bench/cgparse.py`). Verifying and decoding a token is *hashing*, *base64*, *zstd* and "
            "*JSON*. The last tables count, on cold caches, where the last-level misses (instruction and data) fall.",
            "",
            "![Where a session's added instructions go](img/request-breakdown.png)",
            "",
            *lines,
        ]
    return lines


C_SIGNING = ("hashing (BLAKE2, HMAC, SHA)", "base64", "compression (zstd)", "JSON (orjson, json)")


def key_findings(parts: dict[str, Any]) -> list[str]:
    """The breakdown's main numbers, computed from this run's results (read-only, login-sized session)."""
    cg = parts.get("callgrind", {})
    hot, server = cg.get("in_process") or {}, cg.get("server") or {}
    lines = ["### This run's numbers", ""]
    pairs = {
        "starlette": (STARLETTE_OURS, STARLETTE_THEIRS, request_cost.STARLETTE_PASS_THROUGH),
        "django": (DJANGO_OURS, DJANGO_THEIRS, request_cost.DJANGO_PASS_THROUGH),
    }
    probes = {"starlette": request_cost.STARLETTE_COOKIE_PROBE, "django": request_cost.DJANGO_COOKIE_PROBE}

    def added(data: dict[str, Any], framework: str, workload: str, engine: str, key: str = "Ir") -> float | None:
        rows = (data.get(framework) or {}).get(workload) if isinstance(data.get(framework), dict) else None
        base = baseline_name(framework)
        if not rows or engine not in rows or base not in rows:
            return None
        if key == "cycles":
            return statistics.median(callgrind_module.estimated_cycles(rows[engine])) - statistics.median(
                callgrind_module.estimated_cycles(rows[base])
            )
        if key == "LL":
            return sum(
                statistics.median(rows[engine][e]) - statistics.median(rows[base][e])
                for e in ("ILmr", "DLmr", "DLmw")
                if e in rows[engine]
            )
        if key in ("signing", "python"):
            mine, theirs = rows[engine].get("groups", {}), rows[base].get("groups", {})
            kinds = C_SIGNING if key == "signing" else ("interpreter (Python code)",)
            return sum(mine.get(k, 0.0) - theirs.get(k, 0.0) for k in kinds)
        return statistics.median(rows[engine][key]) - statistics.median(rows[base][key])

    def k(value: float | None) -> str:
        return "n/a" if value is None else f"{0.0 if abs(value) < 500 else value / 1000:.1f} k"

    for framework, (ours, theirs, floor) in pairs.items():
        title = TITLES[framework]
        o, t = added(hot, framework, "read", ours), added(hot, framework, "read", theirs)
        if o is None or t is None:
            continue
        o_py, o_c = added(hot, framework, "read", ours, "python"), added(hot, framework, "read", ours, "signing")
        t_py, t_c = added(hot, framework, "read", theirs, "python"), added(hot, framework, "read", theirs, "signing")
        lines.append(
            f"- **{title}, read, in process**: ours adds {k(o)} instructions ({k(o_py)} of them Python code, "
            f"{k(o_c)} verifying and decoding in C: BLAKE2b, base64, zstd, orjson); {theirs} adds {k(t)} "
            f"({k(t_py)} Python code, {k(t_c)} in C), a ratio of {o / t:.2f}. A middleware that does nothing "
            f"adds {k(added(hot, framework, 'read', floor))}."
        )
        so, st = added(server, framework, "read", ours), added(server, framework, "read", theirs)
        probe_server, probe_hot = (
            added(server, framework, "read", probes[framework]),
            added(hot, framework, "read", probes[framework]),
        )
        if so is not None and st is not None:
            lines.append(
                f"- **{title}, read, on the server worker**: ours adds {k(so)} ({k(so - o)} more than in process), "
                f"{theirs} {k(st)} ({k(st - t)} more): a ratio of {so / st:.2f}. A session-sized Cookie header "
                f"that nothing reads costs the session-less server {k(probe_server)} instructions (in process: "
                f"{k(probe_hot)}): the server's HTTP parser reads and validates it."
            )
        co, ct = (
            added(hot, framework, "cold read", ours, "cycles"),
            added(hot, framework, "cold read", theirs, "cycles"),
        )
        if co is not None and ct:
            ho, ht = added(hot, framework, "read", ours, "cycles"), added(hot, framework, "read", theirs, "cycles")
            o_ll = added(hot, framework, "cold read", ours, "LL") or 0.0
            t_ll = added(hot, framework, "cold read", theirs, "LL") or 0.0
            lines.append(
                f"- **{title}, read, cold caches**: ours misses the last level {o_ll:,.0f} times per request, "
                f"{theirs} {t_ll:,.0f}; in estimated cycles ours adds {k(co)} against {k(ct)}, a ratio of "
                f"{co / ct:.2f} (hot caches: {(ho or 0) / (ht or 1):.2f})."
            )
        api = (hot.get(framework) or {}).get("api") if isinstance(hot.get(framework), dict) else None
        if api and ours in api:
            extra = decoding_added(api, ours, baseline_name(framework))
            decodes = (
                "it verifies and decodes the cookie all the same (it calls "
                + ", ".join(f"`{fn}`" for fn in sorted(extra)[:3])
                + ")."
                if extra
                else "it verifies and decodes nothing."
            )
            lines.append(
                f"- **{title}, a request that never touches the session**: ours adds "
                f"{k(added(hot, framework, 'api', ours))} instructions in process ({theirs}: "
                f"{k(added(hot, framework, 'api', theirs))}; the Cookie header alone "
                f"{k(added(hot, framework, 'api', probes[framework]))}); " + decodes
            )
    requests = parts.get("requests", {})
    for framework, (ours, theirs, _) in pairs.items():
        rows = requests.get("results", {}).get(framework, {}).get("read", {})
        http = requests.get("http", {}).get(framework, {}).get("read", {})
        if ours in rows and theirs in rows and ours in http and theirs in http:
            lines.append(
                f"- **{TITLES[framework]}, read, on the clock** (medians; the targets give their spread): in "
                f"process ours adds {us(rows[ours]['added_us_median'])}, {theirs} "
                f"{us(rows[theirs]['added_us_median'])}; over HTTP {us(http[ours]['added_us_median'])} and "
                f"{us(http[theirs]['added_us_median'])} of server CPU."
            )
    lines.append("")
    return lines if len(lines) > 3 else []


def starlette_ablation_table(callgrind: dict[str, Any]) -> list[str]:
    """Our Starlette middleware's added instructions, part by part, from probes that each leave one part out."""
    rows_of = (callgrind.get("in_process") or {}).get("starlette")
    if not isinstance(rows_of, dict):
        return []
    base, floor, ready = (
        request_cost.STARLETTE_BASELINE,
        request_cost.STARLETTE_PASS_THROUGH,
        request_cost.STARLETTE_READY_VALUE,
    )

    def added(workload: str, engine: str) -> float:
        rows = rows_of[workload]
        return float(statistics.median(rows[engine]["Ir"]) - statistics.median(rows[base]["Ir"]))

    try:
        api, read, write = added("api", STARLETTE_OURS), added("read", STARLETTE_OURS), added("write", STARLETTE_OURS)
        layering, given, theirs = added("api", floor), added("read", ready), added("read", STARLETTE_THEIRS)
    except KeyError:  # a run without the probes (a smoke run, or one of some engines only)
        return []
    parts = [
        ("the layering: an ASGI middleware that wraps `send`", layering, "api"),
        ("finding the Cookie header, a lazy session in the scope", api - layering, "api"),
        ("using the session: `request.session`, loading the value into it, `Vary`", given - api, "read"),
        ("verifying and decoding the token (BLAKE2b, base64, zstd, orjson, and their calls)", read - given, "read"),
        ("a write: serializing, compressing, signing, the `Set-Cookie` header", write - read, "read+write"),
    ]
    lines = [
        "### Our Starlette middleware, part by part (instructions, in process)",
        "",
        "Each part is what one probe adds over the one before it: a middleware that only wraps `send`; ours on a "
        "route that never touches the session; ours with the cookie's value given instead of verified (it still "
        "pays one call and a dict copy for it); ours; ours on a write. Medians of the deterministic instrument's "
        "repeats, added over the session-less request of the same kind.",
        "",
        "| part | from the request kind | added instructions |",
        "|---|---|---:|",
    ]
    lines += [f"| {label} | {kind} | {kilo(value)} |" for label, value, kind in parts]
    lines += [
        f"| **a read, all of it** | read | **{kilo(read)}** |",
        f"| Starlette's `SessionMiddleware`, a read, for comparison | read | {kilo(theirs)} |",
        "",
    ]
    return lines


def breakdown_section(parts: dict[str, Any]) -> list[str]:
    lines = ["## Where the time goes", ""]
    lines += key_findings(parts)
    lines += starlette_ablation_table(parts.get("callgrind", {}))
    findings = HERE / "findings.md"
    if findings.exists():
        lines += [findings.read_text().rstrip(), ""]
    lines += profile_tables(parts.get("profile", {}))
    lines += callgrind_kind_tables(parts.get("callgrind", {}))
    return lines
