"""pytest plugin for Starlette's own session tests: this project's middleware in place of Starlette's.

Loaded with ``-p`` before any test module is imported, so the suite's
``from starlette.middleware.sessions import SessionMiddleware`` (and ``Session``, which
Starlette 1.x's suite tests directly) gets ours, signing with ``BLAKE2SIGN_TEST_HASHER``
(tests/hasher.py, loaded by its path: the ``tests`` package here is Starlette's). Skips the tests named in
``BLAKE2SIGN_WEB_INCUMBENT_SKIPS`` (runner.STARLETTE_SKIPS) and refuses to run if one of
them is missing or if the swap did not take.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
import starlette.middleware.sessions as starlette_sessions

from blake2sign_web.starlette import sessions as ours

_spec = importlib.util.spec_from_file_location("blake2sign_web_test_hasher", Path(__file__).parent.parent / "hasher.py")
assert _spec is not None
assert _spec.loader is not None
_hasher = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hasher)
HASHER: str = _hasher.HASHER


class SessionMiddleware(ours.SessionMiddleware):
    """Ours, its hasher ``HASHER`` unless a test chooses one."""

    def __init__(self, *args: Any, hasher: Any = HASHER, **kwargs: Any) -> None:
        super().__init__(*args, hasher=hasher, **kwargs)


SWAPPED = {"SessionMiddleware": SessionMiddleware, "Session": getattr(ours, "Session", None)}
starlette_sessions.SessionMiddleware = SessionMiddleware  # type: ignore[misc]
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
            if getattr(module, name, None) not in (None, SWAPPED[name]):
                raise pytest.UsageError(f"{item.nodeid} does not use blake2sign_web's {name}")
        reason = SKIPS.get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
    # Their ``tests`` package, not this project's: the suite's own helpers and fixtures.
    import tests

    if not Path(tests.__file__).resolve().is_relative_to(Path.cwd().resolve()):
        raise pytest.UsageError(f"the suite imported another 'tests' package: {tests.__file__}")
