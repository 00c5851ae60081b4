"""The differences the suite allows are the ones the docs list, and its comparison allows nothing else."""

from __future__ import annotations

from pathlib import Path

from .differences import DIFFERENCES, agree, differ

PAGE = Path(__file__).parents[2] / "docs" / "conformance.md"


def test_every_allowed_difference_is_documented() -> None:
    headings = {line[4:] for line in PAGE.read_text().splitlines() if line.startswith("### ")}
    assert set(DIFFERENCES) <= headings, set(DIFFERENCES) - headings


def test_outcomes_agree_within_a_clock_tolerance_only() -> None:
    assert differ({"max-age": 600}, {"max-age": 599}) == []
    assert differ({"max-age": 600}, {"max-age": 590}) != []
    assert differ({"user": 600}, {"user": 599}) != []  # only the clock's values are tolerant
    assert differ({"a": 1}, {"a": 1, "b": 2}) != []
    assert differ([{"deleted": True}], [{"deleted": False}]) != []
    agree({"x": {"a": [1, {"ttl": 10}]}, "y": {"a": [1, {"ttl": 11}]}})
