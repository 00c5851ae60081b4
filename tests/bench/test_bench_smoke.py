"""The benchmark keeps working: its instruments run on a few requests, and its reports read what they wrote.

No timing is asserted: a unit test on a shared machine cannot judge speed. The smoke runs are tiny
(a couple of requests under valgrind, one second of load) so the suite stays fast; the figures
are made by ``python -m example_project.bench`` and published in docs/performance.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
STARLETTE_OURS, STARLETTE_THEIRS = "blake2sign_web SessionMiddleware", "Starlette SessionMiddleware"
STARLETTE_BASE = "no session middleware"


def required(what: str, hint: str) -> None:
    """Fail under CI (it must run these tests), skip elsewhere, naming what is missing."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test, which needs {what}: {hint}", pytrace=False)
    pytest.skip(f"needs {what}, not installed: {hint}")


# --- callgrind: the deterministic instrument ----------------------------------------------------------------


CALLGRIND_FILE = """# callgrind format
version: 1
positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1000 10 5 1 2 0 0 1 0

ob=(1) /usr/lib/libpython3.11.so
fl=(1) ceval.c
fn=(1) _PyEval_EvalFrameDefault
12 600 5 2 1 1
cob=(2) /site-packages/_blake2.cpython-311.so
cfi=(2) blake2b.c
cfn=(2) PyBlake2_blake2b_update
calls=3 40
12 300 5 3 0 1 0 1
ob=(2)
fl=(2)
fn=(2)
40 300 5 3 0 1 0 1
ob=(3) /site-packages/zstandard/backend_c.so
fn=(3) ZSTD_decompressStream
1 100
"""


def test_cgparse_reads_totals_own_costs_calls_and_kinds_of_work(tmp_path: Path) -> None:
    from example_project.bench import cgparse

    path = tmp_path / "callgrind.out.1.1"
    path.write_text(CALLGRIND_FILE)
    dump = cgparse.parse(path)
    assert dump.total("Ir") == 1000
    assert dump.total("D1mr") == 2
    # the 300 after calls= is the call's inclusive cost: not the caller's own
    assert dump.own["/usr/lib/libpython3.11.so", "_PyEval_EvalFrameDefault"][0] == 600
    assert dump.own["/site-packages/_blake2.cpython-311.so", "PyBlake2_blake2b_update"][0] == 300
    assert dump.calls == {"PyBlake2_blake2b_update": 3}
    groups = cgparse.grouped(dump)
    assert groups["interpreter (Python code)"] == 600
    assert groups["hashing (BLAKE2, HMAC, SHA)"] == 300
    assert groups["compression (zstd)"] == 100
    assert cgparse.decoding_calls(dump) == {"PyBlake2_blake2b_update": 3}


def test_the_client_requests_do_nothing_outside_valgrind() -> None:
    from example_project.bench import callgrind

    if sys.platform != "linux" or os.uname().machine != "x86_64":
        pytest.skip("the client requests are x86_64 machine code")
    assert callgrind.client_request(callgrind.RUNNING_ON_VALGRIND) == 0
    callgrind.zero()
    callgrind.dump()


def test_callgrind_counts_instructions_per_request_and_sees_decoding() -> None:
    """Two requests per block under valgrind, Starlette only: bounded in time, no timing asserted."""
    from example_project.bench import callgrind

    why = callgrind.supported()
    if why is not None:
        required("valgrind on x86_64", why)
    ticks: list[int] = []
    result = callgrind.in_process(
        ["starlette"],
        ROOT / "unused.sqlite3",
        2,
        1,
        120,
        lambda: ticks.append(1),
        engines=[STARLETTE_OURS],
        workloads=["api", "read"],
    )
    rows = result["starlette"]
    assert "error" not in rows, rows
    assert set(rows) == {"api", "read", "cold read"}
    for workload in ("api", "read", "cold read"):
        assert set(rows[workload]) == {STARLETTE_BASE, STARLETTE_OURS}
        for row in rows[workload].values():
            assert len(row["Ir"]) == callgrind.REPEATS
            assert all(value > 10_000 for value in row["Ir"])
            assert row["groups"]["interpreter (Python code)"] > 0
    # the session costs instructions on a read; the baseline verifies nothing
    base, ours = rows["read"][STARLETTE_BASE]["Ir"], rows["read"][STARLETTE_OURS]["Ir"]
    assert min(ours) > max(base)
    assert rows["api"][STARLETTE_BASE]["decoding_calls"] == {}
    # cold caches: the copy before each request evicts the simulated last level
    assert min(rows["cold read"][STARLETTE_BASE]["DLmr"]) > 100 * max(rows["read"][STARLETTE_BASE]["DLmr"] + [1.0])
    assert ticks == [1]


