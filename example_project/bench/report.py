"""The benchmark's one JSON of results, its one page (docs/performance.md) and its charts.

JSON (docs/benchmarks/results.json), schema 2::

    {
      "schema": 2, "machine": str, "date": "YYYY-MM-DD", "versions": {package: version},
      "run": {"elapsed_s": float, "quick": bool, "parts_run": [part, ...]},
      "parts": {                      # each part: its own "machine", "date" and "settings"; a part not run
                                      # in the last command keeps the results of the run that made it
        "core": {"payloads": {label: [{"name", "best", "median", "size"}]}, "hashers": [...], "caching": [...],
                 "login": {"rounds_s": {...}, "sizes": {...}, "dumps_ratio_rounds": [...]}},
        "requests": {                 # the clock: in process, and over HTTP on one connection
          "results": {framework: {workload: {engine: {"added_us_median", "added_us_q1", "added_us_q3",
                      "per_request_us_median", "cookie_bytes", "baseline", "rounds_us": [...]}}}},
          "http": {framework: {workload: {engine: {... the same, of the server's CPU per request, plus
                   "added_wall_us_*", "p99_us_median", "rps_median", "rps_fraction_median", "rounds": [...]}}}}},
        "callgrind": {"in_process" | "server": {framework: {workload: {engine: {
                        "Ir" | "D1mr" | "DLmr" | "D1mw" | "DLmw" | "I1mr": [per request, one per repeat],
                        "groups": {kind of C-level work: instructions per request},
                        "decoding_calls": {C function: calls per request}}}}}},
        "many_users": {"results": {framework: {workers: {kind: {engine: {"cpu_us_median", "added_cpu_us": [...],
                        "added_cpu_us_median", "rps_median", "p50_us_median", "p99_us_median", "rounds": [...]}}}}}},
        "profile": {"results": {framework: {kind: {engine: {"cpu_us_per_request", "samples": {kind of work: n},
                     "us_per_request": {...}, "added_us_per_request": {...}}}}}},
        "downloads": {"sizes": [...], "results": {"Django" | "Starlette": {size: {"ttfb", "total", "growth"}}}},
        "revocation_cost": {          # in process, against a redis-server on loopback (or --redis URL)
          "settings": {"rounds", "block_s", "redis", "cores",
                       "versions": {"python", "Django", "starlette", "redis-py", "redis-server"}},
          "results": {"django" | "starlette": {"sessions" | "links": {"request", "setting",
                      "stateless_us_median", "with_redis_us_median", "added_us_median", "added_us_q1",
                      "added_us_q3", "rounds_us": {"stateless": [...], "with_redis": [...]}}}},
          "reference": {"mget_sync" | "mget_async" | "django_get_many" | "redis_client":
                        {"median_us", "q1_us", "q3_us"}}}
                                      # or {"error": why} when there is no redis-server and no --redis
        "revocation_scale": {         # Starlette's RedisStore on one Redis (+ a replica) and on a 3+3 cluster
          "settings": {"processes": [n, ...], "concurrency", "seconds", "samples", "write_samples", "users",
                       "cores", "versions": {"python", "redis-py", "redis-server"}},
          "latency": {"one Redis" | "cluster": {"median_us", "p99_us"}},          # one check at a time
          "throughput": {"one Redis" | "cluster": {processes: {"checks_per_s", "median_us", "p99_us"}}},
          "writes": {"one Redis" | "cluster": {"revoke_session" | "consume_link": {wait_replicas: {"median_us",
                     "p99_us"}}}},
          "ceiling": {"connections", "pipeline", "keys", "one_at_a_time_rps", "pipelined_rps"} | null}
                                      # or {"error": why} when redis-server or redis-cli is missing
      },
      "targets": [{"where", "framework", "workload", "ours", "theirs", "target", "median", "low", "high",
                   "spread": "q1-q3" | "min-max", "rounds", "verdict"}]
    }

``python -m example_project.bench.report [docs/benchmarks/results.json]`` rebuilds the page and charts from the
JSON, which it only reads (the targets are judged again in memory).
"""

