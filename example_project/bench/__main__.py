"""python -m example_project.bench [PART ...] [--quick] [options]: every benchmark, one bar, one JSON, one page.

Parts (default: all, in this order):

  core        dumps + loads of the core signer against django.core.signing, itsdangerous, blake2signer, PyJWT
  requests    what each session engine adds to one request: in process, and over HTTP (one connection)
  callgrind   instructions and simulated cache misses per request (valgrind): in process and on a server worker
  many-users  10,000 logged-in users' cookies rotated by wrk; 1 and 4 workers; api, read and read+write requests
  profile     py-spy on the server worker under load: where the time goes, by kind of work
  downloads   signed downloads from 1 B to 1 GiB: time to first byte, total time, the server's memory
  revocation-cost
              what revocation and single-use links add to one request, Django and Starlette, against the
              stateless path (a redis-server started on loopback, or --redis URL)
  revocation-scale
              revocation checks per second from 1, 2, 4 processes on one Redis and on a Redis Cluster
              (started on loopback), the latency a check adds, and what WAIT adds to a write
  links       instructions per file request by a one-file link, a folder link and a grant cookie, against
              the file served with no check (callgrind, in process, Django and Starlette)
  hls         an HLS playlist and 200 segments of 64 KiB by a folder link against no signature check: the
              server CPU, gunicorn and uvicorn (example_project/bench/hls.py)
  flask       what our Flask session adds to one request against Flask's own cookie session: instructions
              (callgrind), in process and on a gunicorn worker, and the cookie's size (flask_cost.py)
  edge        HMAC-SHA-256 against BLAKE2b in Python: instructions and time per link verification and per
              session read and write (edge_cost.py)
  edge-servers
              the HLS workload's server CPU through nginx + njs checking links, against nginx alone and
              against our Python view; one verification's time inside Node, workerd and njs (edge_servers.py)

Writes docs/benchmarks/results.json (a part not run keeps its earlier results), docs/performance.md,
docs/img/request-cost.png, docs/img/request-breakdown.png, docs/img/core-session.png and
docs/img/revocation-scale.png; ``--out DIR`` writes them under DIR instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import callgrind, cluster_scale, http_load, report, request_cost, revocation_cost, timing
from .interleaved import run_rounds

ROOT = Path(__file__).resolve().parents[2]
PARTS = (
    "core",
    "requests",
    "callgrind",
    "many-users",
    "profile",
    "downloads",
    "revocation-cost",
    "revocation-scale",
    "links",
    "hls",
    "flask",
    "edge",
    "edge-servers",
)
#: The single-connection HTTP part and the clock in process time these two kinds; the API kind is timed
#: for the targets' engines only (the many-user workload times all three kinds).
WORKLOADS = ("read", "write")
TARGET_ENGINES = {
    "django": {"Django signed_cookies", "ours + Django's middleware", "ours + our middleware"},
    "starlette": {"Starlette SessionMiddleware", "blake2sign_web SessionMiddleware"},
}


class Progress:
    """A progress bar on stderr: tqdm's when installed, else a plain one."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.label = total, 0, ""
        self.lock = threading.Lock()
        try:
            from tqdm import tqdm

            self.bar: Any = tqdm(total=total, unit="step", file=sys.stderr, dynamic_ncols=True)
        except ImportError:
            self.bar = None

    def describe(self, label: str) -> None:
        self.label = label
        if self.bar is not None:
            self.bar.set_description(label[:60])

    def tick(self) -> None:
        with self.lock:
            self.done += 1
            if self.bar is not None:
                self.bar.update(1)
            else:
                filled = int(30 * min(self.done, self.total) / max(self.total, 1))
                print(
                    f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {self.label[:60]:<60}",
                    end="",
                    file=sys.stderr,
                )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            print(file=sys.stderr)


# --- requests: the clock, in process and over HTTP -------------------------------------------------------