# --- the profile's sorting of samples -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "kind"),
    [
        (
            [
                "run (uvicorn/server.py:1)",
                "SessionMiddleware.__call__ (blake2sign_web/starlette/sessions.py:290)",
                "SessionMiddleware._load (blake2sign_web/starlette/sessions.py:360)",
                "SerializerSigner.loads (blake2sign_web/signing/serializer.py:400)",
                "digest (hmac.py:10)",
            ],
            "verifying and decoding the cookie",
        ),
        (
            [
                "send_wrapper (starlette/middleware/sessions.py:60)",
                "URLSafeTimedSerializer.dumps (itsdangerous/serializer.py:1)",
                "get_signature (itsdangerous/signer.py:1)",
            ],
            "encoding and signing the cookie",
        ),
        (
            [
                "SessionMiddleware.__call__ (blake2sign_web/starlette/sessions.py:290)",
                "Router.__call__ (starlette/routing.py:700)",
                "Route.matches (starlette/routing.py:200)",
            ],
            "server, framework and view",
        ),
        (
            [
                "Router.__call__ (starlette/routing.py:700)",
                "SessionMiddleware.__call__ (blake2sign_web/starlette/sessions.py:290)",
            ],
            "the session middleware's own code",
        ),
        (
            [
                "RequestResponseCycle.send (uvicorn/protocols/http/h11_impl.py:1)",
                "_SelectorSocketTransport.write (asyncio/selector_events.py:1)",
            ],
            "socket write (send syscall)",
        ),
        (
            [
                "SessionMiddleware.__call__ (blake2sign_web/starlette/sessions.py:290)",
                "SessionWriter.usual_headers (blake2sign_web/session_request.py:1)",
            ],
            "response headers (Set-Cookie, Vary)",
        ),
        (
            ["WSGIRequest.COOKIES (django/core/handlers/wsgi.py:1)", "parse_cookie (django/http/cookie.py:1)"],
            "finding the cookie",
        ),
        (
            ["normalize_and_validate (h11/_headers.py:1)", "match (re/__init__.py:1)"],
            "the server parsing and validating headers",
        ),
    ],
)
def test_profile_sorts_a_sample_by_its_stack(stack: list[str], kind: str) -> None:
    import re

    from example_project.bench import profile

    assert profile.category([re.sub(r":\d+\)$", ")", f) for f in stack]) == kind


# --- the report: targets, verdicts, the page --------------------------------------------------------------------


def callgrind_rows(base: float, ours: list[float], theirs: list[float]) -> dict[str, object]:
    def row(values: list[float]) -> dict[str, object]:
        return {
            "Ir": values,
            "D1mr": [1.0] * 3,
            "DLmr": [0.0] * 3,
            "DLmw": [0.0] * 3,
            "groups": {},
            "decoding_calls": {},
        }

    return {STARLETTE_BASE: row([base] * 3), STARLETTE_OURS: row(ours), STARLETTE_THEIRS: row(theirs)}


