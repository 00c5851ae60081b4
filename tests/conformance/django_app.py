"""The conformance suite's Django view: the neutral operations (drivers.OPERATIONS) on ``request.session``."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.utils import timezone

from blake2sign_web.django.revocation import log_out_everywhere

from .drivers import TYPED_SAMPLE, USER_KEY, accessors, blob, expiry_argument, plain, typed_report


def apply(request: HttpRequest, op: list[Any]) -> Any:
    session: Any = request.session
    name, *args = op
    if name == "set":
        session[args[0]] = args[1]
    elif name == "get":
        return session.get(args[0])
    elif name == "delete":
        return session.pop(args[0], None)
    elif name == "clear":
        session.clear()
    elif name in ("flush", "logout"):
        session.flush()
    elif name == "touch":
        session.modified = True
    elif name == "set_expiry":
        session.set_expiry(expiry_argument(args[0], timezone.now()))
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
    elif name == "login":  # what django.contrib.auth.login() does to the session, without the database
        session.cycle_key()
        session[USER_KEY] = str(args[0])
    elif name == "everywhere":
        log_out_everywhere(get_user_model()(pk=int(args[0])), keep_current=args[1])
    else:
        raise ValueError(f"unknown operation {name!r}")
    return None


def ops(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    results = [plain(apply(request, op)) for op in body["ops"]]
    session = plain(dict(request.session.items())) if body["report"] else None
    return JsonResponse({"results": results, "session": session})


urlpatterns = [path("ops/", ops)]
