"""Instructions and simulated cache misses per request, counted by valgrind's callgrind: a deterministic instrument.

The clock on a shared virtual machine drifts from minute to minute; an instruction count does not.
Two ways, both under ``valgrind --tool=callgrind --cache-sim=yes``:

- **in process**: one Python process per framework builds every configuration (the same Django
  handlers and Starlette applications as the timed in-process benchmark) with valgrind's
  instrumentation off, turns it on, warms each up, then runs blocks of N requests. Each block is
  bracketed by two of valgrind's client requests, made from Python (``client_request``): zero the
  counters, then dump them, so every dump holds exactly one block.
- **on a real server**: the benchmark's gunicorn (one sync worker) or uvicorn (one worker) runs under
  valgrind; a client in another process sends N requests over 127.0.0.1 between two marker requests
  (``/__bench_zero`` and ``/__bench_dump``, answered by a wrapper outside the session middleware), so
  each dump holds N whole requests as the worker served them: HTTP parsing, the event loop or the
  sync worker's accept, the application, the socket writes (the user-space side: valgrind sees no
  kernel instruction).

Counts: Ir (instructions), and from the cache simulation (callgrind's model of this CPU's L1 and
last-level caches, a fixed geometry: ``CACHES``) D1 and LL misses. Each block runs ``REPEATS`` times;
in process they agree to a fraction of a percent (the hash seed is fixed); on a server, timing can
change how often the event loop polls and when the garbage collector runs, so the median is quoted
and the range kept.

    python -m example_project.bench callgrind [--quick]
"""

from __future__ import annotations

import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cgparse, request_cost

if TYPE_CHECKING:
    from .http_load import Server

#: The engines served under valgrind (one server each): the targets' rows and the baselines.
SERVER_ENGINES = request_cost.SERVER_ENGINES

ROOT = Path(__file__).resolve().parents[2]
#: Blocks per configuration: their median is quoted, their range is the spread.
REPEATS = 3
#: Requests a server worker serves before its first counted block. CPython 3.11+ specializes its bytecode
#: as it runs, and re-specializes a site with backoff: after 5 requests a block still paid for some of it.
#: A block also holds the end of the marker request that zeroed the counters and the start of the one that
#: dumps them (about 0.4 M instructions on gunicorn), so blocks are long too (``--cg-server-requests``, 200):
#: at 30 requests per block after 5, that fixed part added up to 15 k instructions to every request, more
#: to some engines than to others (measured 2026-11-25).
SERVER_WARMUP = 50
EVENTS = ("Ir", "D1mr", "DLmr", "D1mw", "DLmw", "I1mr", "ILmr")


def estimated_cycles(row: dict[str, list[float]]) -> list[float]:
    """Per repeat: callgrind's usual estimate, Ir + 10 x L1 misses + 100 x last-level misses."""
    return [
        ir + 10 * (i1 + d1r + d1w) + 100 * (il + dlr + dlw)
        for ir, i1, d1r, d1w, il, dlr, dlw in zip(
            row["Ir"],
            row["I1mr"],
            row["D1mr"],
            row["D1mw"],
            row.get("ILmr", [0.0] * len(row["Ir"])),
            row["DLmr"],
            row["DLmw"],
            strict=False,
        )
    ]


#: The configurations the instrument counts: the targets' engines, their baselines and the layering probes.
DJANGO = [
    request_cost.DJANGO_BASELINE,
    "Django signed_cookies",
    "ours + Django's middleware",
    "ours + our middleware",
    request_cost.DJANGO_ENCRYPTED,
    request_cost.DJANGO_ENCRYPTED_UNDER_DJANGO,
    request_cost.DJANGO_PASS_THROUGH,
    request_cost.DJANGO_COOKIE_PROBE,
]
STARLETTE = [
    request_cost.STARLETTE_BASELINE,
    "Starlette SessionMiddleware",
    "blake2sign_web SessionMiddleware",
    "blake2sign_web, compression=None",
    request_cost.STARLETTE_PASS_THROUGH,
    request_cost.STARLETTE_COOKIE_PROBE,
    request_cost.STARLETTE_READY_VALUE,
    request_cost.STARLETTE_ENCRYPTED,
]
ENGINES = {"django": DJANGO, "starlette": STARLETTE}
#: Counted on cold caches too, in process (read and read+write): the targets' engines and the baselines.
COLD_ENGINES = {
    "django": {
        request_cost.DJANGO_BASELINE,
        "Django signed_cookies",
        "ours + Django's middleware",
        "ours + our middleware",
    },
    "starlette": {
        request_cost.STARLETTE_BASELINE,
        "Starlette SessionMiddleware",
        "blake2sign_web SessionMiddleware",
        "blake2sign_web, compression=None",
    },
}
#: 12 MiB copied before each cold request: more than the simulated 8 MiB last level and the L1s.
_COLD_SOURCE = bytearray(12 * 1024 * 1024)
_COLD_TARGET = bytearray(12 * 1024 * 1024)
#: The baselines' servers also count requests carrying a session-sized Cookie header (the probe).
PROBE_OF = {
    request_cost.DJANGO_BASELINE: request_cost.DJANGO_COOKIE_PROBE,
    request_cost.STARLETTE_BASELINE: request_cost.STARLETTE_COOKIE_PROBE,
}