def test_deterministic_targets_are_judged_on_every_repeat() -> None:
    from example_project.bench import report

    parts = {
        "callgrind": {
            "settings": {"quick": False},
            "in_process": {
                "starlette": {
                    # ratios 0.30, 0.31, 0.32: all within 0.35
                    "read": callgrind_rows(100.0, [130.0, 131.0, 132.0], [200.0, 200.0, 200.0]),
                    # ratios 0.30, 0.40, 0.50: straddle it
                    "write": callgrind_rows(100.0, [130.0, 140.0, 150.0], [200.0, 200.0, 200.0]),
                }
            },
        }
    }
    targets = {t["workload"]: t for t in report.all_targets(parts)}
    assert targets["read"]["verdict"] == "met"
    assert targets["read"]["spread"] == "min-max"
    assert targets["read"]["median"] == pytest.approx(0.31)
    assert targets["write"]["verdict"].startswith("not met")
    parts["callgrind"]["in_process"]["starlette"]["read"] = callgrind_rows(100.0, [150.0] * 3, [200.0] * 3)
    assert {t["workload"]: t for t in report.all_targets(parts)}["read"]["verdict"] == "MISSED"
    parts["callgrind"]["settings"]["quick"] = True
    assert {t["verdict"] for t in report.all_targets(parts)} == {"quick run: no verdict"}


def test_a_session_free_request_that_decodes_is_caught() -> None:
    from example_project.bench import report

    rows = callgrind_rows(100.0, [110.0] * 3, [120.0] * 3)
    rows[STARLETTE_OURS]["decoding_calls"] = {"PyBlake2_blake2b_update": 1.0}  # type: ignore[index]
    parts = {"callgrind": {"settings": {}, "in_process": {"starlette": {"api": rows}}}}
    (entry,) = report.api_targets(parts)
    assert entry["verdict"] == "MISSED: PyBlake2_blake2b_update"
    rows[STARLETTE_OURS]["decoding_calls"] = {}  # type: ignore[index]
    (entry,) = report.api_targets(parts)
    assert entry["verdict"] == "met"


def test_a_clock_target_whose_incumbent_cost_is_lost_in_noise_is_kept_without_a_verdict() -> None:
    from example_project.bench import report

    rows = {
        "baseline": {"baseline": "baseline", "rounds_us": [10.0, 10.0, 10.0]},
        STARLETTE_OURS: {"baseline": "baseline", "rounds_us": [12.0, 11.0, 12.0]},
        STARLETTE_THEIRS: {"baseline": "baseline", "rounds_us": [9.5, 10.0, 8.0]},  # never above the baseline
    }
    parts = {"requests": {"settings": {"quick": False}, "results": {"starlette": {"read": rows}}, "http": {}}}
    found = [t for t in report.all_targets(parts) if t["theirs"] == STARLETTE_THEIRS]
    assert [(t["median"], t["rounds"]) for t in found] == [(None, 0)]
    assert found[0]["verdict"].startswith("no verdict")
    json.dumps(found, allow_nan=False)  # standard JSON: no NaN


# --- the command, end to end --------------------------------------------------------------------------------------


