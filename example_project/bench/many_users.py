"""A workload like a real site: 10,000 logged-in users, keep-alive, one and four workers, three kinds of request.

Each session engine's server mints one cookie per user first (``/login?user=N``: a login-sized
session with that user's id), then ``wrk`` loads it with a Lua script that gives every request the
next user's cookie (``rotate.lua``), over several keep-alive connections, so the server sees
10,000 distinct cookies in turn as a site does, not one cookie it could keep hot. Three kinds of
request: an API route behind the middleware that never touches the session, a read of the session,
a read and a write (a counter: the cookie is re-signed and sent back).

Django runs under gunicorn's ``gthread`` worker with one thread per worker (it keeps connections
alive; the ``sync`` worker closes each after one request), Starlette under uvicorn; with one and
with four worker processes. Configurations are interleaved across rounds. For each: requests/s at
saturation, latency p50 and p99 (wrk's), and the server's CPU time per request (all workers, from
``/proc/<pid>/task/*/schedstat``); *added* is that CPU over the session-less baseline's in the same
round, for the same kind of request and number of workers.
"""

from __future__ import annotations

import http.client
import re
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import http_load, request_cost

ENGINES = request_cost.SERVER_ENGINES

USERS = 10_000
KINDS = request_cost.SERVER_KINDS
WORKERS = (1, 4)
BASELINES = {"django": request_cost.DJANGO_BASELINE, "starlette": request_cost.STARLETTE_BASELINE}

LUA = """-- Every request carries the next user's cookie; the cookies file has one Cookie header value a line.
local cookies = {}
local index = 0
function init(args)
  if args[1] ~= nil and args[1] ~= "" then
    for line in io.lines(args[1]) do cookies[#cookies + 1] = line end
  end
  -- each wrk thread starts at another user
  index = math.random(0, math.max(#cookies - 1, 0))
end
function request()
  if #cookies == 0 then return wrk.format(nil, nil, nil, nil) end
  index = (index % #cookies) + 1
  return wrk.format(nil, nil, {["Cookie"] = cookies[index]}, nil)
end
"""

_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def mint(server: http_load.Server, users: int) -> list[str]:
    """One login per user over one connection (reopened when the server closes it): their Cookie values."""
    cookies = []
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        for user in range(1, users + 1):
            connection.request("GET", server.login_path(user))
            response = connection.getresponse()
            response.read()
            header = response.getheader("set-cookie")
            if response.status != 200 or not header:
                raise RuntimeError(f"{server.engine}: login of user {user} gave {response.status}")
            cookies.append(header.split(";", 1)[0])
            if response.will_close:
                connection.close()
    finally:
        connection.close()
    return cookies


def wrk(url: str, script: Path, cookies: Path | None, seconds: float, connections: int) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "-s", str(script), url]
    command += ["--", str(cookies) if cookies else ""]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in output or "Socket errors" in output:
        raise RuntimeError(f"wrk reported errors against {url}:\n{output}")

    def latency(percent: str) -> float:
        value, unit = re.search(rf"{percent}%\s+([\d.]+)(us|ms|s)", output).groups()  # type: ignore[union-attr]
        return float(value) * _UNITS[unit]

    return {
        "requests": int(re.search(r"(\d+) requests in", output).group(1)),  # type: ignore[union-attr]
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        "p50": latency("50"),
        "p99": latency("99"),
    }


def run(
    frameworks: list[str],
    database: Path,
    services: set[str],
    *,
    users: int,
    rounds: int,
    seconds: float,
    connections: int,
    workers: tuple[int, ...],
    kinds: tuple[str, ...] = KINDS,
    tick: Callable[[], object],
    describe: Callable[[str], object],
) -> dict[str, Any]:
    """{framework: {workers: {kind: {engine: {samples: [...], summary...}}}}} and the settings used."""
    if shutil.which("wrk") is None:
        return {"error": "wrk is not installed (Debian: apt-get install wrk)"}
    env = {"BENCH_DB": str(database), "BENCH_SERVICES": ",".join(sorted(services))}
    samples: dict[tuple[str, int, str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        script = directory / "rotate.lua"
        script.write_text(LUA)
        servers: dict[tuple[str, str, int], http_load.Server] = {}
        cookie_files: dict[tuple[str, str], Path | None] = {}
        try:
            for framework in frameworks:
                for engine in ENGINES[framework]:
                    for count in workers:
                        servers[framework, engine, count] = http_load.Server(
                            framework, engine, env, None, workers=count, worker_class="gthread"
                        )
            for server in servers.values():
                server.wait()
            for framework in frameworks:
                for engine in ENGINES[framework]:
                    describe(f"many users: minting {users} cookies, {framework}: {engine}")
                    if engine == BASELINES[framework]:
                        cookie_files[framework, engine] = None
                        continue
                    cookies = mint(servers[framework, engine, workers[0]], users)
                    path = directory / f"{framework}-{len(cookie_files)}.txt"
                    path.write_text("\n".join(cookies) + "\n")
                    cookie_files[framework, engine] = path
            plan = [(f, e, w, k) for (f, e, w) in servers for k in kinds]
            for round_index in range(rounds):
                shift = round_index % len(plan)
                for framework, engine, count, kind in plan[shift:] + plan[:shift]:
                    describe(f"many users: round {round_index + 1}/{rounds}")
                    server = servers[framework, engine, count]
                    before = server.cpu_seconds()
                    url = server.url(request_cost.server_path(framework, engine, kind))
                    result = wrk(url, script, cookie_files[framework, engine], seconds, connections)
                    result["cpu_per_request"] = (server.cpu_seconds() - before) / max(result["requests"], 1)
                    samples.setdefault((framework, count, kind, engine), []).append(result)
                    tick()
        finally:
            for server in servers.values():
                server.stop()
    return summarise(samples)


def summarise(samples: dict[tuple[str, int, str, str], list[dict[str, float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (framework, count, kind, engine), runs in samples.items():
        base = samples[framework, count, kind, BASELINES[framework]]
        added = [r["cpu_per_request"] - b["cpu_per_request"] for r, b in zip(runs, base, strict=True)]
        out.setdefault(framework, {}).setdefault(str(count), {}).setdefault(kind, {})[engine] = {
            "cpu_us_median": statistics.median(r["cpu_per_request"] for r in runs) * 1e6,
            "added_cpu_us": [a * 1e6 for a in added],
            "added_cpu_us_median": statistics.median(added) * 1e6,
            "rps_median": statistics.median(r["rps"] for r in runs),
            "p50_us_median": statistics.median(r["p50"] for r in runs) * 1e6,
            "p99_us_median": statistics.median(r["p99"] for r in runs) * 1e6,
            "baseline": BASELINES[framework],
            "rounds": runs,
        }
    return out