def in_process(
    frameworks: list[str], services: set[str], engines: set[str] | None, rounds: int, block: float, bar: Progress
) -> dict[str, Any]:
    builders: dict[str, Callable[..., Any]] = {
        "django": request_cost.django_configs,
        "starlette": request_cost.starlette_configs,
    }
    out: dict[str, Any] = {}
    for framework in frameworks:
        out[framework] = {}
        for workload in request_cost.WORKLOADS:
            bar.describe(f"in process: {framework}, {workload}")
            wanted = engines_for(framework, workload, engines)
            configs, sizes = builders[framework](workload, services, wanted)
            results = run_rounds(configs, rounds=rounds, block=block, tick=bar.tick)
            out[framework][workload] = {"times": results, "sizes": sizes}
    return out


def engines_for(framework: str, workload: str, engines: set[str] | None) -> set[str] | None:
    """The API kind runs the targets' engines only (within ``engines`` when given)."""
    if workload != "api":
        return engines
    return TARGET_ENGINES[framework] & engines if engines else TARGET_ENGINES[framework]


def count_in_process(framework: str, services: set[str], engines: set[str] | None) -> int:
    total = 0
    for workload in request_cost.WORKLOADS:
        wanted = engines_for(framework, workload, engines)
        if framework == "django":
            names = [
                n
                for n, s in request_cost.DJANGO_ENGINES.items()
                if (s.needs is None or s.needs in services)
                and (
                    n == request_cost.DJANGO_BASELINE
                    or (wanted is None and n not in request_cost.NOT_ENGINES)
                    or (wanted and n in wanted)
                )
            ]
        else:
            names = [
                n
                for n in request_cost.starlette_middlewares(services)
                if n in (request_cost.STARLETTE_BASELINE, request_cost.STARLETTE_LOOP_BASELINE)
                or (wanted is None and n not in request_cost.NOT_ENGINES)
                or (wanted is not None and n in wanted)
            ]
            if request_cost.STARLETTE_LOOP_BASELINE in names and not any(
                request_cost.needs_event_loop(n) for n in names if n != request_cost.STARLETTE_LOOP_BASELINE
            ):
                names.remove(request_cost.STARLETTE_LOOP_BASELINE)
        total += len(names)
    return total


def http_engines(framework: str, services: set[str], engines: set[str] | None) -> list[str]:
    if framework == "django":
        names = [n for n, s in request_cost.DJANGO_ENGINES.items() if s.needs is None or s.needs in services]
        baseline = request_cost.DJANGO_BASELINE
    else:
        names = [n for n in request_cost.starlette_middlewares(services) if n != request_cost.STARLETTE_LOOP_BASELINE]
        baseline = request_cost.STARLETTE_BASELINE
    names = [n for n in names if n not in request_cost.NOT_ENGINES]
    return [n for n in names if n == baseline or engines is None or n in engines]


def over_http(
    frameworks: list[str],
    services: set[str],
    engines: set[str] | None,
    database: Path,
    rounds: int,
    seconds: float,
    max_requests: int,
    cpus: tuple[int | None, int | None],
    bar: Progress,
    workloads: tuple[str, ...] = WORKLOADS,
) -> dict[str, Any]:
    server_cpu, client_cpu = cpus
    env = {"BENCH_DB": str(database), "BENCH_SERVICES": ",".join(sorted(services))}
    servers: dict[tuple[str, str], http_load.Server] = {}
    out: dict[str, Any] = {}
    try:
        for framework in frameworks:
            for engine in http_engines(framework, services, engines):
                servers[framework, engine] = http_load.Server(framework, engine, env, server_cpu)
        for server in servers.values():
            server.wait()
        baselines = {request_cost.DJANGO_BASELINE, request_cost.STARLETTE_BASELINE}
        cookies = {key: None if key[1] in baselines else server.login_cookie() for key, server in servers.items()}
        configs = [(f, e, w) for (f, e) in servers for w in workloads]
        for framework, engine, workload in configs:
            out.setdefault(framework, {}).setdefault(workload, {"samples": {}, "sizes": {}})
            cookie = cookies[framework, engine]
            out[framework][workload]["sizes"][engine] = None if cookie is None else len(cookie.split("=", 1)[1])
            out[framework][workload]["samples"][engine] = []
        for round_index in range(rounds):
            shift = round_index % len(configs)
            for framework, engine, workload in configs[shift:] + configs[:shift]:
                bar.describe(f"over HTTP: round {round_index + 1}/{rounds}")
                server = servers[framework, engine]
                path = request_cost.server_path(framework, engine, workload)
                sample = http_load.measure(server, path, cookies[framework, engine], seconds, max_requests, client_cpu)
                out[framework][workload]["samples"][engine].append(sample)
                bar.tick()
    finally:
        for server in servers.values():
            server.stop()
    return out


