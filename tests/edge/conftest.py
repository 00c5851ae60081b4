"""What every edge verifier's test shares: the vectors file, the differential fuzz cases, and the comparison.

A runner prints one JSON line per case (``decision``, ``prefix``, ``below``); ``compare`` holds them to the
reference verifier's. The fuzz count: 3,000 cases (times ``BLAKE2SIGN_SCALE``) in CI, 100,000 with ``--long``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web.edge import vectors
from tests import longrun
from tests.browser import missing
from tests.edge import fuzz

VECTORS = Path(vectors.__file__).with_name("vectors.json")
FIELDS = ("decision", "prefix", "below", "granted")


def fuzz_count() -> int:
    return 100_000 if longrun.is_long() else max(500, int(3000 * longrun.scale()))


@pytest.fixture(scope="session")
def fuzz_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file of seeded fuzz cases, the same for every runtime in one session."""
    path = tmp_path_factory.mktemp("edge") / "fuzz.json"
    path.write_text(
        json.dumps(fuzz.generate(seed=int(os.environ.get("BLAKE2SIGN_FUZZ_SEED", "1")), count=fuzz_count()))
    )
    return path


def compare(cases: dict[str, Any] | Path, lines: list[dict[str, Any]] | str) -> int:
    """Assert each runner line equals its case's ``expect``; return how many agreed (all of them)."""
    if isinstance(cases, Path):
        cases = json.loads(cases.read_text())
    if isinstance(lines, str):
        lines = [json.loads(line) for line in lines.split("\n") if line.strip()]  # JSON escapes no U+0085
    expected = cases["vectors"]
    assert len(lines) == len(expected), f"{len(lines)} answers for {len(expected)} cases"
    wrong = [
        (case["name"], case["request"], case["expect"], {f: got.get(f) for f in FIELDS})
        for case, got in zip(expected, lines, strict=True)
        if any(got.get(f) != case["expect"][f] for f in FIELDS)
    ]
    assert not wrong, f"{len(wrong)} of {len(expected)} disagree with the reference; the first:\n" + "\n".join(
        json.dumps(w) for w in wrong[:8]
    )
    return len(expected)


def program(name: str, package: str) -> str:
    """The path of a system program the test runs; skipped without it (failed in CI), naming the package."""
    found = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
    if found is None:
        missing(f"{name} (Debian's {package} package: apt-get install {package})")
    assert found is not None
    return found
