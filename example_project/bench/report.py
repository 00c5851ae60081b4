"""Summaries, targets and the three outputs: Markdown, PNG chart, JSON of the raw results.

JSON schema (docs/benchmarks/requests.json)::

    {
      "schema": 1,
      "machine": str, "date": "YYYY-MM-DD", "versions": {package: version},
      "settings": {...how the run was made: rounds, seconds, load generator, CPUs...},
      "results": {                       # in process
        "django" | "starlette": {
          "read" | "write": {
            "<engine name>": {
              "added_us_median": float, "added_us_q1": float, "added_us_q3": float,   # over the baseline
              "per_request_us_median": float,
              "cookie_bytes": int | null,                    # the session cookie's value
              "baseline": "<engine name>",                   # what "added" is measured against
              "rounds_us": [float, ...]                      # raw: per-round time per request
            }}}},
      "http": {same shape; "added" is the server's CPU time per request over the baseline's, plus
               "added_wall_us_median/q1/q3" (from throughput, 1/rps), "p99_us_median", "rps_median",
               "rps_fraction_median" (throughput over the baseline's, per round), "rounds": [raw samples]},
      "targets": [{"where": "in process" | "http", "framework", "workload", "ours", "theirs",
                   "target": float, "median": float | null, "q1": ..., "q3": ... (null: not computable), "rounds": int,
                   "verdict": str}],
      "noisy_limit": float
    }
"""

from __future__ import annotations

import contextlib
import json
import math
import platform
import statistics
import subprocess
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from . import request_cost
from .interleaved import NOISE_LIMIT, Quartiles, verdict
from .timing import machine

TITLES = {"django": "Django", "starlette": "Starlette"}
LABELS = {"read": "read-only", "write": "read+write"}
#: (framework, ours, theirs, target): every per-request target, checked on both workloads, both ways.
TARGETS = [("django", *t) for t in request_cost.DJANGO_TARGETS] + [
    ("starlette", *t) for t in request_cost.STARLETTE_TARGETS
]
#: Why a request over HTTP adds more than the same request in process: measured, see the docs.
FINDINGS_FILE = Path(__file__).with_name("findings.md")


HOW_TO = [
    "```",
    "pip install -e '.[bench]'          # and Debian's wrk (apt-get install wrk) for the HTTP load",
    "python -m example_project.bench    # about 5 minutes on 2 cores; --quick: a smoke run in ~20 s",
    "```",
    "",
    "It measures, for each session engine, the time it adds to one request over the same request without",
    "sessions, in process and over real HTTP, on a login-sized session read on every request (read-only) and",
    "with a counter written on every request (read+write). Rows needing Redis (127.0.0.1:6379) or PostgreSQL",
    "(127.0.0.1:5432, database `test`, user `postgres`) run when those answer. Options: `--engines NAME ...`",
    "(the baselines always run), `--framework django|starlette`, `--no-http`, `--rounds`, `--block`,",
    "`--http-rounds`, `--http-seconds`, `--out DIR`, `--no-pin`. It writes this page,",
    "`docs/img/request-cost.png` and `docs/benchmarks/requests.json`, whose schema is in the docstring of",
    "`example_project/bench/report.py`; `python -m example_project.bench.report docs/benchmarks/requests.json`",
    "rebuilds this page and the chart from that file.",
    "",
]


def baseline_of(framework: str, engine: str) -> str:
    if framework == "django":
        return request_cost.DJANGO_BASELINE
    return request_cost.starlette_baseline(engine)


def quartiles_us(values: list[float]) -> Quartiles:
    if len(values) == 1:
        return Quartiles(values[0] * 1e6, values[0] * 1e6, values[0] * 1e6)
    q = Quartiles.of(values)
    return Quartiles(q.q1 * 1e6, q.median * 1e6, q.q3 * 1e6)


def summarise_in_process(framework: str, data: dict[str, Any]) -> dict[str, Any]:
    times, sizes = data["times"], data["sizes"]
    rows = {}
    for engine, values in times.items():
        base = baseline_of(framework, engine)
        q = quartiles_us([t - b for t, b in zip(values, times[base], strict=True)])
        rows[engine] = {
            "added_us_median": q.median,
            "added_us_q1": q.q1,
            "added_us_q3": q.q3,
            "per_request_us_median": statistics.median(values) * 1e6,
            "cookie_bytes": sizes.get(engine),
            "baseline": base,
            "rounds_us": [v * 1e6 for v in values],
        }
    return rows


