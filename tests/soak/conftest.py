"""The soak's figures in the terminal summary and a JSON file (see report.py)."""

from .report import figures, pytest_terminal_summary

__all__ = ["figures", "pytest_terminal_summary"]
