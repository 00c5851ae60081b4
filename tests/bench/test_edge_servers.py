"""The edge benchmark runs (quick): nginx alone, nginx + njs by a folder link and by a grant cookie, and Django's
signed view each served every request of the HLS workload with 200 and the whole file; nginx + njs refused a
tampered link; the verification loop ran inside Node and njs (and workerd, when tests/edge/workerd has it)."""

from __future__ import annotations

import json
import math

import pytest

from example_project.bench import edge_servers, hls
from tests.edge.conftest import program

pytestmark = pytest.mark.server


def test_a_quick_run_of_the_edge_benchmark() -> None:
    program("nginx", "nginx")
    program("njs", "njs")
    program("node", "nodejs")
    if not edge_servers.MODULE.exists():
        from tests.browser import missing

        missing(f"{edge_servers.MODULE} (Debian's libnginx-mod-http-js package: apt-get install libnginx-mod-http-js)")
    ticks: list[None] = []
    data = edge_servers.run(lambda: ticks.append(None), quick=True)
    json.dumps(data)  # JSON-able
    assert data["errors"] == []
    assert len(ticks) == edge_servers.ticks(quick=True)
    settings = data["settings"]
    assert (settings["rounds"], settings["passes"], settings["segments"]) == (1, 1, hls.SEGMENTS)

    servers = data["results"]["servers"]
    assert set(servers["configs"]) == set(edge_servers.CONFIGS) == {"a", "b", "c", "d", "x", "y", "z"}
    requests = settings["rounds"] * settings["passes"] * (1 + hls.SEGMENTS)
    for key, found in servers["configs"].items():
        assert found["served"]["requests"] == found["served"]["ok"] == requests, key  # every answer a 200
        assert len(found["cpu_s"]) == settings["rounds"]
        assert found["median_s"] > 0, key
    assert servers["configs"]["d"]["playlist_rewritten"]  # Django's view signs the playlist's URIs
    assert servers["checks"]["tampered link, nginx + njs"] == 403
    assert servers["checks"]["no link, nginx + njs"] == 403
    assert set(servers["ratios"]) == {"b/a", "c/a", "d/b"}

    verification = data["results"]["verification"]
    expected = {"node hmac", "node webcrypto", "njs decide", "njs handler"}
    if edge_servers.workerd_binary() is not None:
        expected |= {"workerd webcrypto", "workerd hmac"}
    assert expected <= set(verification["runtimes"])
    repeats = settings["verification_repeats"]
    for name in expected:
        found = verification["runtimes"][name]
        assert math.isfinite(found["median_us"]), name
        assert found["min_us"] <= found["median_us"] <= found["max_us"], name
        if name.startswith("node"):  # timed inside the loop by process.cpuUsage: a positive time by construction
            assert found["median_us"] > 0, name
        else:  # the CPU of n verifications less that of none: a quick run's n is within the noise, so no sign
            assert len(found["us"]) == repeats, name
    for name in ("njs decide", "njs handler"):
        found = verification["runtimes"][name]
        assert found["verifications"] == edge_servers.QUICK_NJS_COUNT * repeats, name
        assert found["allowed"] == edge_servers.QUICK_NJS_COUNT, name  # every one of the loop's requests allowed

    rows = edge_servers.table(data)
    assert any(row.startswith("| (b) / (a)") for row in rows)
    assert any("njs (CLI)" in row for row in rows)
    assert not any("not run: failed" in row for row in rows)


def test_a_verification_time_lost_in_the_noise_is_not_printed_as_a_time() -> None:
    # njs and workerd are timed as the CPU of n verifications less that of none; a median at or below zero says
    # the loop was within the noise of the runs without it, not that verification took no time.
    lost = {"median_us": -0.81, "min_us": -2.0, "max_us": 1.5, "runtime": "njs 0.7.9"}
    timed = {"median_us": 16.7, "min_us": 15.9, "max_us": 17.3, "runtime": "njs 0.7.9"}
    part = {"results": {"verification": {"runtimes": {"njs decide": lost, "njs handler": timed}}}}
    rows = edge_servers.table(part, "verification")
    decide = next(row for row in rows if "keyring prepared once" in row)
    handler = next(row for row in rows if "per request: prepare" in row)
    assert "not measurable in this run" in decide
    assert "-0.81" in decide
    assert "16.70 us (15.90-17.30)" in handler
    assert "not measurable" not in handler
