from __future__ import annotations

import pytest

from .runner import SUMMARY


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The pass/skip/fail counts of each incumbent suite, whatever the outcome."""
    if SUMMARY:
        terminalreporter.section("incumbents' own session tests")
        for line in SUMMARY:
            terminalreporter.write_line(line)