def test_the_command_writes_one_json_one_page_and_the_charts(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the charts need matplotlib (the bench extra)")
    command = [sys.executable, "-m", "example_project.bench", "requests", "--quick", "--framework", "starlette"]
    command += ["--out", str(tmp_path)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((tmp_path / "benchmarks" / "results.json").read_text())
    assert data["schema"] == 2
    assert data["run"]["parts_run"] == ["requests"]
    rows = data["parts"]["requests"]["results"]["starlette"]
    assert set(rows) == {"api", "read", "write"}
    assert STARLETTE_OURS in rows["read"]
    assert STARLETTE_THEIRS in rows["read"]
    assert rows["read"][STARLETTE_OURS]["cookie_bytes"] > 0
    assert {t["verdict"] for t in data["targets"]} == {"quick run: no verdict"}
    page = (tmp_path / "performance.md").read_text()
    assert page.startswith("# Performance")
    assert "quick smoke run" in page
    assert f"| {STARLETTE_OURS} |" in page
    png = (tmp_path / "img" / "request-cost.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    # the example sites read the same file
    from example_project import costs

    original = costs.RESULTS
    costs.RESULTS = tmp_path / "benchmarks" / "results.json"
    try:
        assert costs.measured("starlette")["read"][STARLETTE_OURS] == rows["read"][STARLETTE_OURS]["added_us_median"]
    finally:
        costs.RESULTS = original


def test_many_users_rotates_minted_cookies_over_keep_alive(tmp_path: Path) -> None:
    """Twenty users, one second, Starlette only: the workload runs and reports what it measured."""
    if shutil.which("wrk") is None:
        required("wrk", "apt-get install wrk")
    pytest.importorskip("psutil", reason="the servers' workers are found with psutil (the bench extra)")
    from example_project.bench import many_users

    result = many_users.run(
        ["starlette"],
        tmp_path / "unused.sqlite3",
        set(),
        users=20,
        rounds=1,
        seconds=1,
        connections=2,
        workers=(1,),
        kinds=("read",),
        tick=lambda: None,
        describe=lambda _: None,
    )
    rows = result["starlette"]["1"]["read"]
    assert set(rows) == set(many_users.ENGINES["starlette"])
    for row in rows.values():
        assert row["rps_median"] > 0
        assert 0 < row["p50_us_median"] <= row["p99_us_median"]
        assert row["cpu_us_median"] > 0


@pytest.mark.parametrize("workload", ["api", "read", "write"])
def test_every_in_process_starlette_configuration_serves_every_workload(workload: str) -> None:
    """The `requests` part's engines, probes included, each serve a request (the per-request signer probe once
    broke when the middleware built a third signer, and only a full run showed it)."""
    from example_project.bench import request_cost

    for name, middleware in request_cost.starlette_middlewares().items():
        run, size = request_cost.starlette_request(name, middleware, workload)
        run()
        if name in (STARLETTE_OURS, "blake2sign_web, signer built per request"):
            assert size, name  # a cookie was issued at login


# --- revocation: what one request adds ---------------------------------------------------------------------------


def run_quick_part(part: str, out: Path, timeout: float) -> dict[str, Any]:
    """``python -m example_project.bench PART --quick --out OUT`` beside an earlier part's results: the new JSON.

    Asserts what every part owes the harness: a clean exit, no error recorded, and the other part's results kept.
    """
    earlier = {
        "machine": "elsewhere",
        "date": "2000-01-01",
        "settings": {"max_size": 1, "repeat": 5, "quick": False, "elapsed_s": 1.0},
        "sizes": [1],
        "results": {"Django": {"1": {"ttfb": 0.001, "total": 0.002, "growth": 0}}},
    }
    (out / "benchmarks").mkdir()
    (out / "benchmarks" / "results.json").write_text(
        json.dumps({"schema": 2, "parts": {"downloads": earlier}, "targets": []})
    )
    command = [sys.executable, "-m", "example_project.bench", part, "--quick", "--out", str(out)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    data: dict[str, Any] = json.loads((out / "benchmarks" / "results.json").read_text())
    assert data["run"]["parts_run"] == [part]
    assert "errors" not in data["run"], data["run"]
    assert data["parts"]["downloads"] == earlier  # a part not run keeps its results
    return data


def test_the_revocation_cost_part_measures_what_redis_adds_to_a_request(tmp_path: Path) -> None:
    """``revocation-cost --quick``: a redis-server started and stopped, every row present, other parts kept."""
    pytest.importorskip("matplotlib", reason="the charts need matplotlib (the bench extra)")
    from example_project.bench import revocation_cost

    why = revocation_cost.supported()
    if why is not None:
        required("redis-server", why)
    data = run_quick_part("revocation-cost", tmp_path, timeout=120)
    part = data["parts"]["revocation_cost"]
    settings = part["settings"]
    assert settings["quick"] is True
    assert (settings["rounds"], settings["block_s"]) == (revocation_cost.QUICK_ROUNDS, revocation_cost.QUICK_BLOCK)
    assert set(settings["versions"]) >= {"python", "Django", "starlette", "redis-py", "redis-server"}
    assert settings["versions"]["redis-server"] != "?"
    assert set(part["results"]) == set(revocation_cost.FRAMEWORKS)
    for by_pair in part["results"].values():
        assert set(by_pair) == {pair.key for pair in revocation_cost.PAIRS}
        for row in by_pair.values():
            assert row["stateless_us_median"] > 0
            assert row["with_redis_us_median"] > 0
            assert row["added_us_q1"] <= row["added_us_median"] <= row["added_us_q3"]
            assert len(row["rounds_us"]["stateless"]) == len(row["rounds_us"]["with_redis"]) == settings["rounds"]
    assert set(part["reference"]) == set(revocation_cost.REFERENCE)
    for row in part["reference"].values():
        assert 0 < row["q1_us"] <= row["median_us"] <= row["q3_us"]
    page = (tmp_path / "performance.md").read_text()
    section = page[page.index("## Revocation: what one request adds") : page.index("## Revocation at scale")]
    assert "quick smoke run" in section
    assert "client and the redis-server share the cores" in section
    assert "| request | stateless | with Redis | added (median) | added (q1-q3) |" in section
    for title in ("Django", "Starlette"):
        assert f"| {title}, read a logged-in session; revocation on |" in section
        assert f"| {title}, a fresh signed link; single-use |" in section
    assert "One raw round trip in the same run" in section


def test_the_revocation_cost_section_says_when_it_was_not_run_and_when_it_is_noisy() -> None:
    from example_project.bench import report

    assert "Not run yet: `python -m example_project.bench revocation-cost`." in report.revocation_cost_section({})
    assert "Not run: no redis-server found" in report.revocation_cost_section({"error": "no redis-server found"})
    row = {
        "request": "read a logged-in session",
        "setting": "revocation on",
        "stateless_us_median": 50.0,
        "with_redis_us_median": 300.0,
        "added_us_median": 250.0,
        "added_us_q1": 240.0,
        "added_us_q3": 260.0,
    }
    overlapping = {**row, "request": "a fresh signed link", "setting": "single-use", "added_us_q1": -10.0}
    part = {"settings": {"rounds": 5, "block_s": 0.01, "cores": 2}, "results": {"django": {"a": row, "b": overlapping}}}
    lines = report.revocation_cost_section(part)
    assert (
        "| Django, read a logged-in session; revocation on | 50.0 us | 300.0 us | 250.0 us | 240.0 us - 260.0 us |"
        in lines
    )
    assert (
        "| Django, a fresh signed link; single-use | 50.0 us | 300.0 us | 250.0 us | -10.0 us - 260.0 us (noisy) |"
        in lines
    )
    assert any(line.startswith("*Noisy*") for line in lines)
    assert not any(line.startswith("One raw round trip") for line in lines)  # not measured: not said


# --- revocation at scale: one Redis and a cluster -----------------------------------------------------------------


def test_the_revocation_scale_part_measures_one_redis_and_a_cluster(tmp_path: Path) -> None:
    """``revocation-scale --quick``: servers started and stopped, every figure present, other parts kept."""
    pytest.importorskip("matplotlib", reason="the charts need matplotlib (the bench extra)")
    from example_project.bench import cluster_scale

    why = cluster_scale.supported()
    if why is not None:
        required("redis-server and redis-cli", why)
    data = run_quick_part("revocation-scale", tmp_path, timeout=300)
    part = data["parts"]["revocation_scale"]
    assert part["settings"]["quick"] is True
    assert part["settings"]["processes"] == list(cluster_scale.QUICK_PROCESSES)
    stores = set(cluster_scale.STORES)
    assert set(part["latency"]) == stores
    for row in part["latency"].values():
        assert 0 < row["median_us"] <= row["p99_us"]
    assert set(part["throughput"]) == stores
    for by_count in part["throughput"].values():
        assert set(by_count) == {str(n) for n in cluster_scale.QUICK_PROCESSES}
        for row in by_count.values():
            assert row["checks_per_s"] > 0
            assert 0 < row["median_us"] <= row["p99_us"]
    assert set(part["writes"]) == stores
    for by_write in part["writes"].values():
        assert set(by_write) == set(cluster_scale.WRITES)
        for by_wait in by_write.values():
            assert set(by_wait) == {"0", "1"}
    if shutil.which("redis-benchmark"):
        assert part["ceiling"]["one_at_a_time_rps"] > 0
    page = (tmp_path / "performance.md").read_text()
    section = page[page.index("## Revocation at scale") :]
    assert "quick smoke run" in section
    assert f"On this {os.cpu_count()}-core machine" in section
    assert "| one Redis | 2 |" in section
    assert "| cluster | 2 |" in section
    assert "| cluster | `consume_link` |" in section
    png = (tmp_path / "img" / "revocation-scale.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_the_revocation_scale_section_says_when_it_was_not_run() -> None:
    from example_project.bench import report

    assert "Not run yet: `python -m example_project.bench revocation-scale`." in report.revocation_scale_section({})
    lines = report.revocation_scale_section({"error": "no redis-server found"})
    assert "Not run: no redis-server found" in lines


def test_the_starlette_breakdown_parts_add_up_to_the_read() -> None:
    from example_project.bench import report, request_cost

    def counts(value: float) -> dict[str, list[float]]:
        return {"Ir": [value, value + 10, value - 10]}

    base, ours = request_cost.STARLETTE_BASELINE, STARLETTE_OURS
    rows = {
        "api": {base: counts(100_000), request_cost.STARLETTE_PASS_THROUGH: counts(106_000), ours: counts(111_000)},
        "read": {
            base: counts(90_000),
            ours: counts(155_000),
            request_cost.STARLETTE_READY_VALUE: counts(121_000),
            STARLETTE_THEIRS: counts(250_000),
        },
        "write": {base: counts(97_000), ours: counts(218_000)},
    }
    table = report.starlette_ablation_table({"in_process": {"starlette": rows}})
    parts = [line for line in table if line.startswith("| ") and "|---" not in line][1:6]
    values = [float(line.rsplit("|", 2)[1].strip().removesuffix(" k")) for line in parts]
    assert values == [6.0, 5.0, 20.0, 34.0, 56.0]
    assert sum(values[:4]) == 65.0  # the read: 155 k - 90 k
    assert any("**65.0 k**" in line for line in table)
    assert report.starlette_ablation_table({"in_process": {"starlette": {"api": rows["api"]}}}) == []


# --- the drivers: as the servers drive the frameworks ------------------------------------------------------------


def test_the_wsgi_driver_iterates_and_closes_every_response_as_a_server_does() -> None:
    from example_project.bench.wsgi_driver import WSGIDriver

    events: list[str] = []

    class Response:
        def __iter__(self) -> Any:
            events.append("iterated")
            return iter([b"ok"])

        def close(self) -> None:
            events.append("closed")

    def application(environ: dict[str, Any], start_response: Any) -> Response:
        assert environ["wsgi.input"].read() == b""
        events.append(environ["PATH_INFO"])
        start_response("200 OK", [("Set-Cookie", "a=b")])
        return Response()

    driver = WSGIDriver(application)
    environ = driver.environ("/read/", headers={"HTTP_COOKIE": "sessionid=x"})
    driver.request(environ)
    driver.request(environ)
    assert events == ["/read/", "iterated", "closed"] * 2
    assert driver.status == "200 OK"
    assert driver.set_cookies() == ["a=b"]


DJANGO_DRIVEN = """
import sys, tempfile, weakref
from pathlib import Path
from example_project.bench import request_cost

request_cost.configure_django(Path(tempfile.mkdtemp()) / "s.sqlite3", set(), migrate=False)
from django.core.signals import request_finished

finished = []
request_finished.connect(lambda **kw: finished.append(1), weak=False)
engines = {"Django signed_cookies", "ours + our middleware"}
configs, _ = request_cost.django_configs("read", set(), engines)


def of_ours(receivers):
    functions = [r[1]() if isinstance(r[1], weakref.ReferenceType) else r[1] for r in receivers]
    return [f for f in functions if getattr(f, "__module__", "").startswith("blake2sign_web")]


by_engine = {spec.engine: receivers for spec, receivers in request_cost._finished_receivers.items()}
ours = of_ours(by_engine["blake2sign_web.django.sessions"])
theirs = of_ours(by_engine["django.contrib.sessions.backends.signed_cookies"])
before = len(finished)
for run in configs.values():
    run()
print(len(finished) - before, len(configs), len(ours), len(theirs))
"""


def test_django_rows_close_their_responses_and_pay_for_no_receiver_of_ours_without_revocation() -> None:
    """Each request sends request_finished, as under gunicorn; without revocation our engine connects nothing to it
    (issue 28: its receiver ran on every request), and no other engine's row would run a receiver of ours."""
    result = subprocess.run(
        [sys.executable, "-c", DJANGO_DRIVEN], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    sent, requests, ours, theirs = map(int, result.stdout.split())
    assert sent == requests == 3  # the baseline and the two engines: every response closed
    assert ours == 0
    assert theirs == 0