def summarise_http(framework: str, data: dict[str, Any]) -> dict[str, Any]:
    samples, sizes = data["samples"], data["sizes"]
    base = request_cost.DJANGO_BASELINE if framework == "django" else request_cost.STARLETTE_BASELINE
    rows = {}
    for engine, runs in samples.items():
        cpu = quartiles_us([s.cpu_per_request - b.cpu_per_request for s, b in zip(runs, samples[base], strict=True)])
        wall = quartiles_us([1 / s.rps - 1 / b.rps for s, b in zip(runs, samples[base], strict=True)])
        rows[engine] = {
            "added_us_median": cpu.median,
            "added_us_q1": cpu.q1,
            "added_us_q3": cpu.q3,
            "per_request_us_median": statistics.median(s.cpu_per_request for s in runs) * 1e6,
            "added_wall_us_median": wall.median,
            "added_wall_us_q1": wall.q1,
            "added_wall_us_q3": wall.q3,
            "p99_us_median": statistics.median(s.p99 for s in runs) * 1e6,
            "rps_median": statistics.median(s.rps for s in runs),
            "rps_fraction_median": statistics.median(s.rps / b.rps for s, b in zip(runs, samples[base], strict=True)),
            "cookie_bytes": sizes.get(engine),
            "baseline": base,
            "rounds": [asdict(s) for s in runs],
        }
    return rows


#: A ratio over fewer rounds than this gets no verdict: its quartiles say nothing of its spread.
MIN_ROUNDS = 3


def ratio_quartiles(rows: dict[str, Any], ours: str, theirs: str, key: str) -> tuple[Quartiles, int] | None:
    """Per-round ratio of added costs; ``key`` names the raw per-round values."""
    if ours not in rows or theirs not in rows:
        return None
    base = rows[ours]["baseline"]
    if key == "rounds_us":
        mine = [t - b for t, b in zip(rows[ours][key], rows[base][key], strict=True)]
        other = [t - b for t, b in zip(rows[theirs][key], rows[base][key], strict=True)]
    else:

        def cpu(name: str) -> list[float]:
            return [r["cpu_per_request"] for r in rows[name]["rounds"]]

        mine = [t - b for t, b in zip(cpu(ours), cpu(base), strict=True)]
        other = [t - b for t, b in zip(cpu(theirs), cpu(base), strict=True)]
    values = [m / o for m, o in zip(mine, other, strict=True) if o > 0]
    if not values:  # the incumbent's added cost never rose above the baseline's noise
        return Quartiles(math.nan, math.nan, math.nan), 0
    q = Quartiles.of(values) if len(values) > 1 else Quartiles(values[0], values[0], values[0])
    return q, len(values)


def finite(value: float) -> float | None:
    """None for a ratio that could not be computed, so the JSON stays standard."""
    return None if math.isnan(value) else value


def ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def judge(q: Quartiles, rounds: int, target: float, quick: bool) -> str:
    if quick:
        return "quick run: no verdict"
    if rounds == 0:
        return "no verdict: the incumbent's added cost is within the baseline's noise"
    if rounds < MIN_ROUNDS:
        return f"{rounds} rounds: no verdict"
    return verdict(q, target)


