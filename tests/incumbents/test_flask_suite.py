"""Flask's own tests that use the session (from the installed Flask's sdist) against this project's interface."""

from __future__ import annotations

from .flask_runner import FLASK_MODULES, FLASK_SKIPS, run_flask_suite
from .runner import check, skips_for


def test_flask_sessions_pass_flasks_own_tests() -> None:
    run = run_flask_suite()
    for module in FLASK_MODULES:
        check(run, module, f"tests/{module}.py", skips_for(FLASK_SKIPS.get(module, ())))
