"""The Flask benchmark (example_project/bench/flask_cost.py) keeps working: its apps, the ``flask`` part of the
command on tiny sizes, and a gunicorn worker counted under valgrind.

No figure is asserted but what cannot vary: instruction counts are deterministic only on one machine, and the
published ones are made by ``python -m example_project.bench flask``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from example_project.bench import flask_cost

from .test_bench_smoke import ROOT, required


def needs_valgrind() -> None:
    if shutil.which("valgrind") is None:
        required("valgrind", "apt-get install valgrind")


def test_each_engine_serves_the_login_session() -> None:
    built = flask_cost.drivers()
    for engine, (driver, headers, size) in built.items():
        for workload in flask_cost.WORKLOADS:
            driver.request(driver.environ(f"/{workload}", headers=headers))
            if not isinstance(driver, flask_cost.QuartRequests):  # (Quart's driver raises on any other status)
                assert driver.status.startswith("200"), (engine, workload, driver.status)
        assert (size > 0) == (engine not in (flask_cost.BASELINE, flask_cost.QUART_BASELINE))
    assert set(built) == {
        *flask_cost.ENGINES,
        flask_cost.OURS_LAZY,
        *flask_cost.QUART_ENGINES,
        flask_cost.QUART_OURS_LAZY,
    }
    assert built[flask_cost.OURS][2] < built[flask_cost.FLASKS][2]  # a shorter cookie for the same session
    assert built[flask_cost.QUART_OURS][2] < built[flask_cost.QUARTS][2]
    assert len(flask_cost.PROBE_COOKIE.split("=", 1)[1]) == built[flask_cost.OURS][2]  # the probe: as long as ours


def test_the_flask_part_writes_its_section_and_results(tmp_path: Path) -> None:
    """``flask --quick``: in process only, every engine and workload counted, the page's section and no verdict."""
    pytest.importorskip("matplotlib", reason="the page's charts need matplotlib (the bench extra)")
    needs_valgrind()
    command = [sys.executable, "-m", "example_project.bench", "flask", "--quick", "--out", str(tmp_path)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((tmp_path / "benchmarks" / "results.json").read_text())
    part = data["parts"]["flask"]
    assert "errors" not in part, part["errors"]
    for workload in flask_cost.WORKLOADS:
        assert set(part["in_process"][workload]) == {
            *flask_cost.ENGINES,
            flask_cost.PROBE,
            flask_cost.OURS_LAZY,
            *flask_cost.QUART_ENGINES,
            flask_cost.QUART_PROBE,
            flask_cost.QUART_OURS_LAZY,
        }
        assert all(min(row["Ir"]) > 0 for row in part["in_process"][workload].values())
    assert part["cookie_bytes"][flask_cost.OURS] < part["cookie_bytes"][flask_cost.FLASKS]
    flask_targets = [t for t in data["targets"] if t["framework"] in ("flask", "quart")]
    assert {(t["framework"], t["where"], t["workload"]) for t in flask_targets} == {
        ("flask", "callgrind, in process", "read"),
        ("flask", "callgrind, in process", "write"),
        ("quart", flask_cost.WHERE_39, "read"),
        ("flask", flask_cost.UNTOUCHED_WHERE, "api"),
        ("quart", flask_cost.UNTOUCHED_WHERE, "api"),
    }
    assert {t["verdict"] for t in flask_targets} == {"quick run: no verdict"}
    page = (tmp_path / "performance.md").read_text()
    assert f"| {flask_cost.UNTOUCHED_WHERE} | Quart | never touches the session |" in page
    assert "## Flask: what a session adds" in page
    assert f"| read-only | {flask_cost.OURS} |" in page
    assert "### Flask, the cookie" in page
    assert f"| never touches the session | {flask_cost.OURS} |" in page
    assert f"| read-only | {flask_cost.QUART_OURS} |" in page


@pytest.mark.server
@pytest.mark.parametrize("engine", [flask_cost.OURS, flask_cost.BASELINE])
def test_a_gunicorn_worker_is_counted_between_the_markers(tmp_path: Path, engine: str) -> None:
    """One app on gunicorn (one sync worker) under valgrind: read and write counted, with the login cookie (ours)
    or without a cookie and with the probe's (the session-less app)."""
    needs_valgrind()
    rows = flask_cost.serve(engine, tmp_path, requests=2, warmup=1, timeout=300)
    assert set(rows) == set(flask_cost.WORKLOADS)
    labels = {engine} if engine == flask_cost.OURS else {engine, flask_cost.PROBE}
    for workload in flask_cost.WORKLOADS:
        assert set(rows[workload]) == labels
        for label in labels:
            row = rows[workload][label]
            assert len(row["Ir"]) == 3
            assert min(row["Ir"]) > 100_000  # a whole request through gunicorn and Flask, not an empty block
            assert bool(row["cookie_bytes"]) == (label != flask_cost.BASELINE)
