"""Values json refuses are refused at save with a TypeError naming where they are, as Django's engines refuse them.

orjson would write a datetime, UUID, enum or dataclass and read it back as a str or dict, so
``now - request.session["last_seen"]`` would fail later, far from the cause.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, middleware_with

ENGINES = ["blake2sign_web.django.sessions", "django.contrib.sessions.backends.signed_cookies"]


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Item:
    sku: str


VALUES: dict[str, Any] = {
    "datetime": datetime.datetime(2026, 11, 24, 12, 0, tzinfo=datetime.timezone.utc),
    "date": datetime.date(2026, 11, 24),
    "uuid": uuid.UUID(int=7),
    "enum": Colour.RED,
    "dataclass": Item("book"),
    "set": {1, 2},
    "bytes": b"x",
}


def store(request: HttpRequest, kind: str) -> HttpResponse:
    request.session["cart"] = [{"added": VALUES[kind]}]
    return HttpResponse("stored")


urlpatterns = [path("store/<str:kind>/", store)]


@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
@pytest.mark.parametrize("engine", ENGINES, ids=["ours", "signed_cookies"])
@pytest.mark.parametrize("kind", VALUES)
def test_non_json_values_raise_type_error_at_save(client: Client, middleware: str, engine: str, kind: str) -> None:
    settings = {"SESSION_ENGINE": engine, "MIDDLEWARE": middleware_with(middleware), "ROOT_URLCONF": __name__}
    with override_settings(**settings), pytest.raises(TypeError) as raised:
        client.get(f"/store/{kind}/")
    if engine == ENGINES[0]:
        assert str(raised.value).startswith("value at ['cart'][0]['added'] is "), raised.value
