"""python -m example_project.bench [--quick] [--out DIR] [--engines NAME ...] [--no-http] [--no-pin]"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import http_load, report, request_cost
from .interleaved import run_rounds

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = ("read", "write")


class Progress:
    """A progress bar on stderr: tqdm's when installed, else a plain one."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.label = total, 0, ""
        try:
            from tqdm import tqdm

            self.bar: Any = tqdm(total=total, unit="step", file=sys.stderr, dynamic_ncols=True)
        except ImportError:
            self.bar = None

    def describe(self, label: str) -> None:
        self.label = label
        if self.bar is not None:
            self.bar.set_description(label)

    def tick(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        else:
            filled = int(30 * self.done / max(self.total, 1))
            print(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {self.label}",
                end="",
                file=sys.stderr,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            print(file=sys.stderr)


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
        for workload in WORKLOADS:
            bar.describe(f"in process: {framework}, {workload}")
            configs, sizes = builders[framework](workload, services, engines)
            results = run_rounds(configs, rounds=rounds, block=block, tick=bar.tick)
            out[framework][workload] = {"times": results, "sizes": sizes}
    return out


def http_engines(framework: str, services: set[str], engines: set[str] | None) -> list[str]:
    if framework == "django":
        names = [n for n, s in request_cost.DJANGO_ENGINES.items() if s.needs is None or s.needs in services]
        baseline = request_cost.DJANGO_BASELINE
    else:
        names = [n for n in request_cost.starlette_middlewares(services) if n != request_cost.STARLETTE_LOOP_BASELINE]
        baseline = request_cost.STARLETTE_BASELINE
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
        configs = [(f, e, w) for (f, e) in servers for w in WORKLOADS]
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
                path = path_for(framework, engine, workload)
                sample = http_load.measure(server, path, cookies[framework, engine], seconds, max_requests, client_cpu)
                out[framework][workload]["samples"][engine].append(sample)
                bar.tick()
    finally:
        for server in servers.values():
            server.stop()
    return out


def path_for(framework: str, engine: str, workload: str) -> str:
    if framework == "django":
        return "/plain/" if engine == request_cost.DJANGO_BASELINE else f"/{workload}/"
    return f"/{workload}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m example_project.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run: few short rounds; no verdicts to quote")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where docs/ outputs go (default: docs/)")
    parser.add_argument("--engines", nargs="+", help="only these engines (the baselines always run)")
    parser.add_argument("--framework", choices=["django", "starlette"], action="append", help="default: both")
    parser.add_argument("--rounds", type=int, default=15, help="in-process interleaved rounds (default 15)")
    parser.add_argument("--block", type=float, default=0.1, help="in-process seconds per configuration per round")
    parser.add_argument("--http-rounds", type=int, default=5, help="HTTP interleaved rounds (default 5)")
    parser.add_argument("--http-seconds", type=float, default=1.0, help="seconds per HTTP measurement (default 1)")
    parser.add_argument("--http-requests", type=int, default=20000, help="most requests per HTTP measurement")
    parser.add_argument("--no-http", action="store_true", help="in process only")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.block, args.http_rounds, args.http_seconds, args.http_requests = 3, 0.01, 1, 1.0, 2000
    frameworks = args.framework or ["django", "starlette"]
    engines = set(args.engines) if args.engines else None
    started = time.time()

    services = request_cost.available_services()
    cpus = (None, None) if args.no_pin else http_load.cpus()
    original_affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    pinned = None if args.no_pin else request_cost.pin_to_one_cpu()

    with tempfile.TemporaryDirectory() as directory:
        database = Path(directory) / "sessions.sqlite3"
        request_cost.configure_django(database, services)
        counts = {
            f: len(request_cost.django_configs("read", services, engines)[0])
            if f == "django"
            else len(request_cost.starlette_configs("read", services, engines)[0])
            for f in frameworks
        }
        http_count = sum(len(http_engines(f, services, engines)) for f in frameworks)
        total = len(WORKLOADS) * (
            sum(counts.values()) * args.rounds + (0 if args.no_http else http_count * args.http_rounds)
        )
        bar = Progress(total)
        try:
            inproc = in_process(frameworks, services, engines, args.rounds, args.block, bar)
            if original_affinity is not None:
                os.sched_setaffinity(0, original_affinity)
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
                )
            )
        finally:
            bar.close()
    settings = {
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
        "elapsed_s": round(time.time() - started, 1),
    }
    written = report.write(args.out, inproc, http, settings)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
