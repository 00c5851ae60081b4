"""BLAKE2SIGN_WEB["SESSIONS"]["SERVER_TIMING"]: our middleware times the engine's load and save into a header."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from blake2sign_web.django.middleware import SessionMiddleware

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, middleware_with, run

pytestmark = [pytest.mark.urls("tests.django_sessions.urls"), pytest.mark.django_db]

TIMING = re.compile(r"^b2sw-load;dur=(?P<load>[0-9.]+), b2sw-save;dur=(?P<save>[0-9.]+)$")
ON = {"SESSIONS": {"SERVER_TIMING": True}}


def durations(response: Any) -> tuple[float, float]:
    match = TIMING.match(response["Server-Timing"])
    assert match is not None, response["Server-Timing"]
    return float(match["load"]), float(match["save"])


@pytest.mark.parametrize(
    "engine",
    [
        "blake2sign_web.django.sessions",
        "django.contrib.sessions.backends.signed_cookies",
        "django.contrib.sessions.backends.db",
        "django.contrib.sessions.backends.cache",
    ],
)
def test_on_every_response_carries_load_and_save_durations(engine: str) -> None:
    with override_settings(MIDDLEWARE=middleware_with(OUR_MIDDLEWARE), SESSION_ENGINE=engine, BLAKE2SIGN_WEB=ON):
        client = Client()
        written = run(client, ["__setitem__", "cart", ["secret-item-name"]])
        read = run(client, ["get", "cart"])
        untouched = client.get("/untouched/")
    for response in (written, read, untouched):
        durations(response)  # both parse as floats
    session_cookie = written.cookies["sessionid"].value
    for response in (written, read):
        assert session_cookie not in response["Server-Timing"]
        assert "secret-item-name" not in response["Server-Timing"]
    assert "Set-Cookie" not in untouched.headers  # timing alone writes no cookie
    assert "Vary" not in untouched.headers  # the eager, timed load does not mark the session accessed


def test_a_session_loaded_eagerly_reads_the_same_data() -> None:
    with override_settings(MIDDLEWARE=middleware_with(OUR_MIDDLEWARE), BLAKE2SIGN_WEB=ON):
        client = Client()
        run(client, ["__setitem__", "a", 1])
        response = run(client, ["get", "a"])
    assert response.json()["results"] == [1]


@pytest.mark.parametrize("middleware", [OUR_MIDDLEWARE, DJANGO_MIDDLEWARE])
def test_off_by_default_no_header(middleware: str) -> None:
    with override_settings(MIDDLEWARE=middleware_with(middleware)):
        response = run(Client(), ["__setitem__", "a", 1])
    assert "Server-Timing" not in response.headers


def test_djangos_middleware_sends_no_header_even_when_on() -> None:
    """Only our middleware writes it: Django's knows nothing of the setting (docs/django.md says so)."""
    with override_settings(MIDDLEWARE=middleware_with(DJANGO_MIDDLEWARE), BLAKE2SIGN_WEB=ON):
        response = run(Client(), ["__setitem__", "a", 1])
    assert "Server-Timing" not in response.headers


def test_a_non_bool_setting_is_reported_by_its_own_check_and_refused_at_start_up() -> None:
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"SERVER_TIMING": "yes"}}):
        errors = [e for e in run_checks() if e.id == "blake2sign_web.E017"]
        assert len(errors) == 1
        assert "SERVER_TIMING" in errors[0].msg
        with pytest.raises(ImproperlyConfigured, match="SERVER_TIMING"):
            SessionMiddleware(lambda request: None)
