"""URLconf of the Django properties: one signed view per converter, and views that write and read a session.

The signed view answers what it received, as JSON: the URL arguments (with their type) and the query, so a
property can tell that a link reached the view with exactly the arguments it was made for.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from blake2sign_web.django import signed_url_required

SIGNERS_PARAMS = ("signature", "expires", "once", "kid")


def received(request: HttpRequest, kwargs: dict[str, Any]) -> dict[str, Any]:
    """What a view sees of its request: typed URL arguments and the query but the signer's own parameters."""
    return {
        "kwargs": {name: [type(value).__name__, str(value)] for name, value in kwargs.items()},
        "query": [[name, values] for name, values in request.GET.lists() if name not in SIGNERS_PARAMS],
    }


@signed_url_required
def echo(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    return JsonResponse(received(request, kwargs))


def write_session(request: HttpRequest) -> HttpResponse:
    """Store the JSON body (any value Python's json reads) under one key."""
    request.session["value"] = json.loads(request.body)
    return HttpResponse("stored")


def read_session(request: HttpRequest) -> HttpResponse:
    """The whole session as ASCII JSON (a lone surrogate survives as an escape)."""
    return HttpResponse(json.dumps(dict(request.session.items())), content_type="application/json")


urlpatterns = [
    path("session/write", write_session),
    path("session/read", read_session),
    path("str/<str:value>/", echo, name="str"),
    path("slug/<slug:value>/", echo, name="slug"),
    path("int/<int:value>/", echo, name="int"),
    path("uuid/<uuid:value>/", echo, name="uuid"),
    path("path/<path:value>", echo, name="path"),
    path("mixed/<str:name>/<int:number>/<uuid:key>/<slug:slug>/<path:rest>", echo, name="mixed"),
    path("<path:value>", echo, name="anything"),  # reverse() writes a leading "//" of it as "/%2F"
]
