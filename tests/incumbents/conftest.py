from __future__ import annotations

import pytest

from tests.hasher import HASHER, VARIABLE

from .runner import SUMMARY


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The pass/skip/fail counts of each incumbent suite, whatever the outcome, and the hasher they ran with."""
    if SUMMARY:
        terminalreporter.section("incumbents' own session tests")
        terminalreporter.write_line(f"this project's engine signed with {HASHER} ({VARIABLE})")
        for line in SUMMARY:
            terminalreporter.write_line(line)
