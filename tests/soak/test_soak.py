"""Soak: a logged-in shopper under sustained load on real gunicorn (Django) and uvicorn (FastAPI).

The load comes from another process: wrk with shopper.lua (required under CI), else the Python client in
load_client.py. One request in five adds to the cart (a new cookie, which the load generator sends from
then on), two read the cart (403 if the session lost the user), two download through a signed link, one
of them a Range. Asserted: no socket error, no non-2xx, no session lost, no worker replaced, each worker's
resident memory flat (end within RSS_BOUND of its start, after a warm-up), no traceback in the log.
Measured and reported (terminal summary and load-figures.json): requests per second and latency.

About 30 s per server here; minutes each with ``.venv/bin/python -m pytest tests/soak --long -s``
(``-s`` shows a progress line every few seconds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.longrun import seconds

from ..servers import ROOT
from . import servers
from .report import Record
from .servers import MIB, Shop

pytestmark = pytest.mark.server

SOAK_SECONDS = max(1, round(seconds(16, 300)))
#: Load before the first memory sample: imports, caches and allocator pools fill up here, not in the run.
WARM_UP_SECONDS = 2
CONNECTIONS = 8
#: How much each worker's resident memory may grow during the run.
RSS_BOUND = 10 * MIB
PROGRESS_EVERY = 5
LUA_SCRIPT = Path(__file__).with_name("shopper.lua")
WRK_HINT = "wrk not found: install it (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk)"

STARTERS: dict[str, Callable[[Path], AbstractContextManager[Shop]]] = {
    "gunicorn": lambda tmp_path: servers.gunicorn(tmp_path, workers=2),
    "uvicorn": lambda tmp_path: servers.uvicorn(tmp_path, log_level="warning"),  # no access log line per request
}


def find_wrk() -> str | None:
    """wrk's path; None (the Python client then) outside CI, a failure under CI."""
    found = shutil.which("wrk") or ("/usr/bin/wrk" if os.path.exists("/usr/bin/wrk") else None)
    if found is None and os.environ.get("CI"):
        pytest.fail(f"{WRK_HINT} (CI must run the soak with wrk)", pytrace=False)
    return found


def load_command(wrk: str | None, shop: Shop, duration: int, cookie: str, link: str) -> list[str]:
    if wrk is not None:
        options = ["-t2", f"-c{CONNECTIONS}", f"-d{duration}s", "--timeout", "10s", "--latency", "-s", str(LUA_SCRIPT)]
        return [wrk, *options, shop.url, "--", shop.cookie_name, cookie, link]
    client = [sys.executable, "-m", "tests.soak.load_client", shop.url, str(duration), str(CONNECTIONS)]
    return [*client, shop.cookie_name, cookie, link]


def run_load(command: list[str], shop: Shop, duration: int) -> dict[str, Any]:
    """Run the load generator; print a progress line every PROGRESS_EVERY seconds; return its SOAK-RESULT."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    while True:
        try:
            output, errors = process.communicate(timeout=PROGRESS_EVERY)
            break
        except subprocess.TimeoutExpired:
            elapsed = time.monotonic() - started
            if elapsed > duration + 60:
                process.kill()
                raise
            rss = ", ".join(f"{worker.memory_info().rss / MIB:.1f}" for worker in shop.workers())
            print(f"soak {shop.name}: {elapsed:.0f}/{duration} s, worker RSS {rss} MiB", flush=True)
    assert process.returncode == 0, f"{command[0]} exited with {process.returncode}: {errors[-2000:]}"
    lines = [line for line in output.splitlines() if line.startswith("SOAK-RESULT ")]
    assert lines, f"no SOAK-RESULT line from {command[0]}: {output[-2000:]} {errors[-2000:]}"
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("SOAK-RESULT "))
    return result


def worker_rss(shop: Shop) -> dict[int, int]:
    return {worker.pid: worker.memory_info().rss for worker in shop.workers()}


@pytest.fixture(params=sorted(STARTERS))
def shop(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shop]:
    with STARTERS[request.param](tmp_path) as running:
        yield running


def test_soak_loses_no_request_no_session_and_no_memory(shop: Shop, figures: Record) -> None:
    wrk = find_wrk()
    cookie = shop.login()
    link = shop.signer.sign("/files/report.bin", expires_in=SOAK_SECONDS + 3600)
    run_load(load_command(wrk, shop, WARM_UP_SECONDS, cookie, link), shop, WARM_UP_SECONDS)
    rss_start = worker_rss(shop)
    result = run_load(load_command(wrk, shop, SOAK_SECONDS, cookie, link), shop, SOAK_SECONDS)
    rss_end = worker_rss(shop)
    figures(
        f"soak {shop.name}",
        {
            "generator": "wrk" if wrk else "python",
            "seconds": round(result["duration_s"], 1),
            "connections": CONNECTIONS,
            "workers": len(rss_start),
            "requests": result["requests"],
            "requests_per_s": round(result["requests"] / result["duration_s"], 1),
            "p50_ms": round(result["latency_ms"]["p50"], 2),
            "p99_ms": round(result["latency_ms"]["p99"], 2),
            "max_ms": round(result["latency_ms"]["max"], 2),
            "non_2xx": result["non_2xx"],
            "socket_errors": sum(result["socket_errors"].values()),
            "cookies_set": result["cookies_set"],
            "sessions_lost": result["sessions_lost"],
            "rss_start_mib": [round(rss / MIB, 1) for rss in rss_start.values()],
            "rss_end_mib": [round(rss_end.get(pid, 0) / MIB, 1) for pid in rss_start],
            "rss_bound_mib": RSS_BOUND // MIB,
        },
    )
    assert result["socket_errors"] == {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    assert (result["non_2xx"], result["status_errors"], result["sessions_lost"]) == (0, 0, 0)
    assert result["succeeded"] == result["requests"] > 0
    assert result["cookies_set"] > 0  # the writes re-issued the cookie, and the load carried it on
    assert rss_end.keys() == rss_start.keys(), "a worker was replaced during the run"
    for pid, start in rss_start.items():
        assert rss_end[pid] <= start + RSS_BOUND, f"worker {pid}: {start / MIB:.1f} -> {rss_end[pid] / MIB:.1f} MiB"
    cart = httpx.get(shop.url + "/cart", cookies={shop.cookie_name: cookie}, timeout=10)
    assert cart.status_code == 200  # the session from before the run still holds the user
    log = shop.log_text().decode(errors="replace")
    assert "Traceback" not in log
    assert [line for line in log.splitlines() if "ERROR" in line or "CRITICAL" in line] == []


def test_the_load_generators_count_a_lost_session(tmp_path: Path) -> None:
    """A session that does not verify: the cart's 403s and Django's deleting Set-Cookie are both counted."""
    wrk = find_wrk()
    with servers.gunicorn(tmp_path) as shop:
        forged = shop.login()[:-4] + "AAAA"
        link = shop.signer.sign("/files/report.bin", expires_in=60)
        generators = [wrk, None] if wrk else [None]  # wrk when there is one, and the Python client
        results = [run_load(load_command(generator, shop, 1, forged, link), shop, 1) for generator in generators]
    for result in results:
        assert result["requests"] > 0
        assert result["non_2xx"] > 0  # every cart read and write
        assert result["sessions_lost"] > 0  # Django deletes a cookie that does not verify
        assert result["succeeded"] > 0  # the downloads need no session
