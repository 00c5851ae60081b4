"""What the benchmark measured, for the pages: ``docs/benchmarks/results.json`` if it exists.

The benchmark (``python -m example_project.bench``) writes, in its ``requests`` part, medians of
the microseconds each engine adds to a request in process, per framework and kind of request
(``api``, ``read``, ``write``). This reads them tolerantly: a missing or unreadable file, or a
shape it does not know, gives no figures and a hint to run the benchmark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "results.json"
HINT = "No benchmark results yet: run python -m example_project.bench"


def _median(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        for key in ("added_us_median", "median_us", "median", "added_us", "added"):
            if key in value:
                return _median(value[key])
    return None


def measured(framework: str) -> dict[str, dict[str, float]]:
    """{workload: {engine: median added microseconds}} for ``framework`` ("django" or "starlette"); {} if none."""
    try:
        data = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        return {}
    if isinstance(data, dict) and isinstance(data.get("parts"), dict):  # schema 2: one JSON for every part
        data = data["parts"].get("requests")
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        data = data["results"]
    section = data.get(framework) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return {}
    table: dict[str, dict[str, float]] = {}
    for workload, engines in section.items():
        if not isinstance(engines, dict):
            continue
        row = {engine: m for engine, value in engines.items() if (m := _median(value)) is not None}
        if row:
            table[str(workload)] = row
    return table
