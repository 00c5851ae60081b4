"""The HMAC-SHA-256 against BLAKE2b part: each operation does what its row says, and the table reads the results."""

from __future__ import annotations

import pytest

from example_project.bench import edge_cost


@pytest.mark.parametrize("hasher", edge_cost.HASHERS)
def test_each_operation_verifies_or_signs_under_its_hasher(hasher: str) -> None:
    operations = edge_cost.operations(hasher)
    assert list(operations) == list(edge_cost.NAMES)
    link = operations["folder link"]()
    assert link.prefix == "/files/videos/123/"  # type: ignore[attr-defined]
    assert not link.used_fallback  # type: ignore[attr-defined]
    assert operations["session read"]() == edge_cost.SESSION
    assert operations["session read, retired key"]() == edge_cost.SESSION
    token = operations["session write"]()
    assert isinstance(token, str)


def test_the_table_gives_hmacs_ratio_to_blake2b() -> None:
    def row(ir: float, seconds: float) -> dict[str, object]:
        return {"Ir": [ir, ir + 10, ir - 10], "Ir_median": ir, "best_s": seconds, "median_s": seconds * 1.1}

    results = {
        "blake2b": {name: row(100_000, 10e-6) for name in edge_cost.NAMES},
        "hmac-sha256": {name: row(120_000, 12e-6) for name in edge_cost.NAMES},
    }
    lines = edge_cost.table({"results": results, "settings": {}})
    assert len(lines) == 2 + len(edge_cost.NAMES)
    assert "| one file's link | 100.0k (100.0k-100.0k) | 120.0k (120.0k-120.0k) | 1.20 |" in lines[2]
    assert lines[2].endswith("| 1.20 |")


def test_an_operation_missing_from_earlier_results_is_left_out() -> None:
    row = {"Ir": [1.0], "Ir_median": 1.0, "best_s": 1e-6, "median_s": 1e-6}
    earlier = [name for name in edge_cost.NAMES if name != "session read, retired key"]
    results = {hasher: {name: row for name in earlier} for hasher in edge_cost.HASHERS}
    lines = edge_cost.table({"results": results, "settings": {}})
    assert [line.split(" | ")[0][2:] for line in lines[2:]] == earlier
