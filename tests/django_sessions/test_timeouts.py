"""IDLE_TIMEOUT and ABSOLUTE_TIMEOUT through the real middleware stack, with both middlewares.

Time is moved by what the requests carry, not by patching a clock: cookies are signed in the past (the
core's ``clock=``), and sessions carry a start in the past (the engine's STARTED key).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

import blake2sign_web.sessions.expiry
from blake2sign_web.django.sessions import IDLE_REFRESH_FRACTION, STARTED

from .conftest import SUSPICIOUS, cookie, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
MINUTE, HOUR = 60, 3600
IDLE, ABSOLUTE = 15 * MINUTE, 8 * HOUR


def timeouts(**sessions: Any) -> Any:
    return override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions})


def send(client: Client, data: dict[str, Any], *, signed_ago: float = 0) -> None:
    """The cookie the engine would have written ``signed_ago`` seconds ago."""
    client.cookies[settings.SESSION_COOKIE_NAME] = signer(clock=lambda: time.time() - signed_ago).dumps(data)


def issued_at(response: Any) -> int:
    return signer().load_token(cookie(response).value).issued_at


def near_now(moment: float) -> bool:
    return abs(moment - time.time()) < 5


# IDLE_TIMEOUT ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("minutes", [14, 16])
def test_idle_timeout_ends_a_session_not_read_for_that_long(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture, minutes: int
) -> None:
    send(client, {"a": 1}, signed_ago=minutes * MINUTE)
    with timeouts(IDLE_TIMEOUT=IDLE), caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = run(client, ["get", "a"])
    if minutes < 15:
        assert session_of(response) == {"a": 1}
        assert not caplog.records
    else:
        assert session_of(response) == {}
        assert cookie(response).value == ""  # deleted
        [warning] = [r for r in caplog.records if r.name == SUSPICIOUS]
        assert warning.getMessage().startswith(
            "Session cookie rejected: session not read for more than IDLE_TIMEOUT (900 seconds): expired at "
        )
    with override_settings(BLAKE2SIGN_WEB={}):  # without the setting, SESSION_COOKIE_AGE (two weeks) only
        send(client, {"a": 1}, signed_ago=minutes * MINUTE)
        assert session_of(run(client)) == {"a": 1}


def test_a_read_re_issues_the_cookie_once_a_quarter_of_the_idle_timeout_has_passed(
    client: Client, session_middleware: str
) -> None:
    assert IDLE_REFRESH_FRACTION is blake2sign_web.sessions.expiry.IDLE_REFRESH_FRACTION  # the core's, as Starlette's
    quarter = IDLE * IDLE_REFRESH_FRACTION
    assert quarter == 225
    with timeouts(IDLE_TIMEOUT=IDLE):
        send(client, {"a": 1}, signed_ago=quarter - 10)
        assert cookie(run(client, ["get", "a"])) is None  # a read, not a write
        send(client, {"a": 1}, signed_ago=quarter + 10)
        response = run(client, ["get", "a"])
        assert near_now(issued_at(response))  # re-issued: the idle time restarts
        assert cookie(response)["max-age"] == IDLE
        assert cookie(run(client, ["get", "a"])) is None  # and the next read sends nothing


def test_a_session_read_every_few_minutes_outlives_the_idle_timeout(client: Client, session_middleware: str) -> None:
    """Each read more than a quarter after the last issue re-issues: the session lasts while it is used."""
    with timeouts(IDLE_TIMEOUT=IDLE):
        send(client, {"a": 1}, signed_ago=14 * MINUTE)
        for _ in range(3):
            response = run(client, ["get", "a"])
            assert session_of(response) == {"a": 1}
            token = cookie(response).value
            # The client comes back 14 minutes after this response's cookie was issued.
            data = signer().loads(token)
            send(client, data, signed_ago=14 * MINUTE)


def test_idle_timeout_caps_the_cookies_max_age(client: Client, session_middleware: str) -> None:
    with timeouts(IDLE_TIMEOUT=IDLE):
        assert cookie(run(client, ["__setitem__", "a", 1]))["max-age"] == IDLE
        with override_settings(SESSION_COOKIE_AGE=10 * MINUTE):  # shorter than the idle timeout: kept
            assert cookie(run(client, ["__setitem__", "a", 2]))["max-age"] == 10 * MINUTE


# ABSOLUTE_TIMEOUT --------------------------------------------------------------------------------------


def test_absolute_timeout_stamps_the_start_in_the_token_out_of_the_applications_sight(
    client: Client, session_middleware: str
) -> None:
    with timeouts(ABSOLUTE_TIMEOUT=ABSOLUTE):
        response = run(client, ["__setitem__", "a", 1])
        stored = signer().loads(cookie(response).value)
        assert set(stored) == {"a", STARTED}
        assert near_now(stored[STARTED])
        assert session_of(run(client, ["__setitem__", "b", 2])) == {"a": 1, "b": 2}  # STARTED not in the session
        assert signer().loads(client.cookies[settings.SESSION_COOKIE_NAME].value)[STARTED] == stored[STARTED]
    assert signer().loads(cookie(run(Client(), ["__setitem__", "a", 1])).value) == {"a": 1}  # off: as before


@pytest.mark.parametrize(("hours", "ended"), [(7.9, False), (8.1, True)])
def test_absolute_timeout_ends_a_session_however_active(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture, hours: float, ended: bool
) -> None:
    send(client, {"a": 1, STARTED: int(time.time() - hours * HOUR)})  # signed a second ago: active
    with timeouts(ABSOLUTE_TIMEOUT=ABSOLUTE), caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = run(client, ["get", "a"])
        if not ended:
            assert session_of(response) == {"a": 1}
            max_age = cookie(run(client, ["__setitem__", "a", 2]))["max-age"]
            assert abs(max_age - 0.1 * HOUR) < 5  # the cookie lasts what is left of the 8 hours
        else:
            assert session_of(response) == {}
            assert cookie(response).value == ""
            assert "session began more than ABSOLUTE_TIMEOUT (28800 seconds) ago: expired at " in caplog.text
    with override_settings(BLAKE2SIGN_WEB={}):
        send(client, {"a": 1, STARTED: int(time.time() - hours * HOUR)})
        assert session_of(run(client))["a"] == 1


def test_a_cookie_from_before_the_setting_began_when_it_was_signed(client: Client, session_middleware: str) -> None:
    with timeouts(ABSOLUTE_TIMEOUT=ABSOLUTE):
        send(client, {"a": 1}, signed_ago=7 * HOUR)
        stored = signer().loads(cookie(run(client, ["__setitem__", "b", 2])).value)
        assert abs(stored[STARTED] - (time.time() - 7 * HOUR)) < 5
        send(client, {"a": 1}, signed_ago=9 * HOUR)
        assert session_of(run(client)) == {}


@pytest.mark.django_db
def test_login_restarts_the_absolute_timeout_and_a_logout_ends_it(client: Client, session_middleware: str) -> None:
    get_user_model().objects.create_user("ada")
    with timeouts(ABSOLUTE_TIMEOUT=ABSOLUTE):
        send(client, {"cart": [1], STARTED: int(time.time() - 7 * HOUR)})  # an anonymous session, 7 hours old
        assert client.post("/login/", {"username": "ada"}).content == b"in"
        stored = signer().loads(client.cookies[settings.SESSION_COOKIE_NAME].value)
        assert near_now(stored[STARTED])  # counted from the login
        assert client.get("/whoami/").content == b"ada"
        client.post("/logout/")
        assert client.cookies[settings.SESSION_COOKIE_NAME].value == ""


def test_both_timeouts_together(client: Client, session_middleware: str) -> None:
    with timeouts(IDLE_TIMEOUT=IDLE, ABSOLUTE_TIMEOUT=ABSOLUTE):
        send(client, {"a": 1, STARTED: int(time.time() - ABSOLUTE + 60)}, signed_ago=5 * MINUTE)
        response = run(client, ["get", "a"])
        assert json.loads(response.content)["results"] == [1]
        assert abs(cookie(response)["max-age"] - 60) < 5  # re-issued (idle), capped by the absolute limit
        send(client, {"a": 1, STARTED: int(time.time())}, signed_ago=16 * MINUTE)
        assert session_of(run(client)) == {}


# Settings ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sessions",
    [{"IDLE_TIMEOUT": 0}, {"IDLE_TIMEOUT": 90.5}, {"IDLE_TIMEOUT": "900"}, {"ABSOLUTE_TIMEOUT": True}],
)
def test_bad_timeouts_are_e023_and_stop_the_engine(sessions: dict[str, Any]) -> None:
    with timeouts(**sessions):
        ids = {m.id for m in run_checks() if m.id and m.id.startswith("blake2sign_web")}
        assert ids == {"blake2sign_web.E023"}
        with pytest.raises(ImproperlyConfigured, match=r"TIMEOUT'\] must be None \(off\) or a number of seconds"):
            run(Client(), ["__setitem__", "a", 1])
