"""Figures the hostile and soak runs measure, shown in pytest's terminal summary and written to a JSON file.

Both packages' conftest.py import ``pytest_terminal_summary`` and the ``figures`` fixture from here; the
summary prints once however many of them pytest loaded. The JSON is ``load-figures.json`` in pytest's
base temporary directory (its path is printed with the figures).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIGURES = pytest.StashKey[dict[str, dict[str, Any]]]()
JSON_PATH = pytest.StashKey[Path]()
PRINTED = pytest.StashKey[bool]()


#: ``figures(name, values)``: what the fixture gives a test.
Record = Callable[[str, dict[str, Any]], None]


@pytest.fixture
def figures(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Record:
    """``figures(name, {...})``: keep one run's figures for the summary and the JSON file."""
    config = request.config

    def record(name: str, values: dict[str, Any]) -> None:
        collected = config.stash.setdefault(FIGURES, {})
        collected[name] = values
        path = config.stash.setdefault(JSON_PATH, tmp_path_factory.getbasetemp() / "load-figures.json")
        path.write_text(json.dumps(collected, indent=2, sort_keys=True) + "\n")

    return record


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    collected = config.stash.get(FIGURES, None)
    if not collected or config.stash.get(PRINTED, False):
        return
    config.stash[PRINTED] = True
    terminalreporter.section("hostile requests and soak: figures (this machine, as measured)")
    for name, values in sorted(collected.items()):
        terminalreporter.write_line(f"{name}: " + ", ".join(f"{key}={_show(value)}" for key, value in values.items()))
    terminalreporter.write_line(f"written to {config.stash[JSON_PATH]}")


def _show(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)