def valgrind() -> str | None:
    return shutil.which("valgrind")


#: A fixed cache geometry, so that miss counts do not depend on the machine valgrind reads its caches from:
#: 32 KiB 8-way L1s and an 8 MiB 16-way last level, 64-byte lines (a common server core and its L3 share).
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]


def command(out_dir: Path) -> list[str]:
    """valgrind's command line: instrumentation off until the process starts it (start-up at ~5x, not ~100x)."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--cache-sim=yes",
        *CACHES,
        "--instr-atstart=no",
        f"--callgrind-out-file={out_dir}/callgrind.out.%p",
        "--quiet",
    ]


def supported() -> str | None:
    """Why the instrument cannot run here, or None."""
    if valgrind() is None:
        return "valgrind is not installed (Debian: apt-get install valgrind)"
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"the client requests are x86_64 machine code; this is {platform.machine()}"
    return None


# valgrind's client requests, from Python: valgrind.h's "special instruction" (four rotations of rdi
# by 3+13+61+51 = 128 bits, then xchg rbx,rbx; the request's arguments at rax, its answer in rdx), in an
# executable page called through ctypes. Outside valgrind the sequence changes nothing and answers 0.
_CODE = bytes.fromhex("4889f831d248c1c70348c1c70d48c1c73d48c1c7334887db4889d0c3")
_BASE = (ord("C") << 24) | (ord("T") << 16)  # VG_USERREQ_TOOL_BASE('C','T'): callgrind's requests
DUMP_STATS, ZERO_STATS, START_INSTRUMENTATION = _BASE, _BASE + 1, _BASE + 4
RUNNING_ON_VALGRIND = 0x1001
_request: Callable[[int], int] | None = None
_started = False


def client_request(code: int) -> int:
    global _request
    if _request is None:
        import ctypes
        import mmap

        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(_CODE)
        function = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        keep = page  # the page must outlive the function

        def call(request: int) -> int:
            args = (ctypes.c_ulong * 6)(request, 0, 0, 0, 0, 0)
            _ = keep
            return int(function(ctypes.addressof(args)))

        _request = call
    return _request(code)


def start() -> None:
    """Turn callgrind's instrumentation on (once)."""
    global _started
    if not _started:
        client_request(START_INSTRUMENTATION)
        _started = True


def zero() -> None:
    client_request(ZERO_STATS)


def dump() -> None:
    client_request(DUMP_STATS)


# --- the shared driver: blocks of requests counted under valgrind, in child processes ---------------------


def begin() -> None:
    """Under valgrind, once everything is built: freeze what start-up made, then turn the instrumentation on."""
    gc.collect()
    gc.freeze()  # what start-up built is never collected again: each block's collection then costs little
    start()


def count(
    label: dict[str, Any],
    request: Callable[[], object],
    requests: int,
    warmup: int,
    labels: list[dict[str, Any]],
    before: Callable[[], object] | None = None,
) -> None:
    """Under valgrind: ``request`` warmed up, then counted in ``REPEATS`` blocks of ``requests`` (each zeroed, then
    dumped), each block's ``label`` appended to ``labels`` in dump order. ``before``: run before each request."""
    for _ in range(warmup):
        request()
    for repeat in range(REPEATS):
        gc.collect()
        gc.disable()
        zero()
        for _ in range(requests):
            if before is not None:
                before()
            request()
        dump()
        gc.enable()
        labels.append({**label, "repeat": repeat, "requests": requests})


