"""chunked=True: a session over 4 KB in name, name.1, ... (sessions.chunks), read back, shrunk, deleted."""

from __future__ import annotations

import logging
import random
import string
from typing import Any

import pytest

from blake2sign_web.starlette import SessionCookieTooLarge, SessionMiddleware
from blake2sign_web.starlette.sessions import STARLETTE_MARKS_ACCESS

from .conftest import SECRET, AppFactory, set_cookie_headers
from .test_lazy_session import build

LOGGER = "blake2sign_web.starlette"


def noise(characters: int, seed: int = 1) -> str:
    """Text zstandard cannot shrink much: random letters and digits."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(characters))


async def app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("never called")


def names(response: Any) -> list[str]:
    return [header.split("=", 1)[0] for header in set_cookie_headers(response)]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"chunked": 1}, TypeError, "chunked must be True or False"),
        ({"chunked": True, "max_chunks": 0}, ValueError, "max_chunks must be an int from 2 to 9"),
        ({"chunked": True, "max_chunks": 1}, ValueError, "max_chunks must be an int from 2 to 9"),
        ({"chunked": True, "max_chunks": 10}, ValueError, "max_chunks must be an int from 2 to 9"),
        ({"chunked": True, "max_chunks": True}, ValueError, "max_chunks must be an int from 2 to 9"),
        ({"max_chunks": 3}, ValueError, "pass chunked=True"),
    ],
)
def test_configuration(options: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        SessionMiddleware(app, secret_key=SECRET, **options)


def test_a_small_session_is_one_cookie_as_before(client_for: AppFactory) -> None:
    plain = set_cookie_headers(client_for().post("/write", json={"a": 1}))
    chunked = set_cookie_headers(client_for(chunked=True).post("/write", json={"a": 1}))
    assert [h.split("=", 1)[0] for h in chunked] == ["session"]
    assert chunked[0].split(";", 1)[1] == plain[0].split(";", 1)[1]


def test_a_large_session_is_split_read_back_shrunk_and_deleted(client_for: AppFactory) -> None:
    client = client_for(chunked=True, max_chunks=3)
    big = {"blob": noise(9000)}
    response = client.post("/write", json=big)
    assert names(response) == ["session", "session.1", "session.2"]
    for header in set_cookie_headers(response):
        assert len(header.encode()) <= 4096
        assert header.endswith("; path=/; Max-Age=1209600; httponly; samesite=lax")
    assert client.get("/read").json() == big
    # Shrunk to two cookies: session.2 is deleted.
    client.post("/clear")
    assert client.get("/read").json() == {}
    client.post("/write", json=big)
    response = client.post("/write", json={"blob": noise(5000)})
    assert names(response) == ["session", "session.1", "session.2"]
    assert set_cookie_headers(response)[2].startswith("session.2=null; path=/; expires=Thu, 01 Jan 1970")
    assert client.get("/read").json() == {"blob": noise(5000)}
    # Emptied: every cookie of it is deleted.
    response = client.post("/clear")
    assert names(response) == ["session", "session.1"]
    assert all("=null;" in header for header in set_cookie_headers(response))


def test_a_cookie_written_unchunked_still_loads(client_for: AppFactory) -> None:
    cookie = set_cookie_headers(client_for().post("/write", json={"a": 1}))[0].split(";")[0].split("=", 1)[1]
    client = client_for(chunked=True)
    client.cookies["session"] = cookie
    assert client.get("/read").json() == {"a": 1}


def test_a_missing_chunk_is_a_bad_cookie(client_for: AppFactory, caplog: pytest.LogCaptureFixture) -> None:
    client = client_for(chunked=True)
    client.post("/write", json={"blob": noise(6000)})
    del client.cookies["session.1"]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = client.get("/read")
    assert response.json() == {}
    assert "'session.1' is missing" in caplog.text
    # Deleted, as every incomplete set is (the cookie was kept before: the same warning on every request).
    assert set_cookie_headers(response) == [
        "session=null; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT; httponly; samesite=lax"
    ]


def test_chunks_without_their_first_cookie_are_a_bad_cookie_and_deleted(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27 item 5: curl dropped "session" (the shortest name, sent last) from a Cookie header near 8 KB.

    The rest read as no cookie: no warning, and "session.1", "session.2" were never deleted.
    """
    client = client_for(chunked=True, max_chunks=3)
    client.post("/write", json={"blob": noise(9000)})
    assert sorted(client.cookies) == ["session", "session.1", "session.2"]
    del client.cookies["session"]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = client.get("/plain")  # a request that never uses the session: deleted all the same
    assert caplog.messages == [
        "Rejected session cookie 'session': cookie 'session' is missing and 'session.1', 'session.2' of it came "
        "without it (a client that caps its Cookie header, such as curl at about 8 KB, drops cookies)"
    ]
    # "session" too: the client dropped it from its Cookie header, and still holds it.
    assert names(response) == ["session", "session.1", "session.2"]
    assert all("=null; path=/; expires=Thu, 01 Jan 1970" in header for header in set_cookie_headers(response))
    assert not client.cookies
    assert client.get("/read").json() == {}


