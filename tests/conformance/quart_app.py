"""The conformance suite's Quart app: the Flask app's operations (``flask_app.apply``) on ``quart.session``,
its store awaited (``blake2sign_web.flask.quart``)."""

from __future__ import annotations

from typing import Any

import quart

from blake2sign_web.flask import QuartSessions
from blake2sign_web.flask.quart import log_out_everywhere, revoke_session

from .drivers import plain
from .flask_app import apply


async def apply_async(op: list[Any], context: Any) -> Any:
    """``op`` on the request's session: the store's operations awaited, the others as Flask's app does them."""
    session: Any = quart.session
    if op[0] == "logout" and session.revocation is not None:
        await revoke_session()
    elif op[0] == "everywhere":
        await log_out_everywhere(str(op[1]), keep_current=op[2])
    else:
        return apply(op, session=session, raw=context.session)
    return None


def make_app(config: dict[str, Any]) -> quart.Quart:
    """An app with this project's sessions, configured by ``config`` (checked now: init_app)."""
    app = quart.Quart(__name__)
    app.config.update(config)
    QuartSessions(app)

    @app.post("/ops")
    async def ops() -> Any:
        body = await quart.request.get_json()
        context = quart.globals.request_ctx._get_current_object()  # type: ignore[attr-defined]
        results = [plain(await apply_async(op, context)) for op in body["ops"]]
        session = plain(dict(quart.session)) if body["report"] else None
        return {"results": results, "session": session}

    return app
