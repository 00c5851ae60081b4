"""Starlette's own session tests (from the installed Starlette's sdist) against this project's middleware."""

from __future__ import annotations

from .runner import STARLETTE_SKIPS, check, run_starlette_suite, skips_for


def test_our_middleware_passes_starlettes_session_tests() -> None:
    check(run_starlette_suite(), "test_session", "tests/middleware/test_session.py", skips_for(STARLETTE_SKIPS))