# --- the command ---------------------------------------------------------------------------------------------


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m example_project.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("parts", nargs="*", metavar="PART", help="default: all: " + ", ".join(PARTS))
    parser.add_argument("--quick", action="store_true", help="a smoke run of every part (under a minute): no verdicts")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where the outputs go (default: docs/)")
    parser.add_argument("--engines", nargs="+", help="requests, HTTP: only these engines (the baselines always run)")
    parser.add_argument("--framework", choices=["django", "starlette"], action="append", help="default: both")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    group = parser.add_argument_group("requests")
    group.add_argument("--rounds", type=int, default=15, help="in-process interleaved rounds (default 15)")
    group.add_argument("--block", type=float, default=0.1, help="in-process seconds per configuration per round")
    group.add_argument("--http-rounds", type=int, default=5, help="HTTP interleaved rounds (default 5)")
    group.add_argument("--http-seconds", type=float, default=1.0, help="seconds per HTTP measurement (default 1)")
    group.add_argument("--http-requests", type=int, default=20000, help="most requests per HTTP measurement")
    group.add_argument("--no-http", action="store_true", help="in process only")
    group = parser.add_argument_group("callgrind")
    group.add_argument("--cg-requests", type=int, default=50, help="requests per counted block (default 50)")
    group.add_argument("--cg-server-requests", type=int, default=200, help="on a server (default 200)")
    group.add_argument("--cg-no-server", action="store_true", help="in process only (no server under valgrind)")
    group.add_argument(
        "--cg-timeout",
        type=float,
        default=900,
        help="seconds one valgrind run may take before it is stopped (default 900; raise it on a busy machine)",
    )
    group = parser.add_argument_group("many-users")
    group.add_argument("--users", type=int, default=many_users_default(), help="distinct users (default 10000)")
    group.add_argument("--mu-rounds", type=int, default=3, help="interleaved rounds (default 3)")
    group.add_argument("--mu-seconds", type=float, default=1.0, help="seconds per measurement (default 1)")
    group.add_argument("--connections", type=int, default=8, help="keep-alive connections (default 8)")
    group = parser.add_argument_group("profile")
    group.add_argument("--profile-seconds", type=float, default=3.0, help="seconds of load per profile (default 3)")
    group.add_argument("--profile-rate", type=int, default=400, help="py-spy samples per second (default 400)")
    group = parser.add_argument_group("downloads")
    group.add_argument("--max-size", default="1G", help="largest file (default 1G)")
    group = parser.add_argument_group("revocation-cost")
    group.add_argument(
        "--cost-rounds", type=int, default=revocation_cost.ROUNDS, help="interleaved rounds (default %(default)s)"
    )
    group.add_argument(
        "--cost-block",
        type=float,
        default=revocation_cost.BLOCK,
        help="seconds per configuration per round (default %(default)s)",
    )
    group.add_argument("--redis", metavar="URL", help="a Redis to use (default: start a redis-server on loopback)")
    group = parser.add_argument_group("revocation-scale")
    group.add_argument(
        "--scale-processes", type=process_counts, default=None, help="application process counts (default 1,2,4)"
    )
    group.add_argument("--scale-concurrency", type=int, default=16, help="checks in flight per process (default 16)")
    group.add_argument("--scale-seconds", type=float, default=5.0, help="seconds per throughput run (default 5)")
    group.add_argument("--scale-samples", type=int, default=3000, help="checks timed one at a time (default 3000)")
    args = parser.parse_args(argv)
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}: choose from {', '.join(PARTS)}")
    if args.quick:
        args.rounds, args.block, args.http_rounds, args.http_seconds, args.http_requests = 3, 0.01, 1, 1.0, 2000
        args.cg_requests, args.cg_no_server = 5, True
        args.no_http = True  # the profile and the many-user workload smoke-test the servers
        args.users, args.mu_rounds, args.mu_seconds = 200, 1, 1.0
        args.profile_seconds, args.profile_rate = 1.0, 200
        args.max_size = "1M"
        args.cost_rounds, args.cost_block = revocation_cost.QUICK_ROUNDS, revocation_cost.QUICK_BLOCK
        args.scale_seconds, args.scale_samples = 1.0, 300
        if args.scale_processes is None:
            args.scale_processes = cluster_scale.QUICK_PROCESSES
        if not args.engines:
            args.engines = sorted(TARGET_ENGINES["django"] | TARGET_ENGINES["starlette"])
    if args.scale_processes is None:
        args.scale_processes = cluster_scale.PROCESSES
    args.parts = list(dict.fromkeys(args.parts)) or list(PARTS)
    return args


