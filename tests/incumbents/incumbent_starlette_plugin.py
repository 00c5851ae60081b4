"""pytest plugin for Starlette's own session tests: this project's middleware in place of Starlette's.

Loaded with ``-p`` before any test module is imported, so the suite's
``from starlette.middleware.sessions import SessionMiddleware`` (and ``Session``, which
Starlette 1.x's suite tests directly) gets ours. Skips the tests named in
``BLAKE2SIGN_WEB_INCUMBENT_SKIPS`` (runner.STARLETTE_SKIPS) and refuses to run if one of
them is missing or if the swap did not take.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import starlette.middleware.sessions as starlette_sessions

from blake2sign_web.starlette import sessions as ours

starlette_sessions.SessionMiddleware = ours.SessionMiddleware  # type: ignore[misc]
if hasattr(starlette_sessions, "Session"):  # Starlette >= 1.0
    starlette_sessions.Session = ours.Session  # type: ignore[misc]

SKIPS: dict[str, str] = json.loads(os.environ.get("BLAKE2SIGN_WEB_INCUMBENT_SKIPS", "{}"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = {getattr(item, "originalname", item.name) for item in items}
    missing = sorted(set(SKIPS) - names)
    if missing:
        raise pytest.UsageError(f"in the skip list but not in Starlette's suite: {', '.join(missing)}")
    for item in items:
        module = getattr(item, "module", None)
        for name in ("SessionMiddleware", "Session"):
            if getattr(module, name, None) not in (None, getattr(ours, name)):
                raise pytest.UsageError(f"{item.nodeid} does not use blake2sign_web's {name}")
        reason = SKIPS.get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
    # Their ``tests`` package, not this project's: the suite's own helpers and fixtures.
    import tests

    if not Path(tests.__file__).resolve().is_relative_to(Path.cwd().resolve()):
        raise pytest.UsageError(f"the suite imported another 'tests' package: {tests.__file__}")
