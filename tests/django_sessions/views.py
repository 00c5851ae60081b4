"""Views that drive request.session through the real middleware stack, one operation list per request."""

from __future__ import annotations

import json
import secrets
import uuid
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login, logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.utils import timezone


def _expiry(value: Any) -> Any:
    """set_expiry arguments travel as JSON: {"timedelta": s} and {"datetime_in": s} build the objects."""
    if isinstance(value, dict) and "timedelta" in value:
        return timedelta(seconds=value["timedelta"])
    if isinstance(value, dict) and "datetime_in" in value:
        return timezone.now() + timedelta(seconds=value["datetime_in"])
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (type({}.keys()), type({}.values()), type({}.items()))):
        return sorted(value, key=repr)
    return value


def ops(request: HttpRequest) -> HttpResponse:
    """POST {"ops": [[method, *args], ...], "status": 200}: call each session method, return the results."""
    body = json.loads(request.body or b"{}")
    results = []
    for name, *args in body.get("ops", []):
        if name == "set_expiry":
            args = [_expiry(args[0])]
        results.append(_plain(getattr(request.session, name)(*args)))
    data = {"results": results, "session": dict(request.session.items()), "key": request.session.session_key}
    return JsonResponse(data, status=body.get("status", 200))


async def aops(request: HttpRequest) -> HttpResponse:
    """The async twin of ``ops``: each name is the a-prefixed method."""
    body = json.loads(request.body or b"{}")
    results = []
    for name, *args in body.get("ops", []):
        if name == "aset_expiry":
            args = [_expiry(args[0])]
        results.append(_plain(await getattr(request.session, name)(*args)))
    items = await request.session.aitems()
    return JsonResponse({"results": results, "session": dict(items), "key": request.session.session_key})


def untouched(request: HttpRequest) -> HttpResponse:
    return HttpResponse("no session access")


def login_view(request: HttpRequest) -> HttpResponse:
    user = get_user_model().objects.get(username=request.POST["username"])
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return HttpResponse("in")


def logout_view(request: HttpRequest) -> HttpResponse:
    logout(request)
    return HttpResponse("out")


def whoami(request: HttpRequest) -> HttpResponse:
    return HttpResponse(request.user.get_username() if request.user.is_authenticated else "anonymous")


def add_message(request: HttpRequest) -> HttpResponse:
    messages.info(request, request.POST["text"])
    return HttpResponse("added")


def read_messages(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"messages": [str(m) for m in messages.get_messages(request)]})


def csrf_token(request: HttpRequest) -> HttpResponse:
    return HttpResponse(get_token(request))


def csrf_protected(request: HttpRequest) -> HttpResponse:
    return HttpResponse("accepted")


#: One value of each type a typed session (TYPED) keeps, as a view stores it.
TYPED_VALUES: dict[str, Any] = {
    "datetime": datetime(2026, 11, 24, 12, 30, 5, 123456, tzinfo=dt_timezone.utc),
    "naive": datetime(2026, 11, 24, 12, 30),
    "date": date(2026, 11, 24),
    "time": time(9, 15),
    "timedelta": timedelta(days=1, seconds=5),
    "uuid": uuid.UUID(int=7),
    "decimal": Decimal("19.90"),
    "set": {1, 2, 3},
    "frozenset": frozenset({"a"}),
    "tuple": (1, "two"),
    "bytes": b"\x00\xff",
    "escaped": {" t": "a user's dict that looks like a tag"},
}


def store_typed(request: HttpRequest) -> HttpResponse:
    request.session["values"] = TYPED_VALUES
    return HttpResponse("stored")


def read_typed(request: HttpRequest) -> HttpResponse:
    """Whether the session holds TYPED_VALUES, equal and of the same types."""
    values = request.session.get("values", {})
    return JsonResponse({"equal": values == TYPED_VALUES, "types": {k: type(v).__name__ for k, v in values.items()}})


def store_blob(request: HttpRequest, size: int) -> HttpResponse:
    """GET (no CSRF token needed, for real servers): store ``size`` characters that zstd cannot shrink."""
    request.session["blob"] = secrets.token_urlsafe(size)[:size]
    return HttpResponse("stored")


def read_blob(request: HttpRequest) -> HttpResponse:
    """The length of the blob the session holds (0 for an empty session)."""
    return HttpResponse(str(len(request.session.get("blob", ""))))