from __future__ import annotations

import contextlib
import json
import platform
import subprocess
import time
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from . import flask_cost, headline, targets
from .breakdown import breakdown_section, starlette_ablation_table
from .charts import breakdown_chart, ratio_chart, scale_chart
from .formatting import fmt, where_note
from .interleaved import NOISE_LIMIT
from .request_tables import callgrind_section, clock_tables, many_users_section
from .revocation_tables import revocation_cost_section, revocation_scale_section
from .targets import LABELS, TITLES, api_targets, requests_part
from .timing import machine

#: What other modules and the tests take from here.
__all__ = [
    "all_targets",
    "api_targets",
    "rebuild",
    "requests_part",
    "revocation_cost_section",
    "revocation_scale_section",
    "starlette_ablation_table",
    "write",
]
HERE = Path(__file__).parent


def all_targets(parts: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target's verdict: the session engines' (``targets``) and Flask's (``flask_cost``)."""
    from . import flask_cost

    return targets.all_targets(parts) + flask_cost.targets(parts.get("flask", {}))


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in (
        "Django",
        "starlette",
        "gunicorn",
        "uvicorn",
        "uvloop",
        "httptools",
        "starsessions",
        "redis",
        "psycopg",
    ):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    with contextlib.suppress(OSError, IndexError):
        found["wrk"] = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split()[1]
    return found


# --- the page ------------------------------------------------------------------------------------------------


HOW_TO = """```
pip install -e '.[bench]'   # and Debian's wrk and valgrind (apt-get install wrk valgrind), py-spy from PyPI
python -m example_project.bench                      # everything: about 20 minutes on 2 cores
python -m example_project.bench --quick              # a smoke run of every part, under a minute: no verdicts
python -m example_project.bench callgrind requests   # some parts only; the others keep their last results
python -m example_project.bench revocation-cost      # what revocation adds to a request: needs redis-server
python -m example_project.bench revocation-scale     # Redis and Redis Cluster: needs redis-server, redis-cli
python -m example_project.bench flask                # Flask's rows: callgrind in process and on gunicorn
python -m example_project.bench.report               # this page and the charts again, from the JSON
```

Parts: `core` (the signer against the libraries people use today), `requests` (what a session adds to
one request, on the clock: in process, and over HTTP on one connection), `callgrind` (instructions and
simulated cache misses per request: a deterministic instrument), `many-users` (10,000 logged-in users,
keep-alive, 1 and 4 workers), `profile` (py-spy on the server worker: where the time goes), `downloads`
(signed downloads up to 1 GiB), `revocation-cost` (what revocation and single-use links add to one
request, against a redis-server it starts on loopback), `revocation-scale` (revocation checks per second
from 1, 2 and 4 processes against one Redis and a Redis Cluster it starts on loopback, and what `WAIT` costs),
`links` and `hls` (links for many files), `flask` (what our Flask session adds against Flask's own, counted in
process and on a gunicorn worker, and the cookie's size).
Options: `--framework django|starlette`, `--engines NAME ...` (the baselines always run), `--no-http`,
`--rounds`, `--block`, `--http-rounds`, `--http-seconds`,
`--cg-requests`, `--cg-server-requests`, `--cg-no-server`, `--cg-timeout`, `--users`, `--mu-rounds`, `--mu-seconds`,
`--connections`, `--profile-seconds`, `--profile-rate`, `--max-size`, `--cost-rounds`, `--cost-block`,
`--redis URL`, `--scale-processes`,
`--scale-concurrency`, `--scale-seconds`, `--scale-samples`, `--out DIR`, `--no-pin`
(`--help` says what each does). Rows needing Redis (127.0.0.1:6379) or PostgreSQL (127.0.0.1:5432,
database `test`, user `postgres`) run when those answer. It writes this page,
`docs/benchmarks/results.json` (schema in `example_project/bench/report.py`), `docs/img/headline.svg`,
`docs/img/request-cost.png`,
`docs/img/request-breakdown.png`, `docs/img/core-session.png` and `docs/img/revocation-scale.png`.
"""

METHOD = """Every figure compares our engines with the ones people use today, in the same run, as the cost each
*adds* to a request over the same request without sessions. Three kinds of request: **api** (a route
behind the session middleware that never touches the session), **read** (the view reads the user id
of a login-sized session: Django's three `login()` keys; Starlette a user id, e-mail, name and CSRF
token) and **read+write** (the view also writes a counter, so the cookie is re-signed and sent).

- **The deterministic instrument** (`callgrind`): valgrind's callgrind counts the instructions each
  request runs, and simulates the caches (32 KiB L1s, an 8 MiB last level: a fixed geometry, so the
  counts do not depend on the machine) to count the misses, so that C code touching cold memory is not
  flattered. *In process*: the same Django handlers and Starlette applications as the clock's, blocks
  of N requests, each block bracketed by valgrind client requests made from Python (zero the counters,
  dump them). *On a server worker*: gunicorn (one sync worker) or uvicorn (one worker, uvloop and
  httptools) under valgrind, N requests over 127.0.0.1 from another process between two marker
  requests: HTTP parsing, the event loop, the application and the socket calls' user-space side (valgrind sees no kernel
  instruction). Counts repeat to within a fraction of a percent in process, whatever else the machine
  runs; each block runs three times, the median is quoted and the range (min-max) kept. Ratios are of
  instructions added over the baseline; 'met' when every repeat is within the target.
- **The clock, in process**: interleaved rounds (every configuration once per round, in rotating
  order), pinned to one CPU, the garbage collector off inside each timed block as `timeit` does.
- **The clock over HTTP, one connection**: gunicorn (1 sync worker) and uvicorn (1 worker, uvloop and httptools) on
  127.0.0.1, wrk on another CPU, interleaved rounds; *added* is the worker's CPU time per request
  (`/proc/<pid>/task/*/schedstat`) over the session-less server's.
- **Many users**: 10,000 users' cookies minted by each engine's server (`/login?user=N`), rotated
  by a wrk Lua script over 8 keep-alive connections; gunicorn's `gthread` worker (1 thread; the sync
  worker closes every connection) and uvicorn, with 1 and 4 workers, at saturation.
- **The profile**: py-spy samples the server worker under wrk's load; each sample goes to a kind of
  work by its stack (`example_project/bench/profile.py` says how), and a kind's share of the samples
  times the worker's CPU time per request gives its microseconds per request.

A clock ratio is a median of per-round ratios with its quartiles; a ratio whose quartiles span more
than {noise:.0%} of its target is **noisy** and gets no verdict, and 'met' needs even the upper quartile
within the target. The clock on this shared virtual machine drifts by a factor of two from minute to
minute (the same session-less server has served 12,391 and then 5,296 requests/s), which is why the
deterministic instrument stands beside it.
"""


def targets_section(data: dict[str, Any]) -> list[str]:
    lines = [
        "## Targets",
        "",
        "Issue 20's targets, on a login-sized session: the deterministic instrument, ours' added instructions "
        "at most 0.35 of Starlette's `SessionMiddleware` (Starlette), 0.40 of `signed_cookies` (Django, our "
        "engine and middleware) and 0.55 (our engine under Django's middleware), in process; over HTTP, added "
        "server CPU at most 0.45, 0.45 and 0.70; a request that never touches the session adds at most 2 us in "
        "process (Starlette) and verifies or decodes nothing. Issue 28's, for a read in process: at most 0.36 of "
        "Starlette's (Starlette) and 0.38 of `signed_cookies` (Django, our engine and middleware). Issue 30's, "
        "for Flask: our `FlaskSessions` adds at most 0.40 of the instructions Flask's `SecureCookieSessionInterface` "
        "adds, read and read+write, in process and on a gunicorn worker (the cookie: see "
        "[Flask](#flask-what-a-session-adds)). Issue 39's, in process: Starlette's read+write at most 0.441 of "
        "Starlette's (what it cost before the request's plan grew); Quart's read at most 0.30 of Quart's own "
        "interface; a request that never touches the session adds at most 20 k instructions over the same app "
        "with sessions off, in Flask and in Quart (the row's median and spread are thousands of instructions), "
        "judged with `SESSION_REFRESH_EACH_REQUEST` off: with it on (Flask's default) Flask's contract re-issues a "
        "permanent session's cookie on every response, so a request with a cookie reads it, used or not.",
        "",
        "| instrument | framework | request | ours / theirs | median | spread | target | verdict |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for t in data["targets"]:
        spread = "" if t["low"] is None else f"{fmt(t['low'], 3)}-{fmt(t['high'], 3)} ({t['spread']})"
        lines.append(
            f"| {t['where']} | {TITLES[t['framework']]} | {LABELS[t['workload']]} | {t['ours']} / {t['theirs']} | "
            f"{fmt(t['median'], 3)} | {spread} | {t['target']:g} | {t['verdict']} |"
        )
    counts: dict[str, int] = {}
    for t in data["targets"]:
        kind = t["verdict"].split(":")[0].split(" (")[0]
        counts[kind] = counts.get(kind, 0) + 1
    lines += ["", "Verdicts: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ".", ""]
    return lines


def downloads_section(part: dict[str, Any]) -> list[str]:
    from .downloads import human, ms

    lines = ["## Downloads", ""]
    if not part:
        return [*lines, "Not run yet: `python -m example_project.bench downloads`.", ""]
    sizes = part["sizes"]
    lines += [
        f"{where_note(part)}. Signed downloads through Django's `SignedFileView` (gunicorn, 1 worker) and "
        "Starlette's `SignedFiles` (uvicorn), files sparse on disk, a client in another process; best of "
        f"{part['settings']['repeat']} for times (one download from 256 MiB up), the largest peak RSS growth of the "
        "serving process. See [Signed download links](signed-urls.md#performance).",
        "",
        "| file size | " + " | ".join(human(s) for s in sizes) + " |",
        "|---" * (len(sizes) + 1) + "|",
    ]
    for kind, by_size in part["results"].items():
        lines.append(f"| {kind} first byte | " + " | ".join(ms(by_size[str(s)]["ttfb"]) for s in sizes) + " |")
        lines.append(f"| {kind} total | " + " | ".join(ms(by_size[str(s)]["total"]) for s in sizes) + " |")
        lines.append(
            f"| {kind} peak RSS growth | " + " | ".join(human(int(by_size[str(s)]["growth"])) for s in sizes) + " |"
        )
    lines.append("")
    return lines


def many_files_section(links: dict[str, Any], hls_part: dict[str, Any]) -> list[str]:
    """Folder links and grant cookies: instructions per file request (``link_cost``), and the server CPU of an HLS
    workload through the signed views against none (``hls``)."""
    from . import hls, link_cost

    lines = ["## Links for many files: folder links, grant cookies, HLS", ""]
    if not links.get("results"):
        lines += [f"Not run yet: `python -m example_project.bench links`{links.get('error', '')}.", ""]
    else:
        settings = links["settings"]
        lines += [
            f"{where_note(links)}. Instructions per request (callgrind, in process) of a GET of one "
            f"{settings['file_bytes']} B file through Django's `SignedFileView` (its `WSGIHandler`, no middleware) "
            "and Starlette's `SignedFiles` (driven as uvicorn drives it, on an event loop), by each way of signing "
            "it, against the same file served with no check (`django.views.static.serve`, Starlette's "
            f"`StaticFiles`); median and range of {settings['repeats']} blocks of {settings['requests']} requests "
            "after a warm-up. The last column compares each request with one by a link to that one file, in the same "
            "run: what reading a folder link's prefix and, for a cookie, finding and reading the cookie add.",
            "",
            *link_cost.table(links),
            "",
        ]
    if not hls_part.get("results"):
        lines += ["Not run yet: `python -m example_project.bench hls`.", ""]
    else:
        settings = hls_part["settings"]
        lines += [
            f"{where_note(hls_part)}. An HLS workload: a media playlist and {settings['segments']} segments of "
            f"{settings['segment_size'] // 1024} KiB fetched by folder link through the signed views (the playlist's "
            "URIs signed by the view), against the same files served with no check by the same server process "
            "(gunicorn with one sync worker; uvicorn), the server's CPU time per workload (the time its threads ran, "
            "from the kernel's schedstat, in nanoseconds); "
            f"{settings['rounds']} interleaved rounds of {settings['passes']} workloads. Target: signed at most "
            f"{hls_part['target']:.2f} of plain.",
            "",
            hls.report(hls_part),
            "",
        ]
    return lines


def edge_section(part: dict[str, Any], servers: dict[str, Any]) -> list[str]:
    """Links checked at the edge: the front servers' CPU and the runtimes' verification time (``edge_servers``), and
    what HMAC-SHA-256 costs against BLAKE2b in Python (``edge_cost``)."""
    from . import edge_cost, edge_servers

    lines = ["## Links checked at the edge", ""]
    if not servers.get("results"):
        lines += [f"Not run yet: `python -m example_project.bench edge-servers`{servers.get('error', '')}.", ""]
    else:
        settings = servers["settings"]
        lines += [
            f"{where_note(servers)}. The HLS workload (a media playlist and {settings['segments']} segments of "
            f"{settings['segment_size'] // 1024} KiB, fetched as a player does, every answer checked) served by nginx "
            "alone, by nginx checking each request with the njs verifier ([link format](link-format.md)) by a folder "
            "link and by a grant cookie, and by Django's `SignedFileView` under gunicorn (one sync worker): the "
            "server's CPU time (its threads' schedstat), "
            f"{settings['rounds']} interleaved rounds of {settings['passes']} workloads; links signed with "
            "HMAC-SHA-256. Then one verification's time inside each runtime.",
            "",
            *edge_servers.table(servers),
            "",
        ]
    lines += ["### HMAC-SHA-256 against BLAKE2b in Python", ""]
    if not part.get("results"):
        return [*lines, f"Not run yet: `python -m example_project.bench edge`{part.get('error', '')}.", ""]
    settings = part["settings"]
    return [
        *lines,
        f"{where_note(part)}. Per operation in Python: instructions (callgrind, median and range of "
        f"{settings['repeats']} blocks of {settings['operations']} calls after {settings['warmup']}) and time (best "
        "and median of 7 repeats). Links verified by `URLSigner.verify_link` with a retired secret among the "
        "fallbacks (the key id picks the key); a Django login session read and written by `SerializerSigner` with "
        "the shipped dictionary, and read as a cookie of the retired key (its [key id](format.md#key-ids) picks the "
        "key). [Link format](link-format.md) says why HMAC-SHA-256 is offered.",
        "",
        *edge_cost.table(part),
        "",
    ]


def markdown(data: dict[str, Any]) -> str:
    """The answer first (the headline ratios), then every table, then the run, the commands and the method."""
    parts = data["parts"]
    lines = [
        "# Performance",
        "",
        "<!-- Generated by python -m example_project.bench: do not edit by hand (see the end of the page). -->",
        "",
        *headline.section(data),
        *targets_section(data),
        "![Ratios of added cost, ours to the incumbent, by instrument](img/request-cost.png)",
        "",
        "## Requests: what a session adds",
        "",
    ]
    if "callgrind" in parts:
        lines += callgrind_section(parts["callgrind"])
    if "requests" in parts:
        lines += clock_tables(parts["requests"])
    if "many_users" in parts:
        lines += many_users_section(parts["many_users"])
    lines += breakdown_section(parts)
    lines += flask_cost.section(parts.get("flask", {}), data.get("targets", []))
    lines += ["## Core: dumps + loads", ""]
    if "core" in parts:
        from . import core

        lines += [
            f"{where_note(parts['core'])}. Each figure is the **best** of 9 repeats of many calls (the median "
            "beside it); ratios between best times of the same run; `~` marks a row whose median is more than "
            "15% above its best. Each library with its own defaults: django.core.signing with `SECRET_KEY`, "
            "itsdangerous' `URLSafeTimedSerializer`, blake2signer's `Blake2SerializerSigner` built once with a "
            "`max_age`, PyJWT HS256. The *primitive floor* is what any signed, serialized token must at least "
            "do: orjson `dumps` and `loads`, two keyed BLAKE2b digests and base64 both ways.",
            "",
            "![dumps + loads of a session-like payload](img/core-session.png)",
            "",
            core.markdown(parts["core"]).replace("#### ", "### "),
        ]
        notes = HERE / "notes_core.md"
        if notes.exists():
            lines += [notes.read_text().rstrip(), ""]
    else:
        lines += ["Not run yet: `python -m example_project.bench core`.", ""]
    lines += downloads_section(parts.get("downloads", {}))
    lines += many_files_section(parts.get("links", {}), parts.get("hls", {}))
    lines += edge_section(parts.get("edge", {}), parts.get("edge_servers", {}))
    lines += revocation_cost_section(parts.get("revocation_cost", {}))
    lines += revocation_scale_section(parts.get("revocation_scale", {}))
    lines += [
        "## This run",
        "",
        f"- Machine: {data['machine']}; the last command ran {', '.join(data['run'].get('parts_run', []))} on "
        f"{data['date']} in {data['run'].get('elapsed_s', 0):.0f} s"
        + (" (**quick smoke run: no figure here is to be quoted**)" if data["run"].get("quick") else "")
        + ".",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in data["versions"].items()) + ".",
        "",
        "## How to run it",
        "",
        "This page is generated by `python -m example_project.bench` (do not edit it by hand: rerun it, or "
        "`python -m example_project.bench.report` to rebuild the page and its charts from the JSON, which it only "
        "reads).",
        "",
        HOW_TO,
        "## Method",
        "",
        METHOD.format(noise=NOISE_LIMIT),
    ]
    return "\n".join(lines)


# --- writing -------------------------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("schema") == 2 else {}


def write(out: Path, parts: dict[str, Any], run: dict[str, Any]) -> list[Path]:
    results_path = out / "benchmarks" / "results.json"
    data = load(results_path)
    stamp = {"machine": machine(), "date": time.strftime("%Y-%m-%d")}
    merged = dict(data.get("parts", {}))
    for name, part in parts.items():
        merged[name] = {**stamp, **part}
    data = {
        "schema": 2,
        **stamp,
        "versions": versions(),
        "run": run,
        "parts": merged,
    }
    data["targets"] = all_targets(merged)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(data, indent=1, default=_plain) + "\n")
    return [results_path, *render(data, out)]


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    raise TypeError(type(value))


def render(data: dict[str, Any], out: Path) -> list[Path]:
    page = out / "performance.md"
    page.write_text(markdown(data))
    written = [page]
    if (headline_chart := headline.write_chart(data, out)) is not None:
        written.append(headline_chart)
    ratio_chart(data, out / "img" / "request-cost.png")
    written.append(out / "img" / "request-cost.png")
    if breakdown_chart(data, out / "img" / "request-breakdown.png"):
        written.append(out / "img" / "request-breakdown.png")
    if "core" in data["parts"]:
        from . import core

        core.chart_data(data["parts"]["core"], str(out / "img" / "core-session.png"))
        written.append(out / "img" / "core-session.png")
    if scale_chart(data, out / "img" / "revocation-scale.png"):
        written.append(out / "img" / "revocation-scale.png")
    return written


def rebuild(path: Path) -> list[Path]:
    """The page and charts again, from a results.json (``<out>/benchmarks/results.json``), which it only reads.

    The targets are judged again in memory, so that a change in how they are judged shows without a new run.
    """
    data = json.loads(path.read_text())
    data["targets"] = all_targets(data["parts"])
    return render(data, path.parent.parent)


if __name__ == "__main__":
    import sys

    target = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "results.json"
    )
    for written in rebuild(target):
        print(written)
