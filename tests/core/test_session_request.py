"""The core's per-request session decisions (blake2sign_web.sessions.request), without any framework."""

from __future__ import annotations

import logging
import os
from datetime import datetime, timezone
from typing import Any

import pytest

from blake2sign_web.exceptions import BadSignature, NotJSON, SignatureExpired
from blake2sign_web.sessions import token as session_token
from blake2sign_web.sessions.chunks import IncompleteChunks
from blake2sign_web.sessions.cookies import OversizePolicy
from blake2sign_web.sessions.expiry import SessionTimedOut
from blake2sign_web.sessions.options import DEFAULTS
from blake2sign_web.sessions.request import (
    DELETE,
    KEEP,
    WRITE,
    SessionSetup,
    SessionWriter,
    checked_session,
    chunked_token,
    response_plan,
    revocation_steps,
    session_from,
    settled,
    with_vary_cookie,
)
from blake2sign_web.sessions.revocation import SessionState
from blake2sign_web.sessions.state import Session
from blake2sign_web.sessions.token import (
    BAD,
    EXPIRED,
    INCUMBENT_SHAPE,
    NOT_A_SESSION,
    TIMED_OUT,
    VALID,
    ReadToken,
    RefusalWords,
    refusal_reason,
)
from blake2sign_web.signing.serializer import SerializerSigner
from blake2sign_web.stores.base import StoreUnavailable
from blake2sign_web.stores.records import new_session_id

SECRET = "a secret of the core's session tests, long enough"
logger = logging.getLogger("tests.session_request")


def setup(**values: Any) -> SessionSetup:
    return SessionSetup(SECRET, (), {**DEFAULTS, **values}, purpose="tests")


def writer(configured: SessionSetup) -> SessionWriter:
    oversize = OversizePolicy("session", True, ValueError, "", "store less.", "", logger)
    return SessionWriter(configured, configured.cookie(oversize), typed_name="typed", logger=logger, ended="%r ended")


def test_the_setup_derives_what_needs_a_token_and_how_long_records_live() -> None:
    plain = setup(max_age=60)
    assert not plain.needs_token
    assert not plain.timeouts
    assert not plain.expire_every_cookie
    assert plain.lifetime == 60
    assert plain.max_chunks == 0
    assert setup(max_age=60, idle_timeout=30).needs_token
    assert setup(max_age=0).expire_every_cookie
    assert setup(chunked=True, max_chunks=3).max_chunks == 3
    session_class = setup(max_age=60, idle_timeout=30).session_class(Session)
    assert session_class().get_expiry_age() == 30


def test_a_read_becomes_a_session_and_a_refused_cookie_an_empty_one() -> None:
    session = session_from(ReadToken(VALID, {"a": 1}, reissue=True), Session, "session", "token", 0)
    assert dict(session) == {"a": 1}
    assert session.modified
    refused = settled(session_from(ReadToken(BAD), Session, "session", "token", 0))
    assert refused.refused
    assert refused.loaded_empty
    assert not refused.modified
    timed_out = settled(session_from(ReadToken(TIMED_OUT), Session, "session", "token", 0))
    assert timed_out.modified
    assert not timed_out.loaded_empty


def test_the_first_cookie_of_a_set_left_from_chunking_takes_its_chunks_with_it() -> None:
    first = ".3.abc"
    session = settled(session_from(ReadToken(BAD), Session, "session", first, 0))
    assert session.leftovers == ["session.1", "session.2"]
    plan = response_plan(session, "session")
    assert plan.fate == KEEP
    assert list(plan.stale) == ["session.1", "session.2"]
    assert list(plan.doomed) == ["session"]
    assert not session_from(ReadToken(NOT_A_SESSION), Session, "session", first, 0).leftovers
    assert not session_from(ReadToken(BAD), Session, "session", first, 3).leftovers  # chunking on: none left


