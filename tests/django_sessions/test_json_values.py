"""Values Django's engines store (through Python's json) are stored by ours too: 200, and they read back equal.

orjson refuses integers over 64 bits and lone surrogates (a JSON body's "\\ud800" through json.loads);
the core then writes the token with Python's json, as Django's JSONSerializer would.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings

from .conftest import run, session_of

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
ENGINES = ["blake2sign_web.django.sessions", "django.contrib.sessions.backends.signed_cookies"]
VALUES = [
    "\ud800",
    "a\udfffb\U0001f600",
    2**64,
    -(2**128),
    {"deep": [{"n": 2**65, "s": "\udc00"}]},
]
VALUE_IDS = ["lone-surrogate", "surrogate-and-pair", "int-2**64", "int--2**128", "nested"]


@pytest.mark.parametrize("engine", ENGINES, ids=["ours", "signed_cookies"])
@pytest.mark.parametrize("value", VALUES, ids=VALUE_IDS)
def test_values_orjson_refuses_round_trip(client: Client, session_middleware: str, engine: str, value: Any) -> None:
    with override_settings(SESSION_ENGINE=engine):
        # json.dumps writes "\\ud800" escaped, and the view's json.loads gives back the lone surrogate.
        response = run(client, ["__setitem__", "v", value], ["__setitem__", "user", 7])
        assert json.loads(response.content)["session"] == {"v": value, "user": 7}
        assert session_of(run(client)) == {"v": value, "user": 7}
