"""Real servers on 127.0.0.1 and a load generator in another process: what a session costs over HTTP.

Django runs under gunicorn (one sync worker), Starlette under uvicorn (one worker, uvloop and httptools). The load
generator is ``wrk`` (Debian's package) when it is on PATH, otherwise a Python client on
``http.client`` with keep-alive, run as its own process. One connection, so the server handles
one request at a time. The server's worker is pinned to one CPU and the load generator to
another; the server's CPU time per request is read from ``/proc/<pid>/task/*/schedstat``
(nanoseconds of CPU the worker's threads ran) around each measurement.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
APPS = "example_project.bench.server_apps"


@dataclass(frozen=True)
class Sample:
    """One measurement: server CPU per request, wall time per request (1/throughput), p99 latency."""

    requests: int
    cpu_per_request: float  # seconds
    rps: float
    p99: float  # seconds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def cpus() -> tuple[int | None, int | None]:
    """(server CPU, load generator CPU): the last two this process may use, or None where there is one."""
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None, None
    return allowed[-1], allowed[-2]


class Server:
    """One server process serving one engine; ``worker`` is the pid that handles requests."""

    def __init__(
        self,
        framework: str,
        engine: str,
        env: dict[str, str],
        cpu: int | None,
        *,
        workers: int = 1,
        prefix: list[str] | None = None,
        timeout: int = 30,
        worker_class: str = "sync",
        wsgi_app: str = f"{APPS}:django_app",
    ) -> None:
        """``workers`` > 1: that many worker processes (CPU is then read off all of them);
        ``prefix``: a command the server runs under (valgrind); ``timeout``: gunicorn's worker timeout;
        ``worker_class``: gunicorn's (``gthread`` runs one thread per worker and keeps connections alive);
        ``wsgi_app``: what gunicorn serves for any framework but Starlette (Flask's apps live in ``flask_cost``)."""
        self.framework, self.engine, self.workers = framework, engine, workers
        self.port = free_port()
        bind = ["127.0.0.1", str(self.port)]
        if framework != "starlette":
            command = [sys.executable, "-m", "gunicorn", "-w", str(workers), "-k", worker_class, "-b", ":".join(bind)]
            command += ["--threads", "1"] if worker_class == "gthread" else []
            command += ["--log-level", "warning", "--timeout", str(timeout), wsgi_app]
        else:
            command = [sys.executable, "-m", "uvicorn", f"{APPS}:starlette_app", "--host", bind[0], "--port", bind[1]]
            command += ["--workers", str(workers), "--no-access-log", "--log-level", "warning"]
            command += ["--loop", "uvloop", "--http", "httptools"]  # uvicorn[standard], as in production
        self.process = subprocess.Popen(
            [*(prefix or []), *command],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "BENCH_ENGINE": engine, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.cpu = cpu
        self.worker = self.process.pid
        self.pids = [self.process.pid]

    def wait(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.stderr else ""
                raise RuntimeError(f"{self.framework} server for {self.engine!r} exited: {error}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{self.framework} server for {self.engine!r} did not listen within {timeout} s")
        if self.framework != "starlette" or self.workers > 1:  # gunicorn's master forks the workers that serve
            import psutil

            children = psutil.Process(self.process.pid).children()
            while len(children) < self.workers and time.monotonic() < deadline:
                time.sleep(0.05)
                children = psutil.Process(self.process.pid).children()
            self.pids = [c.pid for c in children]
            self.worker = self.pids[0]
        if self.cpu is not None:
            for pid in self.pids:
                for task in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(task), {self.cpu})

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def login_cookie(self, timeout: float = 60) -> str:
        """The Cookie header value a logged-in client sends: the pair the login response set."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", self.login_path())
            response = connection.getresponse()
            response.read()
            header = response.getheader("set-cookie")
        finally:
            connection.close()
        if response.status != 200 or not header:
            raise RuntimeError(f"{self.engine}: login gave {response.status}, Set-Cookie {bool(header)}")
        return header.split(";", 1)[0]

    def login_path(self, user: int | None = None) -> str:
        path = "/login/" if self.framework == "django" else "/login"
        return path if user is None else f"{path}?user={user}"

    def cpu_seconds(self) -> float:
        """CPU seconds the serving processes (every worker) have run, all their threads."""
        total = 0
        for pid in self.pids:
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except FileNotFoundError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                        total += int(stat.read().split()[0])
                except FileNotFoundError:  # a thread that ended between listing and reading
                    continue
        return total / 1e9

    def stop(self) -> None:
        stop(self.process)


def stop(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; close its stderr pipe."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stderr is not None:
        process.stderr.close()


def load_generator() -> str:
    return "wrk" if shutil.which("wrk") else "python http.client"


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def _wrk(url: str, cookie: str | None, seconds: float, cpu: int | None) -> tuple[int, float, float]:
    command = ["wrk", "-t1", "-c1", f"-d{max(1, round(seconds))}s", "--latency"]
    if cookie:
        command += ["-H", f"Cookie: {cookie}"]
    if cpu is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(cpu), *command]
    output = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    requests = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", output).groups()  # type: ignore[union-attr]
    if "Non-2xx" in output or "Socket errors" in output:
        raise RuntimeError(f"wrk reported errors against {url}:\n{output}")
    return requests, rps, float(value) * _UNITS[unit]


def _python_client(
    url: str, cookie: str | None, seconds: float, max_requests: int, cpu: int | None
) -> tuple[int, float, float]:
    command = [
        sys.executable,
        "-m",
        "example_project.bench.http_load",
        url,
        cookie or "",
        str(seconds),
        str(max_requests),
    ]
    if cpu is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(cpu), *command]
    result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    return result["requests"], result["rps"], result["p99"]


def measure(
    server: Server, path: str, cookie: str | None, seconds: float, max_requests: int, cpu: int | None
) -> Sample:
    before = server.cpu_seconds()
    if load_generator() == "wrk":
        requests, rps, p99 = _wrk(server.url(path), cookie, seconds, cpu)
    else:
        requests, rps, p99 = _python_client(server.url(path), cookie, seconds, max_requests, cpu)
    spent = server.cpu_seconds() - before
    return Sample(requests, spent / max(requests, 1), rps, p99)


def client(url: str, cookie: str, seconds: float, max_requests: int) -> dict[str, float]:
    """Requests over one keep-alive connection (reopened when the server closes it) until either bound."""
    parsed = urlsplit(url)
    headers = {"Cookie": cookie} if cookie else {}
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    latencies = []
    started = time.perf_counter()
    deadline = started + seconds
    while len(latencies) < max_requests and time.perf_counter() < deadline:
        begin = time.perf_counter()
        connection.request("GET", parsed.path, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: status {response.status}")
        if response.will_close:
            connection.close()
        latencies.append(time.perf_counter() - begin)
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }


if __name__ == "__main__":
    print(json.dumps(client(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))