@pytest.mark.parametrize(
    ("data", "modified", "loaded_empty", "fate"),
    [({"a": 1}, True, True, WRITE), ({}, True, False, DELETE), ({}, True, True, KEEP), ({"a": 1}, False, False, KEEP)],
)
def test_the_response_writes_deletes_or_keeps(
    data: dict[str, Any], modified: bool, loaded_empty: bool, fate: str
) -> None:
    session = Session(data)
    session.modified, session.loaded_empty = modified, loaded_empty
    assert response_plan(session, "session").fate == fate


def test_a_refused_set_of_chunks_is_deleted_unless_written() -> None:
    session = Session()
    session.refused = True
    plan = response_plan(session, "session", ["session.1"])
    assert plan.fate == KEEP
    assert list(plan.doomed) == ["session", "session.1"]
    assert list(response_plan(Session(), "session", (), ["session", "session.2"]).doomed) == ["session", "session.2"]


def test_the_writer_writes_a_session_and_deletes_an_ended_one(caplog: pytest.LogCaptureFixture) -> None:
    write = writer(setup(max_age=60))
    session = Session({"a": 1})
    session.modified = True
    (cookie,) = write.set_cookies(session, None)
    assert cookie.startswith(b"session=")
    assert b"Max-Age=60" in cookie
    session.set_expiry(-1)
    with caplog.at_level(logging.WARNING, logger.name):
        (deletion,) = write.set_cookies(session, None)
    assert deletion.startswith(b"session=null")
    assert "'session' ended" in caplog.text


def test_revocation_steps() -> None:
    state = SessionState(b"id", True)
    emptied = Session()
    emptied.modified = True
    assert revocation_steps(emptied, state) == (False, True, False)
    logged_in = Session({"user_id": 1})
    logged_in.modified = True
    assert revocation_steps(logged_in, state) == (False, False, True)
    state.unchecked = True  # read as empty with the store down: nothing written, unless cleared
    assert revocation_steps(logged_in, state) == (True, False, False)
    logged_in.clear()
    assert revocation_steps(logged_in, state) == (False, True, False)


def test_the_setup_says_which_requests_take_the_short_path() -> None:
    plain = setup()
    assert not plain.extras
    assert plain.direct_read
    for values in ({"server_timing": True}, {"chunked": True}):
        assert setup(**values).extras
        assert not setup(**values).direct_read
    for values in ({"idle_timeout": 600}, {"migrate": True}, {"max_age": 0}):
        assert not setup(**values).extras
        assert not setup(**values).direct_read


WORDS = RefusalWords("expired (age)", "past absolute", "migrate it", "not ours")


def test_every_refusal_has_its_reason_in_the_adapters_words() -> None:
    assert refusal_reason(ReadToken(INCUMBENT_SHAPE, error=BadSignature("bad tag")), WORDS) == "bad tag; migrate it"
    timed_out = SessionTimedOut("past it", expired_at=0)
    assert refusal_reason(ReadToken(TIMED_OUT, error=timed_out), WORDS) == "past absolute"
    assert refusal_reason(ReadToken(BAD, error=BadSignature("bad tag")), WORDS) == "bad tag"
    assert refusal_reason(ReadToken(EXPIRED), WORDS) == "expired (age)"
    assert refusal_reason(ReadToken(NOT_A_SESSION), WORDS) == "its value is not a session"
    assert refusal_reason(ReadToken(BAD), WORDS) == "not ours"


DATED = RefusalWords("expired", "timed out", "", "not ours", dated=True)


def test_a_refusal_reason_says_when_it_expired_and_never_ends_with_a_full_stop() -> None:
    def refusal_reason(error: BadSignature) -> str:  # Django's call: a refused cookie's error, dated words
        return session_token.refusal_reason(ReadToken(BAD, error=error), DATED)

    assert refusal_reason(BadSignature("bad signature.")) == "bad signature"
    assert refusal_reason(SignatureExpired("old", expired_at=0)) == "expired at 1970-01-01T00:00:00+00:00"
    timed_out = refusal_reason(SessionTimedOut("idle timeout", expired_at=0))
    assert timed_out == "idle timeout: expired at 1970-01-01T00:00:00+00:00"