def run_children(
    children: dict[str, tuple[list[str], dict[str, str]]], timeout: float, tick: Callable[[], object]
) -> dict[str, tuple[list[cgparse.Dump], list[dict[str, Any]]] | dict[str, str]]:
    """Each child (its ``python -m`` argv, with the labels file to write as its last argument, and extra environment)
    under valgrind, side by side: its dumps and labels, or {"error": why}."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        runs: dict[str, tuple[subprocess.Popen[str], Path]] = {}
        deadline = time.monotonic() + timeout
        for key, (argv, extra) in children.items():
            labels = directory / f"{len(runs)}.json"
            env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0", **extra}
            process = subprocess.Popen(
                [*command(directory), sys.executable, "-m", *argv, str(labels)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            runs[key] = (process, labels)
        for key, (process, labels) in runs.items():
            try:
                _, error_text = process.communicate(timeout=max(deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                results[key] = {"error": f"valgrind run over {timeout:.0f} s: stopped"}
                continue
            finally:
                tick()
            if process.returncode != 0:
                results[key] = {"error": error_text[-1500:]}
                continue
            names: dict[str, dict[str, str]] = {}
            dumps = [cgparse.parse(path, names) for path in dumps_of(directory, process.pid)]
            results[key] = (dumps, json.loads(labels.read_text()))
    return results


# --- in process -------------------------------------------------------------------------------------------


#: A smoke run counts the baselines, ours and the incumbents only.
QUICK_ENGINES = {
    "django": [request_cost.DJANGO_BASELINE, "Django signed_cookies", "ours + our middleware"],
    "starlette": [request_cost.STARLETTE_BASELINE, "Starlette SessionMiddleware", "blake2sign_web SessionMiddleware"],
}


def child(framework: str, database: str, requests: int, warmup: int, labels_path: str) -> None:
    """Runs under valgrind: builds every configuration, turns the instrumentation on, counts their blocks in order."""
    quick = os.environ.get("BENCH_CALLGRIND_QUICK") == "1"
    engines = set((QUICK_ENGINES if quick else ENGINES)[framework])
    if os.environ.get("BENCH_CALLGRIND_ENGINES"):
        engines = set(json.loads(os.environ["BENCH_CALLGRIND_ENGINES"])) | {
            request_cost.DJANGO_BASELINE if framework == "django" else request_cost.STARLETTE_BASELINE
        }
    workloads = json.loads(os.environ.get("BENCH_CALLGRIND_WORKLOADS") or "null") or request_cost.WORKLOADS
    labels: list[dict[str, Any]] = []
    if framework == "django":
        request_cost.configure_django(Path(database), set(), migrate=False)
    builder = request_cost.django_configs if framework == "django" else request_cost.starlette_configs
    built = {workload: builder(workload, set(), engines) for workload in workloads}
    begin()
    for workload, (configs, sizes) in built.items():
        for name, func in configs.items():
            label = {"engine": name, "workload": workload, "size": sizes[name]}
            count(label, func, requests, warmup, labels)
            if workload == "api" or name not in COLD_ENGINES[framework]:
                continue
            # Cold caches: each request follows a copy larger than the simulated last-level cache, as a
            # server's kernel and event loop run between two requests (the copy is in the baseline too).
            cold = {**label, "workload": f"cold {workload}"}
            count(cold, func, max(requests // 5, 2), 0, labels, before=_cold_caches)
    Path(labels_path).write_text(json.dumps(labels))


def _cold_caches() -> None:
    _COLD_TARGET[:] = _COLD_SOURCE


def dumps_of(directory: Path, pid: int) -> list[Path]:
    """The numbered dumps of one process, in order (not the final one written at exit)."""
    found = [p for p in directory.glob(f"callgrind.out.{pid}.*") if p.suffix[1:].isdigit()]
    return sorted(found, key=lambda p: int(p.suffix[1:]))


def summarise(dumps: list[cgparse.Dump], labels: list[dict[str, Any]]) -> dict[str, Any]:
    """{workload: {engine: {event: [per request, one per repeat], "groups": {...}, "decoding_calls": {...}}}}."""
    out: dict[str, Any] = {}
    for dump_, label in zip(dumps, labels, strict=True):
        n = label["requests"]
        row = out.setdefault(label["workload"], {}).setdefault(
            label["engine"], {e: [] for e in EVENTS} | {"cookie_bytes": label.get("size")}
        )
        for event in EVENTS:
            row[event].append(dump_.total(event) / n)
        if label["repeat"] == 0:
            row["groups"] = {k: v / n for k, v in cgparse.grouped(dump_).items()}
            row["groups_D1mr"] = {k: v / n for k, v in cgparse.grouped(dump_, "D1mr").items()}
            misses: dict[str, float] = {}
            for event in ("ILmr", "DLmr", "DLmw"):
                for kind, value in cgparse.grouped(dump_, event).items():
                    misses[kind] = misses.get(kind, 0.0) + value / n
            row["groups_LLm"] = misses
            row["decoding_calls"] = {k: v / n for k, v in cgparse.decoding_calls(dump_).items()}
    return out


def in_process(
    frameworks: list[str],
    database: Path,
    requests: int,
    warmup: int,
    timeout: float,
    tick: Callable[[], object],
    quick: bool = False,
    engines: list[str] | None = None,
    workloads: list[str] | None = None,
) -> dict[str, Any]:
    """Per framework: what ``summarise`` gives, counted in one valgrind run each (run side by side).

    ``engines``, ``workloads``: only these (the baseline always runs): a smoke test counts little.
    """
    extra = {
        "BENCH_CALLGRIND_QUICK": "1" if quick else "0",
        "BENCH_CALLGRIND_ENGINES": json.dumps(engines) if engines else "",
        "BENCH_CALLGRIND_WORKLOADS": json.dumps(workloads) if workloads else "",
    }
    children = {
        framework: (
            ["example_project.bench.callgrind", "--child", framework, str(database), str(requests), str(warmup)],
            extra,
        )
        for framework in frameworks
    }
    return {
        framework: found if isinstance(found, dict) else summarise(*found)
        for framework, found in run_children(children, timeout, tick).items()
    }


# --- on a real server -------------------------------------------------------------------------------------


def on_server(
    frameworks: list[str],
    database: Path,
    services: set[str],
    requests: int,
    warmup: int,
    timeout: float,
    tick: Callable[[], object],
) -> dict[str, Any]:
    """Per framework and engine: one server under valgrind, blocks of ``requests`` requests over 127.0.0.1.

    Two servers at a time, each with its own client thread: the machine has two cores, and each valgrind
    keeps one busy. Counts do not depend on what runs beside them.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    results: dict[str, Any] = {}
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        jobs = [(f, e, directory / f"{f}-{i}") for f in frameworks for i, e in enumerate(SERVER_ENGINES[f])]

        def run(job: tuple[str, str, Path]) -> None:
            framework, engine, out = job
            out.mkdir()
            try:
                part = serve(framework, engine, out, database, services, requests, warmup, timeout)
                with lock:
                    for workload, rows in part.items():
                        results.setdefault(framework, {}).setdefault(workload, {}).update(rows)
            except Exception as error:  # one server's failure is reported, the run goes on
                with lock:
                    results.setdefault(framework, {}).setdefault("errors", {})[engine] = repr(error)[:500]
            tick()

        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(run, jobs))
    return results


