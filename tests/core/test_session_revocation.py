"""The core's rules for a request's session under revocation (``session_revocation``), whatever the framework."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

import pytest

from blake2sign_web.sessions.expiry import stored_expiry
from blake2sign_web.sessions.revocation import SessionState, store_down_accepted
from blake2sign_web.stores.base import StoreUnavailable

SESSION = b"\x01" * 16
GENERATION = "ab" * 16


@pytest.mark.parametrize(
    ("fails_open", "accepted", "logged"), [(True, True, "accepted unchecked"), (False, False, "read as empty")]
)
def test_a_store_down_policy_is_decided_and_logged_once_in_the_frameworks_words(
    caplog: pytest.LogCaptureFixture, fails_open: bool, accepted: bool, logged: str
) -> None:
    with caplog.at_level(logging.ERROR, logger="blake2sign_web.revocation"):
        assert (
            store_down_accepted(StoreUnavailable("down"), fails_open=fails_open, setting="on_unavailable") is accepted
        )
    assert logged in caplog.text
    assert ("on_unavailable='open'" in caplog.text) is fails_open


def test_the_generation_is_read_once_when_the_session_is_first_signed_for_its_user() -> None:
    reads: list[object] = []

    def read(user: object) -> str:
        reads.append(user)
        return GENERATION

    state = SessionState(SESSION, True, "42", "cd" * 16)
    assert state.generation_to_sign(42, read) == "cd" * 16  # as read with the session: no store read
    assert state.generation_to_sign(7, read) == GENERATION  # logged in during the request
    assert state.generation_to_sign("7", read) == GENERATION
    assert reads == [7]


def test_a_generation_the_store_cannot_give_is_none_and_not_asked_again(caplog: pytest.LogCaptureFixture) -> None:
    def down(user: object) -> str:
        raise StoreUnavailable("down")

    state = SessionState(SESSION, False)
    assert state.generation_to_sign(7, down) == ""
    assert state.generation_to_sign(7, lambda user: GENERATION) == ""
    assert "none is signed" in caplog.text


def test_the_client_session_is_ended_even_after_log_out_everywhere_kept_it() -> None:
    state = SessionState(SESSION, True, "42", GENERATION)
    state.keep("42", "ef" * 16)
    assert state.session_id != SESSION
    assert state.client_session() == SESSION  # the cookie's copies end with it
    state.ended()
    assert state.client_session() is None
    assert SessionState(SESSION, False).client_session() is None


def test_a_stored_expiry_is_read_in_one_place() -> None:
    moment = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert stored_expiry(None) == (None, None, None)
    assert stored_expiry(0).left() is None  # browser close: the token has no expiry of its own
    assert stored_expiry(300) == (300, None, None)
    assert stored_expiry(300).left() == 300
    assert stored_expiry(moment.isoformat()) == (None, moment, moment.timestamp())  # as Django's JSON keeps it
    assert stored_expiry(moment).at == moment.timestamp()
    left = stored_expiry(datetime.now(timezone.utc) + timedelta(seconds=60)).left()
    assert left is not None
    assert 58 < left <= 60
