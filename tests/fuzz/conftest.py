"""What the fuzzing runs did, printed after the test results whether or not output is captured."""

from __future__ import annotations

import pytest

from .libfuzzer import FuzzRun

RUNS = pytest.StashKey[list[FuzzRun]]()


@pytest.fixture
def fuzz_runs(request: pytest.FixtureRequest) -> list[FuzzRun]:
    """Where a fuzzing test leaves its run for the summary."""
    return request.config.stash.setdefault(RUNS, [])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    runs = config.stash.get(RUNS, [])
    if not runs:
        return
    terminalreporter.section("fuzzing (atheris)")
    for run in runs:
        terminalreporter.write_line(run.summary())
    executions = sum(run.executions for run in runs)
    seconds = sum(run.wall_seconds for run in runs)
    crashed = [run.target for run in runs if run.crashes]
    terminalreporter.write_line(
        f"total: {executions} executions in {seconds:.1f} s of {len(runs)} targets; "
        + (f"CRASHES in {', '.join(crashed)}" if crashed else "no crash")
    )