def serve(
    framework: str,
    engine: str,
    out: Path,
    database: Path,
    services: set[str],
    requests: int,
    warmup: int,
    timeout: float,
) -> dict[str, Any]:
    """One server under valgrind: its blocks, summarised as ``summarise`` does."""
    from . import http_load

    env = {
        "BENCH_DB": str(database),
        "BENCH_SERVICES": ",".join(sorted(services)),
        "BENCH_MARKERS": "1",
        "PYTHONHASHSEED": "0",
    }
    server = http_load.Server(framework, engine, env, None, prefix=command(out), timeout=300)
    baselines = (request_cost.DJANGO_BASELINE, request_cost.STARLETTE_BASELINE)
    probe = PROBE_OF.get(engine)

    def plan(server: http_load.Server) -> list[tuple[str, str, str, str | None]]:
        cookie = None if engine in baselines else server.login_cookie()
        # The baseline's server also serves a session-sized Cookie header it never reads: the
        # server's and framework's cost of the header alone.
        variants = [(engine, cookie)] + ([(probe, request_cost.probe_cookie(framework))] if probe else [])
        return [
            (label, workload, request_cost.server_path(framework, engine, workload), sent)
            for workload in request_cost.WORKLOADS
            for label, sent in variants
        ]

    return count_server(server, out, plan, requests, warmup, timeout)


def count_server(
    server: Server,
    out: Path,
    plan: Callable[[Server], list[tuple[str, str, str, str | None]]],
    requests: int,
    warmup: int,
    timeout: float,
) -> dict[str, Any]:
    """A server started under valgrind (``command(out)``) with the markers on: its blocks, summarised as ``summarise``
    does, then the server stopped. ``plan(server)``, once it answers: (engine label, workload, path, Cookie header or
    None) for each row; each row is warmed up, then counted ``REPEATS`` times in blocks of ``requests``."""
    from . import http_load

    try:
        server.wait(timeout=timeout)
        started_at = time.monotonic()
        while True:  # under valgrind on a busy machine, a worker may take longer than the client's timeout to boot
            try:
                http_load.client(server.url("/__bench_start"), "", 600, 1)
                break
            except (TimeoutError, ConnectionError):
                if time.monotonic() - started_at > timeout:
                    raise
        labels = []
        for label, workload, path, sent in plan(server):
            http_load.client(server.url(path), sent or "", 600, warmup)
            for repeat in range(REPEATS):
                http_load.client(server.url("/__bench_zero"), "", 600, 1)
                http_load.client(server.url(path), sent or "", 600, requests)
                http_load.client(server.url("/__bench_dump"), "", 600, 1)
                labels.append(
                    {
                        "engine": label,
                        "workload": workload,
                        "repeat": repeat,
                        "requests": requests,
                        "size": None if sent is None else len(sent.split("=", 1)[1]),
                    }
                )
    finally:
        server.stop()
    names: dict[str, dict[str, str]] = {}
    dumps = [cgparse.parse(p, names) for p in dumps_of(out, server.worker)]
    return summarise(dumps, labels)


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        sys.exit("run it through the benchmark: python -m example_project.bench callgrind")
