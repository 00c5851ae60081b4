"""The request benchmark runs end to end (``--quick``, a few engines) and writes outputs that parse.

No timing is asserted: this only keeps ``python -m example_project.bench`` from rotting. It
starts real gunicorn and uvicorn servers on 127.0.0.1, as the full benchmark does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: One engine of ours per framework, and Starlette's own so that one target ratio is evaluated.
ENGINES = ["ours + our middleware", "blake2sign_web SessionMiddleware", "Starlette SessionMiddleware"]

pytest.importorskip("matplotlib", reason="the benchmark's chart needs matplotlib (the bench group)")
pytest.importorskip("psutil", reason="the HTTP benchmark finds gunicorn's worker with psutil (the bench group)")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench")
    command = [sys.executable, "-m", "example_project.bench", "--quick", "--out", str(out), "--engines", *ENGINES]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_json_has_both_frameworks_workloads_and_ways(outputs: Path) -> None:
    data = json.loads((outputs / "benchmarks" / "requests.json").read_text())
    assert data["settings"]["quick"] is True
    for section in ("results", "http"):
        for framework, ours, baseline, others in (
            ("django", "ours + our middleware", "no sessions", set()),
            ("starlette", "blake2sign_web SessionMiddleware", "no session middleware", {"Starlette SessionMiddleware"}),
        ):
            for workload in ("read", "write"):
                rows = data[section][framework][workload]
                assert set(rows) == {ours, baseline, *others}, (section, framework, workload, set(rows))
                row = rows[ours]
                for key in ("added_us_median", "added_us_q1", "added_us_q3"):
                    assert isinstance(row[key], float)
                assert row["added_us_q1"] <= row["added_us_median"] <= row["added_us_q3"]
                assert isinstance(row["cookie_bytes"], int)
                assert row["cookie_bytes"] > 0
                assert rows[baseline]["cookie_bytes"] is None


def test_http_rows_carry_latency_and_throughput(outputs: Path) -> None:
    data = json.loads((outputs / "benchmarks" / "requests.json").read_text())
    row = data["http"]["starlette"]["read"]["blake2sign_web SessionMiddleware"]
    assert row["rps_median"] > 0
    assert row["p99_us_median"] > 0
    assert row["rps_fraction_median"] > 0
    assert data["settings"]["load_generator"] in ("wrk", "python http.client")


def test_a_quick_run_gives_no_verdict(outputs: Path) -> None:
    data = json.loads((outputs / "benchmarks" / "requests.json").read_text())
    evaluated = {(t["where"], t["framework"], t["workload"], t["ours"], t["theirs"]) for t in data["targets"]}
    for where in ("in process", "http"):
        for workload in ("read", "write"):
            pair = ("blake2sign_web SessionMiddleware", "Starlette SessionMiddleware")
            assert (where, "starlette", workload, *pair) in evaluated
    assert {t["verdict"] for t in data["targets"]} == {"quick run: no verdict"}


def test_markdown_and_chart_are_written(outputs: Path) -> None:
    text = (outputs / "request-benchmark.md").read_text()
    assert text.startswith("# Request benchmark")
    assert "Quick smoke run" in text
    assert "| ours + our middleware |" in text
    assert "| blake2sign_web SessionMiddleware |" in text
    png = (outputs / "img" / "request-cost.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 10_000


def test_a_target_whose_incumbent_cost_is_lost_in_noise_is_kept_without_a_verdict() -> None:
    from example_project.bench import report

    framework, ours, theirs, _target = report.TARGETS[-1]
    rows = {
        "baseline": {"baseline": "baseline", "rounds_us": [10.0, 10.0, 10.0]},
        ours: {"baseline": "baseline", "rounds_us": [12.0, 11.0, 12.0]},
        theirs: {"baseline": "baseline", "rounds_us": [9.5, 10.0, 8.0]},  # never above the baseline
    }
    found = report.targets({framework: {"read": rows}}, {}, quick=False)
    assert [(t["ours"], t["theirs"], t["median"], t["rounds"]) for t in found] == [(ours, theirs, None, 0)]
    assert found[0]["verdict"].startswith("no verdict")
    json.dumps(found, allow_nan=False)  # standard JSON: no NaN