def test_a_session_written_over_an_incomplete_set_replaces_it(client_for: AppFactory) -> None:
    client = client_for(chunked=True, max_chunks=3)
    client.post("/write", json={"blob": noise(9000)})
    del client.cookies["session"]
    response = client.post("/write", json={"a": 1})  # a login, say: one cookie, the chunks deleted
    assert names(response) == ["session", "session.1", "session.2"]
    assert "=null;" not in set_cookie_headers(response)[0]
    assert dict(client.cookies) == {"session": client.cookies["session"]}
    assert client.get("/read").json() == {"a": 1}


def test_more_chunks_than_max_chunks_are_a_bad_cookie_and_deleted(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    # The default cap went from 4 to 2: a three-cookie session of before reads as empty and is deleted.
    three = client_for(chunked=True, max_chunks=3)
    three.post("/write", json={"blob": noise(9000)})
    client = client_for(chunked=True)
    client.cookies = three.cookies
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = client.get("/read")
    assert response.json() == {}
    assert "cookie 'session' is in 3 chunks, more than the 2 allowed" in caplog.text
    assert names(response) == ["session", "session.1", "session.2"]
    assert not client.cookies


def test_a_chunk_from_another_session_is_a_bad_cookie(client_for: AppFactory) -> None:
    client = client_for(chunked=True)
    client.post("/write", json={"blob": noise(6000, seed=2)})
    other = client.cookies["session.1"]
    client.post("/write", json={"blob": noise(6000, seed=3)})
    first = client.cookies["session"]
    client.cookies.clear()
    assert client.get("/read", headers={"cookie": f"session={first}; session.1={other}"}).json() == {}


def test_past_max_chunks_the_size_policy_applies(client_for: AppFactory, caplog: pytest.LogCaptureFixture) -> None:
    # Issue 27 item 6: the message read "would need 3 cookies, more than max_chunks=2,, over the browser limit".
    expected = (
        "Session cookie 'session' would take 3 cookies of at most 4096 bytes; max_chunks allows 2: store less in "
        "request.session (keep an id and load the rest server-side)."
    )
    with pytest.raises(SessionCookieTooLarge) as raised:
        client_for(chunked=True).post("/write", json={"blob": noise(9000)})
    assert str(raised.value) == expected
    client = client_for(chunked=True, on_oversize="log")
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        response = client.post("/write", json={"blob": noise(9000)})
    assert set_cookie_headers(response) == []
    assert caplog.messages == [f"{expected} The response keeps the client's previous session cookie."]


def test_without_chunked_a_large_session_is_refused_as_before(client_for: AppFactory) -> None:
    with pytest.raises(SessionCookieTooLarge):
        client_for().post("/write", json={"blob": noise(6000)})


@pytest.mark.skipif(not STARLETTE_MARKS_ACCESS, reason="Starlette before 1.0 loads every session")
def test_a_request_that_does_not_use_the_session_verifies_nothing() -> None:
    client, signer, _ = build(lambda request: None, chunked=True)
    response = client.get("/")
    assert signer.verified == 0
    assert set_cookie_headers(response) == []


def test_chunked_with_set_expiry_and_timeouts(client_for: AppFactory) -> None:
    client = client_for(chunked=True, idle_timeout=900, absolute_timeout=3600)
    response = client.post("/write", json={"blob": noise(6000)})
    assert names(response) == ["session", "session.1"]
    assert all("Max-Age=900;" in header for header in set_cookie_headers(response))
    assert client.get("/read").json() == {"blob": noise(6000)}
