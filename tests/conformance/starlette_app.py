"""The conformance suite's Starlette view: the neutral operations (drivers.OPERATIONS) on ``request.session``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from .drivers import TYPED_SAMPLE, USER_KEY, accessors, blob, expiry_argument, plain, typed_report


async def apply(request: Request, op: list[Any]) -> Any:
    from blake2sign_web.starlette.revocation import SCOPE_KEY, log_out_everywhere, revoke_session

    session: Any = request.session
    name, *args = op
    if name == "set":
        session[args[0]] = args[1]
    elif name == "get":
        return session.get(args[0])
    elif name == "delete":
        return session.pop(args[0], None)
    elif name in ("clear", "flush"):  # Starlette's session is a dict: clear() is its flush
        session.clear()
    elif name == "logout":
        if SCOPE_KEY in request.scope:
            await revoke_session(request)
        else:
            session.clear()
    elif name == "touch":
        session.mark_modified()
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
    elif name == "login":  # a new session for the same data (a new session id with revocation), then the user
        data, expiry = dict(session), (session._expiry, session._expiry_fixed)
        session.clear()
        session.update(data)
        session._expiry, session._expiry_fixed = expiry  # clear() forgets set_expiry(); Django's cycle_key keeps it
        session[USER_KEY] = str(args[0])
    elif name == "everywhere":
        await log_out_everywhere(request, str(args[0]), keep_current=args[1])
    else:
        raise ValueError(f"unknown operation {name!r}")
    return None


async def ops(request: Request) -> JSONResponse:
    body = await request.json()
    results = [plain(await apply(request, op)) for op in body["ops"]]
    session = plain(dict(request.session)) if body["report"] else None
    return JSONResponse({"results": results, "session": session})
