"""pytest plugin for Flask's own tests: this project's ``FlaskSessions`` as every Flask app's session interface.

Loaded with ``-p`` before any test module is imported: ``Flask.session_interface`` (the class attribute every
app reads, unless a test sets its own) becomes ``FlaskSessions()``. Skips the tests named in
``BLAKE2SIGN_WEB_INCUMBENT_SKIPS`` (flask_runner.FLASK_SKIPS) and refuses to run if one of them is missing or if
the swap did not take.
"""

from __future__ import annotations

import json
import os

import flask
import pytest

from blake2sign_web.flask import FlaskSessions

flask.Flask.session_interface = FlaskSessions()

SKIPS: dict[str, str] = json.loads(os.environ.get("BLAKE2SIGN_WEB_INCUMBENT_SKIPS", "{}"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    names = {getattr(item, "originalname", item.name) for item in items}
    missing = sorted(set(SKIPS) - names)
    if missing:
        raise pytest.UsageError(f"in the skip list but not in Flask's suite: {', '.join(missing)}")
    if not isinstance(flask.Flask("check").session_interface, FlaskSessions):
        raise pytest.UsageError("Flask apps do not get blake2sign_web's FlaskSessions")
    for item in items:
        reason = SKIPS.get(getattr(item, "originalname", item.name))
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))