def targets(results: dict[str, Any], http: dict[str, Any], quick: bool) -> list[dict[str, Any]]:
    out = []
    for where, data, key in (("in process", results, "rounds_us"), ("http", http, "rounds")):
        for framework, ours, theirs, target in TARGETS:
            for workload in ("read", "write"):
                rows = data.get(framework, {}).get(workload)
                found = ratio_quartiles(rows, ours, theirs, key) if rows else None
                if found is None:
                    continue
                q, rounds = found
                out.append(
                    {
                        "where": where,
                        "framework": framework,
                        "workload": workload,
                        "ours": ours,
                        "theirs": theirs,
                        "target": target,
                        "median": finite(q.median),
                        "q1": finite(q.q1),
                        "q3": finite(q.q3),
                        "rounds": rounds,
                        "verdict": judge(q, rounds, target, quick),
                    }
                )
    return out


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in ("Django", "starlette", "gunicorn", "uvicorn", "starsessions", "redis", "psycopg"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    with contextlib.suppress(OSError, IndexError):
        found["wrk"] = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split()[1]
    return found


def us(value: float) -> str:
    return f"{value / 1000:.2f} ms" if abs(value) >= 1000 else f"{value:.1f} us"


def markdown(data: dict[str, Any]) -> str:
    s = data["settings"]
    lines = [
        "# Request benchmark: what a session adds to one request",
        "",
        "Generated by `python -m example_project.bench` (do not edit by hand: rerun it).",
        "",
        *HOW_TO,
        "## This run",
        "",
        f"- Machine: {data['machine']}; date {data['date']}.",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in data["versions"].items()) + ".",
        f"- In process: {s['rounds']} interleaved rounds of about {s['block_s'] * 1000:.0f} ms per configuration"
        + (f", pinned to CPU {s['pinned_cpu']}" if s["pinned_cpu"] is not None else "")
        + "; Django's WSGI handler with a real middleware chain, Starlette called directly (ASGI), no network.",
    ]
    if data["http"]:
        lines.append(
            f"- Over HTTP: gunicorn (1 sync worker) and uvicorn (1 worker) on 127.0.0.1, load from "
            f"**{s['load_generator']}** in another process, one connection, {s['http_rounds']} interleaved rounds of "
            f"{s['http_seconds']:g} s (at most {s['http_max_requests']} requests) per configuration; server on CPU "
            f"{s['server_cpu']}, load generator on CPU {s['client_cpu']}. *Added* is the server worker's CPU time per "
            "request (from /proc/<pid>/task/*/schedstat) over the session-less baseline's; *added (1/rps)* is the "
            "same from throughput."
        )
    lines += [
        f"- Optional servers that answered: {', '.join(s['services']) or 'none'} "
        "(rows needing the others are left out).",
        f"- Total time {s['elapsed_s']:.0f} s."
        + (" **Quick smoke run: no figure here is to be quoted.**" if s["quick"] else ""),
        "- Each figure is the median over rounds, with the quartiles (q1-q3); ratios are per-round ratios. A ratio "
        f"whose quartiles span more than {NOISE_LIMIT:.0%} of its target is marked noisy and gets no verdict; "
        "'met' only when even its upper quartile is within the target.",
        "",
        "## Targets",
        "",
        "| where | framework | workload | ratio of added cost | median | q1-q3 | target | verdict |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for t in data["targets"]:
        lines.append(
            f"| {t['where']} | {TITLES[t['framework']]} | {LABELS[t['workload']]} | {t['ours']} / {t['theirs']} | "
            f"{ratio(t['median'])} | {ratio(t['q1'])}-{ratio(t['q3'])} | {t['target']:.2f} | {t['verdict']} |"
        )
    missed = [t for t in data["targets"] if t["verdict"] != "met"]
    lines += ["", f"Met: {len(data['targets']) - len(missed)} of {len(data['targets'])}."]
    if missed:
        lines.append("Not met (missed, within noise, or noisy):")
        lines += [
            f"- {t['where']}, {TITLES[t['framework']]} {LABELS[t['workload']]}: {t['ours']} / {t['theirs']} = "
            f"{ratio(t['median'])} ({ratio(t['q1'])}-{ratio(t['q3'])}) against {t['target']:.2f}: {t['verdict']}"
            for t in missed
        ]
    lines.append("")
    if data["http"]:
        lines += ["## Read-only throughput with our sessions, as a fraction of the session-less baseline", ""]
        lines += ["| framework | engine | fraction (median) | requests/s |", "|---|---|---:|---:|"]
        for framework, ours in (("django", "ours + our middleware"), ("starlette", "blake2sign_web SessionMiddleware")):
            row = data["http"].get(framework, {}).get("read", {}).get(ours)
            if row:
                lines.append(
                    f"| {TITLES[framework]} | {ours} | {row['rps_fraction_median']:.2f} | {row['rps_median']:.0f} |"
                )
        lines.append("")
    lines += ["![Added time per request](img/request-cost.png)", ""]
    for framework in ("django", "starlette"):
        for workload in ("read", "write"):
            rows = data["results"].get(framework, {}).get(workload)
            if not rows:
                continue
            http_rows = data["http"].get(framework, {}).get(workload, {})
            lines += [
                f"## {TITLES[framework]}, {LABELS[workload]}, login-sized session",
                "",
                "| engine | in process: added | q1-q3 | HTTP: added (CPU) | q1-q3 | HTTP: added (1/rps) | p99 | "
                "requests/s | cookie value |",
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
                        "baseline",
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
    if FINDINGS_FILE.exists():
        lines += [FINDINGS_FILE.read_text().rstrip(), ""]
    return "\n".join(lines)


def bars(axis: Any, names: list[str], source: dict[str, Any], offset: float, label: str, color: str) -> None:
    """Median bars with q1-q3 whiskers; a log axis shows no zero, so medians sit at least at 0.1 us and a
    lower quartile at or below zero is drawn at a tenth of its median (the tables give the real value)."""
    present = [(i, source[n]) for i, n in enumerate(names) if n in source]
    if not present:
        return
    medians = [max(r["added_us_median"], 0.1) for _, r in present]
    low = [max(m - max(r["added_us_q1"], m / 10), 0) for m, (_, r) in zip(medians, present, strict=True)]
    high = [max(max(r["added_us_q3"], 0.1) - m, 0) for m, (_, r) in zip(medians, present, strict=True)]
    positions = [i + offset for i, _ in present]
    axis.barh(positions, medians, height=0.38, xerr=[low, high], label=label, color=color, capsize=2)


def chart(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(f, w) for f in ("django", "starlette") for w in ("read", "write") if data["results"].get(f, {}).get(w)]
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False)
    for axis, (framework, workload) in zip(axes[:, 0], panels, strict=True):
        rows = {e: r for e, r in data["results"][framework][workload].items() if e != r["baseline"]}
        http_rows = data["http"].get(framework, {}).get(workload, {})
        names = list(rows)
        y = range(len(names))

        bars(axis, names, rows, -0.2, "in process", "#4c72b0")
        bars(axis, names, http_rows, 0.2, "over HTTP (server CPU)", "#dd8452")
        axis.set_yticks(list(y), names, fontsize=8)
        axis.invert_yaxis()
        axis.set_xscale("log")
        axis.set_xlabel(
            "added time per request over no sessions (us, log scale; bars: median, whiskers: q1-q3)", fontsize=8
        )
        axis.set_title(f"{TITLES[framework]}, {LABELS[workload]}", fontsize=10)
        handles, labels = axis.get_legend_handles_labels()
    figure.suptitle(f"What a session adds to one request: {data['machine']}", fontsize=9)
    figure.legend(handles, labels, loc="upper right", fontsize=8, ncols=2)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write(out: Path, inproc: dict[str, Any], http: dict[str, Any], settings: dict[str, Any]) -> list[Path]:
    results = {f: {w: summarise_in_process(f, d) for w, d in ws.items()} for f, ws in inproc.items()}
    http_results = {f: {w: summarise_http(f, d) for w, d in ws.items()} for f, ws in http.items()}
    data = {
        "schema": 1,
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d"),
        "versions": versions(),
        "settings": settings,
        "results": results,
        "http": http_results,
        "targets": targets(results, http_results, settings["quick"]),
        "noisy_limit": NOISE_LIMIT,
    }
    paths = [out / "benchmarks" / "requests.json", out / "request-benchmark.md", out / "img" / "request-cost.png"]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
    paths[0].write_text(json.dumps(data, indent=1) + "\n")
    paths[1].write_text(markdown(data))
    chart(data, paths[2])
    return paths


def rebuild(path: Path) -> None:
    """This page and the chart again, from a JSON file of an earlier run (``<out>/benchmarks/requests.json``)."""
    data = json.loads(path.read_text())
    out = path.parent.parent
    (out / "request-benchmark.md").write_text(markdown(data))
    chart(data, out / "img" / "request-cost.png")


if __name__ == "__main__":
    import sys

    rebuild(Path(sys.argv[1]))
