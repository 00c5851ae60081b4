"""The Flask benchmark (example_project/bench/flask_cost.py) keeps working: its apps and a tiny valgrind run.

No figure is asserted but what cannot vary: instruction counts are deterministic only on one machine, and the
published ones are made by ``python -m example_project.bench.flask_cost``.
"""

from __future__ import annotations

import shutil

from example_project.bench import flask_cost

from .test_bench_smoke import required


def test_each_engine_serves_the_login_session() -> None:
    built = flask_cost.drivers()
    for engine, (driver, headers, size) in built.items():
        for workload in flask_cost.WORKLOADS:
            driver.request(driver.environ(f"/{workload}", headers=headers))
            assert driver.status.startswith("200"), (engine, workload, driver.status)
        assert (size > 0) == (engine != flask_cost.BASELINE)
    assert built[flask_cost.OURS][2] < built[flask_cost.FLASKS][2]  # a shorter cookie for the same session


def test_the_callgrind_run_counts_every_engine_and_workload() -> None:
    if shutil.which("valgrind") is None:
        required("valgrind", "apt-get install valgrind")
    found = flask_cost.measure(requests=2, warmup=1)
    for workload in flask_cost.WORKLOADS:
        assert set(found["instructions_per_request"][workload]) == set(flask_cost.ENGINES)
        assert all(count > 0 for count in found["instructions_per_request"][workload].values())
    assert set(found["cookie_bytes"]) == {flask_cost.FLASKS, flask_cost.OURS}