def test_dated_words_name_a_value_that_is_no_session_and_add_no_empty_hint() -> None:
    words = DATED._replace(not_a_session="session is not a JSON object")
    assert session_token.refusal_reason(ReadToken(NOT_A_SESSION), words) == "session is not a JSON object"
    shaped = ReadToken(INCUMBENT_SHAPE, error=BadSignature("signature does not match."))
    assert session_token.refusal_reason(shaped, words) == "signature does not match"


def test_an_incomplete_set_of_chunks_is_a_bad_cookie_whose_cookies_are_deleted() -> None:
    cookie = setup(chunked=True, max_chunks=3).cookie(
        OversizePolicy("session", True, ValueError, "", "store less.", "", logger)
    )
    refused: list[IncompleteChunks] = []
    sent: list[str] = []
    incomplete: list[str] = []
    assert chunked_token(cookie, [(b"cookie", b"session.1=abc")], sent, incomplete, refused.append) is None
    assert len(refused) == 1
    assert incomplete == refused[0].cookies
    assert "session" in incomplete
    assert chunked_token(cookie, [(b"cookie", b"other=1")], [], [], refused.append) is None
    assert len(refused) == 1  # no cookie at all: nothing refused


def checked(revoked: bool | StoreUnavailable, *, fails_open: bool = False) -> tuple[Session, SessionState]:
    fresh = SessionState(b"client", True)
    return checked_session(
        Session({"user_id": 1}),
        fresh,
        revoked,
        fails_open=fails_open,
        setting="on_unavailable",
        unchecked=lambda: SessionState(new_session_id(), False),
    )


def test_the_revocation_check_keeps_refuses_or_leaves_the_cookie() -> None:
    session, state = checked(False)
    assert session == {"user_id": 1}
    assert not session.modified
    assert state.client_session() == b"client"
    session, state = checked(True)  # ended: empty, its cookie deleted, the next token a new session's
    assert session == {}
    assert session.modified
    assert not session.loaded_empty
    assert state.client_session() is None
    session, state = checked(StoreUnavailable("down"), fails_open=True)
    assert session == {"user_id": 1}
    assert state.client_session() == b"client"
    session, state = checked(StoreUnavailable("down"))  # closed: empty, the client's cookie kept
    assert session == {}
    assert not session.modified
    assert not session.loaded_empty
    assert state.unchecked


def test_a_response_that_read_the_session_varies_by_cookie_once() -> None:
    assert with_vary_cookie([(b"a", b"1")]) == [(b"a", b"1"), (b"vary", b"Cookie")]
    headers = [(b"vary", b"Accept"), (b"a", b"1"), (b"vary", b"Origin")]
    assert with_vary_cookie(headers) == [(b"vary", b"Accept, Origin, Cookie"), (b"a", b"1")]
    assert headers == [(b"vary", b"Accept"), (b"a", b"1"), (b"vary", b"Origin")]  # a copy


# --- The usual write's short path (SessionWriter.usual_headers) ------------------------------------------------

NOW = 1_800_000_000


def frozen_writer(*, dated: bool = False, raise_error: bool = True, **values: Any) -> SessionWriter:
    """A writer whose signer reads a fixed clock: two writes of a session give the same bytes."""
    configured = setup(**values)
    oversize = OversizePolicy("session", raise_error, ValueError, "", "store less.", "kept.", logger)
    write = SessionWriter(
        configured, configured.cookie(oversize, dated=dated), typed_name="typed", logger=logger, ended="%r ended"
    )
    signs = configured.signers.writer.max_token_length  # the configuration's: what it would refuse, it refuses
    write.writer = SerializerSigner(SECRET, purpose="tests", clock=lambda: NOW, max_token_length=signs)
    return write


def changed(data: dict[str, Any], *, accessed: bool = True) -> Session:
    session = Session(data)
    session.modified, session.accessed = True, accessed
    return session


CONFIGURATIONS = [
    {},
    {"max_age": None},
    {"max_age": 0},
    {"same_site": "none", "secure": True, "partitioned": True, "domain": "example.com", "path": "/app"},
    {"same_site": None, "http_only": False, "max_age": 3600},
    {"same_site": "strict", "secure": True},
]
HEADERS = [[], [(b"content-type", b"text/plain")], [(b"vary", b"Accept"), (b"a", b"1"), (b"vary", b"Origin")]]


