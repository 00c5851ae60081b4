"""The hostile runs' figures in the terminal summary and a JSON file (see tests/soak/report.py)."""

from tests.soak.report import figures, pytest_terminal_summary

__all__ = ["figures", "pytest_terminal_summary"]
