"""The core's rules for what a write of a session in Django's layout signs, and its session's revocation state."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone

import pytest

from blake2sign_web.sessions.expiry import SessionEnd, data_written, stored_end
from blake2sign_web.sessions.revocation import SessionState
from blake2sign_web.stores.base import StoreUnavailable
from blake2sign_web.stores.records import GENERATION_KEY

SESSION = b"\x01" * 16
GENERATION = "ab" * 16


def no_check(seconds: float) -> None:
    """An expiry check that lets everything pass."""


def test_a_write_without_an_expiry_or_timeout_signs_the_data_as_it_is() -> None:
    data = {"a": 1}
    assert data_written(data, None, absolute_timeout=None, started_key="_s", check=no_check) == (data, None, None)


def test_a_write_with_a_past_expiry_signs_an_empty_session() -> None:
    past = datetime.now(timezone.utc) - timedelta(seconds=5)
    written = data_written(
        {"a": 1, "_session_expiry": past.isoformat()}, 7, absolute_timeout=60, started_key="_s", check=no_check
    )
    assert written == ({}, None, 7)  # ended, as a store's expired row reads as nothing; its start untouched


def test_a_write_signs_its_expiry_and_the_start_of_a_new_session() -> None:
    checked: list[float] = []
    before = int(time.time())
    data, expires_in, started = data_written(
        {"a": 1, "_session_expiry": 300}, None, absolute_timeout=60, started_key="_s", check=checked.append
    )
    assert expires_in == 300.0
    assert checked == [300]
    assert started is not None
    assert before <= started <= time.time()
    assert data == {"a": 1, "_session_expiry": 300, "_s": started}
    # A session that began earlier keeps its start; an empty one carries none.
    assert data_written({"a": 1}, 5, absolute_timeout=60, started_key="_s", check=no_check)[0] == {"a": 1, "_s": 5}
    assert data_written({}, None, absolute_timeout=60, started_key="_s", check=no_check) == ({}, None, None)


def test_an_expiry_no_token_can_carry_is_refused_by_the_check() -> None:
    def refuse(seconds: float) -> None:
        raise ValueError("too long")

    with pytest.raises(ValueError, match="too long"):
        data_written({"_session_expiry": 300}, None, absolute_timeout=None, started_key="_s", check=refuse)
    # Browser-close (0) has no expiry of its own to check.
    assert data_written({"_session_expiry": 0}, None, absolute_timeout=None, started_key="_s", check=refuse)[1] is None


def test_the_end_is_read_from_the_stored_expiry() -> None:
    def end(value: object) -> SessionEnd:
        return stored_end(
            1000.0,
            value,
            default_age=600,
            browser_session_default=False,
            idle_timeout=None,
            absolute_timeout=None,
            started=None,
        )

    assert end(None).age == 600
    assert end(30).age == 30
    assert end(0).browser_session  # set_expiry(0): a browser-close cookie
    assert end(datetime.fromtimestamp(1100, tz=timezone.utc)).age == 100


def test_a_write_signs_the_users_generation_only_for_a_user_with_one() -> None:
    state = SessionState(SESSION, True, "42", GENERATION)
    assert state.signed_data({"a": 1}, None, lambda user: "x") == {"a": 1}
    assert state.signed_data({"a": 1}, 42, lambda user: "x") == {"a": 1, GENERATION_KEY: GENERATION}
    assert SessionState(SESSION, False).signed_data({"a": 1}, 7, lambda user: "") == {"a": 1}


def test_a_clients_state_and_its_end() -> None:
    assert SessionState.of_client(None).client_session() is None
    state = SessionState.of_client(SESSION)
    state.unchecked = True
    assert state.end() == SESSION
    assert state.session_id != SESSION
    assert not state.unchecked
    assert state.end() is None


def test_a_store_down_leaves_the_session_unchecked_unless_accepted() -> None:
    state = SessionState(SESSION, True)
    assert state.store_down(StoreUnavailable("down"), fails_open=True, setting="X")
    assert not state.unchecked
    assert not state.store_down(StoreUnavailable("down"), fails_open=False, setting="X")
    assert state.unchecked


def test_a_refused_session_is_logged_and_the_next_token_is_a_new_sessions(caplog: pytest.LogCaptureFixture) -> None:
    state = SessionState(SESSION, True, "42", GENERATION)
    with caplog.at_level(logging.INFO, logger="blake2sign_web.revocation"):
        state.refused("sessionid")
    assert "'sessionid' refused" in caplog.text
    assert state.session_id != SESSION
    assert state.client_session() is None
    assert state.user is None
