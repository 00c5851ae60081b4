"""The suite's hypothesis example counter (tests/conftest.py) counts what ran, and leaves hypothesis' own report."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROPERTIES = """
from hypothesis import assume, given, settings, strategies as st


@settings(max_examples=37, database=None)
@given(st.integers())
def test_every_example_counts(number):
    pass


@settings(max_examples=20, database=None)
@given(st.integers())
def test_discarded_examples_do_not(number):
    assume(number % 2 == 0)


def test_not_a_property():
    pass
"""


def test_the_counter_reports_the_examples_that_ran(tmp_path: Path) -> None:
    (tmp_path / "test_counted.py").write_text(textwrap.dedent(PROPERTIES))
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop("BLAKE2SIGN_LONG", None)
    plugins = ["-p", "no:cacheprovider", "-p", "tests.conftest", "-p", "no:django"]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *plugins,
            "--hypothesis-show-statistics",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "hypothesis: 57 examples in 2 properties" in run.stdout.splitlines()
    assert "37 passing" in run.stdout  # hypothesis' own statistics still reach its report