@pytest.mark.parametrize("values", CONFIGURATIONS)
@pytest.mark.parametrize("headers", HEADERS)
@pytest.mark.parametrize("accessed", [True, False])
def test_the_usual_write_gives_the_general_paths_headers(
    values: dict[str, Any], headers: list[tuple[bytes, bytes]], accessed: bool
) -> None:
    write = frozen_writer(**values)
    assert write.direct  # these configurations take the short path
    session = changed({"user_id": 7, "name": "Ada"}, accessed=accessed)
    original = list(headers)
    usual = write.usual_headers(session, headers)
    assert usual == write.response_headers(session, headers, None)
    assert usual is not None
    assert [name for name, _ in usual].count(b"set-cookie") == 1
    assert (b"Cookie" in b", ".join(value for name, value in usual if name == b"vary")) is accessed
    assert headers == original  # the response's own list is left as it was (a later request may send it again)


@pytest.mark.parametrize(
    ("values", "dated"), [({"idle_timeout": 600}, False), ({"chunked": True, "max_chunks": 3}, False), ({}, True)]
)
def test_timeouts_chunks_and_dated_cookies_take_the_general_path(values: dict[str, Any], dated: bool) -> None:
    write = frozen_writer(dated=dated, **values)
    assert not write.direct
    session = changed({"user_id": 7})
    assert write.usual_headers(session, []) == write.response_headers(session, [], None)


def ended() -> Session:
    session = changed({"user_id": 7})
    session.set_expiry(-1)
    return session


def emptied() -> Session:
    session = changed({})
    session.loaded_empty = False
    return session


def with_leftovers() -> Session:
    session = changed({"user_id": 7})
    session.leftovers = ["session.1", "session.2"]
    return session


def expiring() -> Session:
    session = changed({"user_id": 7})
    session.set_expiry(60)
    return session


def only_read() -> Session:
    session = Session({"user_id": 7})
    session.accessed = True
    return session


@pytest.mark.parametrize("make", [ended, emptied, with_leftovers, expiring, only_read, Session])
def test_every_other_response_is_the_general_paths(make: Any, caplog: pytest.LogCaptureFixture) -> None:
    write = frozen_writer()
    with caplog.at_level(logging.WARNING, logger.name):
        usual = write.usual_headers(make(), [(b"a", b"1")])
    assert usual == write.response_headers(make(), [(b"a", b"1")], None)
    if make is with_leftovers:  # written, and the chunks of a set left from chunking deleted
        assert usual is not None
        assert [value.split(b"=")[0] for name, value in usual if name == b"set-cookie"] == [
            b"session",
            b"session.1",
            b"session.2",
        ]
    if make is ended:
        assert "'session' ended" in caplog.text


def test_a_refused_write_is_refused_as_on_the_general_path(caplog: pytest.LogCaptureFixture) -> None:
    big = changed({"blob": os.urandom(3000).hex()})  # incompressible: over the browser's limit
    with pytest.raises(ValueError, match="would take") as raised:
        frozen_writer().usual_headers(big, [])
    with pytest.raises(ValueError, match="would take") as general:
        frozen_writer().response_headers(big, [], None)
    assert str(raised.value) == str(general.value)
    logged = frozen_writer(raise_error=False)
    with caplog.at_level(logging.ERROR, logger.name):
        assert logged.usual_headers(big, []) == [(b"vary", b"Cookie")]  # no Set-Cookie: the client keeps its own
    assert caplog.text.count("would take") == 1
    small = frozen_writer()
    small.writer = SerializerSigner(SECRET, purpose="tests", max_decompressed_size=64)
    with pytest.raises(ValueError, match="holds over 64 bytes of JSON"):
        small.usual_headers(changed({"name": "x" * 100}), [])
    with pytest.raises(NotJSON, match=r"typed tokens: typed$"):  # the typed option in the adapter's words
        frozen_writer().usual_headers(changed({"at": datetime.now(timezone.utc)}), [])
