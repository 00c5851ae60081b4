"""The conformance suite's Flask app: the neutral operations (drivers.OPERATIONS) on ``flask.session``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import flask

from blake2sign_web.flask import FlaskSessions
from blake2sign_web.flask.revocation import log_out_everywhere, revoke_session

from .drivers import TYPED_SAMPLE, USER_KEY, accessors, blob, expiry_argument, plain, typed_report


def apply(op: list[Any], session: Any = None, raw: Any = None) -> Any:
    """``op`` on ``session`` (Flask's by default; Quart's app passes its own, and the object itself as ``raw``)."""
    session = flask.session if session is None else session
    name, *args = op
    if name == "set":
        session[args[0]] = args[1]
    elif name == "get":
        return session.get(args[0])
    elif name == "delete":
        return session.pop(args[0], None)
    elif name in ("clear", "flush"):  # Flask's session is a dict: clear() is its flush
        session.clear()
    elif name == "logout":
        if session.revocation is not None:
            revoke_session()
        else:
            session.clear()
    elif name == "touch":
        session.modified = True  # Flask's documented way to have a session written unchanged
    elif name == "set_expiry":
        session.set_expiry(expiry_argument(args[0], datetime.now(timezone.utc)))
    elif name == "accessors":
        return accessors(session)
    elif name == "set_typed":
        session[args[0]] = TYPED_SAMPLE
    elif name == "types":
        return typed_report(session.get(args[0]))
    elif name == "set_blob":
        session[args[0]] = blob(args[1])
    elif name == "blob_length":
        return len(session.get(args[0], ""))
    elif name == "login":  # a new session for the same data, then the user (as the Starlette view does)
        if raw is None:
            raw = flask.globals.request_ctx._get_current_object()._session  # the object itself, not the proxy
        data, expiry = dict(raw), (raw._expiry, raw._expiry_fixed)
        raw.clear()
        raw.update(data)
        raw._expiry, raw._expiry_fixed = expiry  # clear() forgets set_expiry(); Django's cycle_key keeps it
        raw[USER_KEY] = str(args[0])
    elif name == "everywhere":
        log_out_everywhere(str(args[0]), keep_current=args[1])
    else:
        raise ValueError(f"unknown operation {name!r}")
    return None


def make_app(config: dict[str, Any]) -> flask.Flask:
    """An app with this project's sessions, configured by ``config`` (checked now: init_app)."""
    app = flask.Flask(__name__)
    app.config.update(config)
    FlaskSessions(app)

    @app.post("/ops")
    def ops() -> Any:
        body = flask.request.get_json()
        results = [plain(apply(op)) for op in body["ops"]]
        session = plain(dict(flask.session)) if body["report"] else None
        return flask.jsonify({"results": results, "session": session})

    return app
