"""Why a session adds more per request over HTTP than in process: each suspect measured on its own.

    python -m example_project.bench.gap [--rounds 5] [--seconds 1]

Suspects, each a pair of configurations that differ in one thing only:

- **headers**: the session-less server, the client sending the logged-in Cookie header (and, for
  read+write, the server sending our Set-Cookie line as a constant): what parsing and writing
  the headers alone costs the server, with no session code.
- **garbage collector**: the servers with the collector disabled after start-up (``BENCH_GC=off``);
  in process, the same requests with the collector left on (the harness turns it off).
- **cold caches**: in process, each request preceded by a copy of 8 MB (more than the L1 and L2
  caches hold), as a server's network stack and event loop run between two requests; the copy is
  in the baseline too, so what remains is the session code running on cold caches.
- **inside or outside the application**: over HTTP, the servers also time the application
  itself (thread CPU time from the server's call to its return, ``BENCH_APP_TIMER=1``): if the
  session's added time inside the application matches the server's whole added time, the extra
  is the session code running slower in a server, not the server's work around it.

Prints Markdown tables of the added time per suspect.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import http_load, request_cost
from .interleaved import Quartiles, run_rounds

ENGINES = {
    "django": ("ours + our middleware", "Django signed_cookies", request_cost.DJANGO_BASELINE),
    "starlette": ("blake2sign_web SessionMiddleware", "Starlette SessionMiddleware", request_cost.STARLETTE_BASELINE),
}
THRASH = bytearray(8 * 1024 * 1024)


def cold(func: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        bytes(THRASH)  # a read and a write of 8 MB: more than this machine's caches hold
        return func()

    return run


def q_us(values: list[float]) -> str:
    q = Quartiles.of(values) if len(values) > 1 else Quartiles(values[0], values[0], values[0])
    return f"{q.median * 1e6:.1f} us ({q.q1 * 1e6:.1f}-{q.q3 * 1e6:.1f})"


def in_process(rounds: int, block: float, services: set[str]) -> list[str]:
    lines = [
        "| framework | workload | engine | in process (harness) | gc on | cold caches |",
        "|---|---|---|---:|---:|---:|",
    ]
    builders = {"django": request_cost.django_configs, "starlette": request_cost.starlette_configs}
    for framework, (ours, theirs, base) in ENGINES.items():
        for workload in ("read", "write"):
            configs, _ = builders[framework](workload, services, {ours, theirs})
            configs = {n: f for n, f in configs.items() if n in (ours, theirs, base)}
            runs = {
                "harness": run_rounds(configs, rounds=rounds, block=block, tick=lambda: None),
                "gc on": run_rounds(configs, rounds=rounds, block=block, tick=lambda: None, gc_off=False),
                "cold": run_rounds(
                    {n: cold(f) for n, f in configs.items()}, rounds=rounds, block=block, tick=lambda: None
                ),
            }
            for engine in (ours, theirs):
                cells = []
                for results in runs.values():
                    cells.append(q_us([t - b for t, b in zip(results[engine], results[base], strict=True)]))
                lines.append(f"| {framework} | {workload} | {engine} | " + " | ".join(cells) + " |")
    return lines


def over_http(rounds: int, seconds: float, database: Path, services: set[str]) -> list[str]:
    server_cpu, client_cpu = http_load.cpus()
    env = {"BENCH_DB": str(database), "BENCH_SERVICES": ",".join(sorted(services)), "BENCH_APP_TIMER": "1"}
    lines = [
        "| framework | workload | what | added server CPU per request | of which inside the application |",
        "|---|---|---|---:|---:|",
    ]
    servers: dict[str, http_load.Server] = {}
    try:
        for framework, (ours, theirs, base) in ENGINES.items():
            for engine in (ours, theirs, base):
                for gc_state in ("on", "off"):
                    servers[f"{framework}|{engine}|gc {gc_state}"] = http_load.Server(
                        framework, engine, {**env, "BENCH_GC": gc_state}, server_cpu
                    )
        for server in servers.values():
            server.wait()
        cookies = {}
        set_cookies = {}
        for framework, (ours, _theirs, base) in ENGINES.items():
            server = servers[f"{framework}|{ours}|gc on"]
            cookies[framework] = server.login_cookie()
            set_cookies[framework] = write_set_cookie(server, framework, cookies[framework])
            headers_server = http_load.Server(
                framework, base, {**env, "BENCH_SET_COOKIE": set_cookies[framework]}, server_cpu
            )
            headers_server.wait()
            servers[f"{framework}|headers"] = headers_server
        all_cookies = {
            key: servers[key].login_cookie()
            for key in servers
            if "|" in key and "no session" not in key and "headers" not in key
        }
        plan = []  # (framework, workload, label, server key, cookie)
        for framework, (ours, theirs, base) in ENGINES.items():
            for workload in ("read", "write"):
                for gc_state in ("on", "off"):
                    for engine in (base, ours, theirs):
                        key = f"{framework}|{engine}|gc {gc_state}"
                        plan.append((framework, workload, f"{engine}, gc {gc_state}", key, all_cookies.get(key)))
                headers_key = f"{framework}|headers" if workload == "write" else f"{framework}|{base}|gc on"
                label = "no session, our Cookie header in" + (" and our Set-Cookie out" if workload == "write" else "")
                plan.append((framework, workload, label, headers_key, cookies[framework]))
        samples: dict[tuple[str, str, str], list[float]] = {(f, w, lab): [] for f, w, lab, _, _ in plan}
        inside: dict[tuple[str, str, str], list[float]] = {(f, w, lab): [] for f, w, lab, _, _ in plan}
        for round_index in range(rounds):
            shift = round_index % len(plan)
            for framework, workload, label, key, cookie in plan[shift:] + plan[:shift]:
                path = http_path(framework, key, workload)
                app_stats(servers[key])
                sample = http_load.measure(servers[key], path, cookie, seconds, 10**6, client_cpu)
                samples[framework, workload, label].append(sample.cpu_per_request)
                inside[framework, workload, label].append(app_stats(servers[key]))
            print(f"  round {round_index + 1}/{rounds}", file=sys.stderr, flush=True)
    finally:
        for server in servers.values():
            server.stop()
    for framework, (_ours, _theirs, base) in ENGINES.items():
        for workload in ("read", "write"):
            for label in [lab for f, w, lab in samples if f == framework and w == workload]:
                if label.startswith(base):
                    continue
                gc_state = "off" if label.endswith("gc off") else "on"
                columns = []
                for source in (samples, inside):
                    baseline = source[framework, workload, f"{base}, gc {gc_state}"]
                    columns.append(
                        q_us([s - b for s, b in zip(source[framework, workload, label], baseline, strict=True)])
                    )
                lines.append(f"| {framework} | {workload} | {label} | {columns[0]} | {columns[1]} |")
    return lines


def app_stats(server: http_load.Server) -> float:
    """Seconds of application CPU per request since the last call (and start again)."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", "/__bench_stats")
        count, nanoseconds = connection.getresponse().read().split()
    finally:
        connection.close()
    return int(nanoseconds) / 1e9 / max(int(count), 1)


def http_path(framework: str, key: str, workload: str) -> str:
    base = ENGINES[framework][2]
    if framework == "django":
        return "/plain/" if (base in key or key.endswith("headers")) else f"/{workload}/"
    return f"/{workload}"


def write_set_cookie(server: http_load.Server, framework: str, cookie: str) -> str:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("GET", "/write/" if framework == "django" else "/write", headers={"Cookie": cookie})
        response = connection.getresponse()
        response.read()
        header = response.getheader("set-cookie")
    finally:
        connection.close()
    if not header:
        raise RuntimeError(f"{framework}: a write sent no Set-Cookie")
    return header


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--block", type=float, default=0.1)
    args = parser.parse_args(argv)
    services = request_cost.available_services()
    with tempfile.TemporaryDirectory() as directory:
        database = Path(directory) / "sessions.sqlite3"
        request_cost.configure_django(database, services)
        lines = ["### In process", "", *in_process(max(args.rounds, 9), args.block, services), ""]
        lines += ["### Over HTTP", "", *over_http(args.rounds, args.seconds, database, services), ""]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
