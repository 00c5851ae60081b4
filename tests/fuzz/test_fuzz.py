"""Coverage-guided fuzzing of every parser a client reaches, with atheris (libFuzzer), from real seeds.

Each target runs in its own process for a bounded time: a few seconds in CI, minutes with
``pytest --long``. A run passes when the fuzzer exits cleanly with no crash; its
executions and coverage are printed in the summary ("fuzzing (atheris)") and recorded as
test properties. A crash fails the test with the input's repr; the input is kept in the
test's temporary folder. Turn it into a regression test in test_regressions.py.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.longrun import seconds

from . import targets
from .libfuzzer import FuzzRun, fuzz

#: Per target: thirteen targets in about 45 s of CI (startup adds 1-3 s each; coverage levels off within the
#: first seconds at these targets' sizes), three minutes each in the long run.
BUDGET = seconds(2, 180)


def require_atheris() -> None:
    if importlib.util.find_spec("atheris") is not None:
        return
    if "TOX_ENV_NAME" in os.environ:  # the matrix installs the test group only
        pytest.skip("atheris is not installed in this tox environment (the 'fuzz' dependency group)")
    if os.environ.get("CI") == "true":
        pytest.fail("atheris is not installed: pip install -e . --group fuzz (CI must fuzz)")
    pytest.skip("atheris is not installed: pip install -e . --group fuzz")


@pytest.mark.parametrize("target", list(targets.BUILDERS))
def test_fuzz_target(
    target: str, tmp_path: Path, record_property: pytest.RecordProperty, fuzz_runs: list[FuzzRun]
) -> None:
    require_atheris()
    run = fuzz(target, BUDGET, tmp_path)
    fuzz_runs.append(run)
    for name in ("executions", "executions_per_second", "new_units", "wall_seconds"):
        record_property(name, getattr(run, name))
    record_property("coverage", f"cov {run.seeded.cov}->{run.final.cov} ft {run.seeded.ft}->{run.final.ft}")
    print(run.summary())
    assert not run.crashes, run.crash_report()
    assert run.returncode == 0, run.crash_report()
    assert run.executions > 0, f"the fuzzer ran nothing:\n{run.output[-3000:]}"
    assert run.final.cov > 0, f"no coverage: is blake2sign_web instrumented?\n{run.output[-3000:]}"
    assert run.seeded.corpus > 0, f"no seed was loaded from the corpus:\n{run.output[-3000:]}"
