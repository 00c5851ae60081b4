"""The core's request rules an adapter with parsed cookies and its own signing calls (Django's):
``session_request.joined_token`` and ``session_request.signed_token``."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

import pytest

from blake2sign_web.exceptions import NotJSON
from blake2sign_web.sessions.chunks import IncompleteChunks
from blake2sign_web.sessions.cookies import OversizePolicy
from blake2sign_web.sessions.request import joined_token, signed_token
from blake2sign_web.signing.cache import get_signer

logger = logging.getLogger("tests.core.session_request_parsed")
SECRET = "a-secret-long-enough-for-the-core-0123456789"


def policy(raises: bool) -> OversizePolicy:
    return OversizePolicy("session", raises, ValueError, "", "store less.", "The client keeps its cookie.", logger)


def test_an_incomplete_set_of_parsed_chunks_is_a_bad_cookie_whose_cookies_are_noted() -> None:
    refused: list[IncompleteChunks] = []
    incomplete: list[str] = []
    assert joined_token("session", {"session.1": "abc"}, 3, incomplete, refused.append) is None
    assert len(refused) == 1
    assert incomplete == refused[0].cookies
    assert joined_token("session", {"session": "abc"}, 3, incomplete, refused.append) == "abc"
    assert len(refused) == 1


def test_a_signed_token_names_the_typed_option_and_refuses_json_over_the_readers_size(
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer = get_signer(SECRET, purpose="session", max_decompressed_size=1024)
    token = signed_token(writer, {"a": 1}, expires_in=None, session_id=None, typed_name="TYPED", oversize=policy(False))
    assert token is not None
    assert writer.loads(token) == {"a": 1}
    with pytest.raises(NotJSON, match="TYPED"):
        signed_token(
            writer,
            {"a": datetime.now(timezone.utc)},
            expires_in=None,
            session_id=None,
            typed_name="TYPED",
            oversize=policy(False),
        )
    big = {"a": "x" * 4096}
    with caplog.at_level(logging.ERROR, logger=logger.name):
        assert (
            signed_token(writer, big, expires_in=None, session_id=None, typed_name="T", oversize=policy(False)) is None
        )
    assert "holds over 1024 bytes of JSON" in caplog.text