def process_counts(text: str) -> tuple[int, ...]:
    """``1,2,4`` -> (1, 2, 4)."""
    try:
        counts = tuple(int(n) for n in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of process counts: {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"process counts are 1 or more: {text!r}")
    return counts


def many_users_default() -> int:
    from .many_users import USERS

    return USERS


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from . import edge_servers, many_users, profile

    frameworks = args.framework or ["django", "starlette"]
    #: A smoke run times the read only over HTTP, with many users and in the profile (every kind in process).
    kinds: tuple[str, ...] = ("read",) if args.quick else WORKLOADS
    engines = set(args.engines) if args.engines else None
    started = time.time()
    services = request_cost.available_services()
    cpus = (None, None) if args.no_pin else http_load.cpus()
    timing.VERBOSE = False
    parts: dict[str, Any] = {}
    elapsed: dict[str, float] = {}

    steps = {
        "core": 3,
        "requests": args.rounds * sum(count_in_process(f, services, engines) for f in frameworks)
        + (
            0
            if args.no_http
            else len(kinds) * args.http_rounds * sum(len(http_engines(f, services, engines)) for f in frameworks)
        ),
        "callgrind": sum(1 + (0 if args.cg_no_server else len(callgrind.SERVER_ENGINES[f])) for f in frameworks),
        "many-users": args.mu_rounds
        * (len(kinds) if args.quick else len(many_users.KINDS))
        * sum(len(many_users.ENGINES[f]) for f in frameworks)
        * (1 if args.quick else len(many_users.WORKERS)),
        "profile": (len(kinds) if args.quick else len(profile.KINDS))
        * sum(len(profile.ENGINES[f]) for f in frameworks),
        "downloads": 2,
        "revocation-cost": revocation_cost.steps(args.cost_rounds),
        "revocation-scale": cluster_scale.steps(args.scale_processes),
        "links": 2,
        "hls": 2 * (2 if args.quick else 7),
        "flask": 1 if args.quick else 4,
        "edge": 2,
        "edge-servers": edge_servers.ticks(args.quick),
    }
    bar = Progress(sum(steps[p] for p in args.parts))
    errors: dict[str, str] = {}

    def save() -> list[Path]:
        """The results so far into the JSON and the page: a part that fails later loses nothing before it."""
        for name, part_data in parts.items():
            part_data.setdefault("settings", {})
            part_data["settings"]["quick"] = args.quick
            part_data["settings"]["elapsed_s"] = round(elapsed.get(name, 0.0), 1)
        run = {"elapsed_s": round(time.time() - started, 1), "quick": args.quick, "parts_run": args.parts}
        if errors:
            run["errors"] = dict(errors)
        return report.write(args.out, dict(parts), run)

    background: threading.Thread | None = None
    with tempfile.TemporaryDirectory() as directory:
        database = Path(directory) / "sessions.sqlite3"
        request_cost.configure_django(database, services)

        def run_callgrind() -> None:
            try:
                count_callgrind()
            except Exception:  # reported like any part's failure
                errors["callgrind"] = traceback.format_exc()[-3000:]

        def count_callgrind() -> None:
            begun = time.time()
            why = callgrind.supported()
            if why is not None:
                parts["callgrind"] = {"error": why}
                return
            bar.describe("callgrind: in process")
            result: dict[str, Any] = {
                "settings": {
                    "requests": args.cg_requests,
                    "server_requests": None if args.cg_no_server else args.cg_server_requests,
                    "server_warmup": None if args.cg_no_server else callgrind.SERVER_WARMUP,
                    "repeats": callgrind.REPEATS,
                    "caches": callgrind.CACHES,
                },
                "in_process": callgrind.in_process(
                    frameworks, database, args.cg_requests, 5, args.cg_timeout, bar.tick, quick=args.quick
                ),
            }
            if not args.cg_no_server:
                bar.describe("callgrind: on servers")
                result["server"] = callgrind.on_server(
                    frameworks, database, services, args.cg_server_requests, callgrind.SERVER_WARMUP, 300, bar.tick
                )
            parts["callgrind"] = result
            elapsed["callgrind"] = time.time() - begun

        if args.quick and "callgrind" in args.parts:
            # Counts do not depend on what else the machine runs: in a smoke run, count beside the clock.
            background = threading.Thread(target=run_callgrind, daemon=True)
            background.start()
        try:
            for part in args.parts:
                begun = time.time()
                try:
                    if part == "core":
                        from . import core

                        bar.describe("core: dumps + loads")
                        parts["core"] = {"settings": {"quick": args.quick}, **core.run(args.quick, bar.tick)}
                    elif part == "requests":
                        pinned = None
                        original = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
                        if not args.no_pin:
                            pinned = request_cost.pin_to_one_cpu()
                        inproc = in_process(frameworks, services, engines, args.rounds, args.block, bar)
                        if original is not None:
                            os.sched_setaffinity(0, original)
                        http = (
                            {}
                            if args.no_http
                            else over_http(
                                frameworks,
                                services,
                                engines,
                                database,
                                args.http_rounds,
                                args.http_seconds,
                                args.http_requests,
                                cpus,
                                bar,
                                kinds,
                            )
                        )
                        parts["requests"] = report.requests_part(
                            inproc,
                            http,
                            {
                                "quick": args.quick,
                                "rounds": args.rounds,
                                "block_s": args.block,
                                "http_rounds": args.http_rounds,
                                "http_seconds": args.http_seconds,
                                "http_max_requests": args.http_requests,
                                "pinned_cpu": pinned,
                                "server_cpu": cpus[0],
                                "client_cpu": cpus[1],
                                "load_generator": None if args.no_http else http_load.load_generator(),
                                "services": sorted(services),
                            },
                        )
                    elif part == "callgrind":
                        if background is None:
                            run_callgrind()
                    elif part == "many-users":
                        workers = (1,) if args.quick else many_users.WORKERS
                        parts["many_users"] = {
                            "settings": {
                                "users": args.users,
                                "rounds": args.mu_rounds,
                                "seconds": args.mu_seconds,
                                "connections": args.connections,
                                "workers": list(workers),
                                "django_worker": "gunicorn gthread, 1 thread",
                                "starlette_worker": "uvicorn",
                            },
                            "results": many_users.run(
                                frameworks,
                                database,
                                services,
                                users=args.users,
                                rounds=args.mu_rounds,
                                seconds=args.mu_seconds,
                                connections=args.connections,
                                workers=workers,
                                kinds=kinds if args.quick else many_users.KINDS,
                                tick=bar.tick,
                                describe=bar.describe,
                            ),
                        }
                    elif part == "profile":
                        parts["profile"] = {
                            "settings": {"seconds": args.profile_seconds, "rate": args.profile_rate},
                            "results": profile.run(
                                frameworks,
                                database,
                                services,
                                seconds=args.profile_seconds,
                                rate=args.profile_rate,
                                kinds=kinds if args.quick else profile.KINDS,
                                tick=bar.tick,
                                describe=bar.describe,
                            ),
                        }
                    elif part == "links":
                        from . import link_cost

                        bar.describe("links: callgrind, per file request")
                        parts["links"] = link_cost.run(bar.tick, requests=10 if args.quick else link_cost.REQUESTS)
                    elif part == "hls":
                        from . import hls

                        bar.describe("hls: signed against plain")
                        parts["hls"] = hls.run(2 if args.quick else 7, 1 if args.quick else 3, bar.tick)
                    elif part == "flask":
                        from . import flask_cost

                        bar.describe("flask: callgrind, in process and on gunicorn")
                        parts["flask"] = flask_cost.run(
                            bar.tick,
                            requests=5 if args.quick else flask_cost.REQUESTS,
                            server_requests=None if args.quick else flask_cost.SERVER_REQUESTS,
                            warmup=5 if args.quick else flask_cost.WARMUP,
                        )
                    elif part == "edge":
                        from . import edge_cost

                        bar.describe("edge: HMAC-SHA-256 against BLAKE2b, callgrind and clock")
                        parts["edge"] = edge_cost.run(bar.tick, requests=20 if args.quick else edge_cost.OPERATIONS,
                                                      quick=args.quick)  # fmt: skip
                    elif part == "edge-servers":
                        bar.describe("edge-servers: nginx + njs, nginx, Python; verification per runtime")
                        parts["edge_servers"] = edge_servers.run(bar.tick, quick=args.quick)
                    elif part == "downloads":
                        parts["downloads"] = downloads_part(args.max_size, bar)
                    elif part == "revocation-cost":
                        why = revocation_cost.supported(args.redis)
                        if why is not None:
                            parts["revocation_cost"] = {"error": why}
                        else:
                            parts["revocation_cost"] = revocation_cost.run(
                                rounds=args.cost_rounds,
                                block=args.cost_block,
                                redis=args.redis,
                                tick=bar.tick,
                                describe=bar.describe,
                            )
                    elif part == "revocation-scale":
                        why = cluster_scale.supported()
                        if why is not None:
                            parts["revocation_scale"] = {"error": why}
                        else:
                            parts["revocation_scale"] = cluster_scale.run(
                                processes=args.scale_processes,
                                concurrency=args.scale_concurrency,
                                seconds=args.scale_seconds,
                                samples=args.scale_samples,
                                tick=bar.tick,
                                describe=bar.describe,
                            )
                except Exception:  # a part that fails is reported; the others run and are kept
                    errors[part] = traceback.format_exc()[-3000:]
                    print(f"\n{part} failed:\n{errors[part]}", file=sys.stderr)
                    continue
                elapsed[part.replace("-", "_")] = time.time() - begun
                save()
            if background is not None:
                bar.describe("callgrind: waiting for valgrind")
                background.join()
        finally:
            bar.close()
    written = save()
    for path in written:
        print(path)
    return 0


def downloads_part(max_size: str, bar: Progress) -> dict[str, Any]:
    from . import downloads

    limit = downloads.parse_size(max_size)
    sizes = [size for size in downloads.SIZES if size <= limit]
    results = {}
    with tempfile.TemporaryDirectory(prefix="blake2sign-downloads-") as directory:
        root = Path(directory)
        for size in sizes:
            with open(root / f"{size}.bin", "wb") as handle:  # sparse
                handle.truncate(size)
        for kind in ("Django", "Starlette"):
            bar.describe(f"downloads: {kind}")
            results[kind] = {str(k): v for k, v in downloads.measure_server(kind, root, sizes, 5).items()}
            bar.tick()
    return {"settings": {"max_size": limit, "repeat": 5}, "sizes": sizes, "results": results}


if __name__ == "__main__":
    sys.exit(main())
