"""pytest plugin for Flask's own tests: this project's ``FlaskSessions`` as every Flask app's session interface.

Loaded with ``-p`` before any test module is imported: ``Flask.session_interface`` (the class attribute every
app reads, unless a test sets its own) becomes ``FlaskSessions()``, and every app's default config gets
``BLAKE2SIGN_WEB = {"HASHER": ...}``, the hasher of ``BLAKE2SIGN_TEST_HASHER`` (tests/hasher.py, loaded by its path:
the ``tests`` package here is Flask's). Skips the tests named in
``BLAKE2SIGN_WEB_INCUMBENT_SKIPS`` (flask_runner.FLASK_SKIPS) and refuses to run if one of them is missing or if
the swap did not take.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import flask
import pytest
from werkzeug.datastructures import ImmutableDict

from blake2sign_web.flask import FlaskSessions

_spec = importlib.util.spec_from_file_location("blake2sign_web_test_hasher", Path(__file__).parent.parent / "hasher.py")
assert _spec is not None
assert _spec.loader is not None
_hasher = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hasher)
HASHER: str = _hasher.HASHER

flask.Flask.session_interface = FlaskSessions()
# Each app's config starts as a copy of default_config: every app of the suite signs with HASHER.
flask.Flask.default_config = ImmutableDict({**flask.Flask.default_config, "BLAKE2SIGN_WEB": {"HASHER": HASHER}})

SKIPS: dict[str, str] = json.loads(os.environ.get("BLAKE2SIGN_WEB_INCUMBENT_SKIPS", "{}"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = {getattr(item, "originalname", item.name) for item in items}
    missing = sorted(set(SKIPS) - names)
    if missing:
        raise pytest.UsageError(f"in the skip list but not in Flask's suite: {', '.join(missing)}")
    check = flask.Flask("check")
    if not isinstance(check.session_interface, FlaskSessions):
        raise pytest.UsageError("Flask apps do not get blake2sign_web's FlaskSessions")
    if check.config.get("BLAKE2SIGN_WEB") != {"HASHER": HASHER}:
        raise pytest.UsageError(f"Flask apps do not get the hasher {HASHER!r}")
    for item in items:
        reason = SKIPS.get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
