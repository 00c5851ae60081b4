"""CHUNKED: a session over one cookie goes out as ``sessionid``, ``sessionid.1``... through this project's middleware.

Only this project's middleware writes several cookies (Django's writes the session key, one cookie), so
CHUNKED with Django's middleware is refused (E022). Real servers' header limits: test_chunked_servers.py.
"""

from __future__ import annotations

import logging
import secrets
from http.cookies import SimpleCookie
from typing import Any

import django
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import AsyncClient, Client, override_settings

from blake2sign_web.django.sessions import SessionTooLarge

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, SUSPICIOUS, middleware_with, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
NAME = "sessionid"


#: MAX_CHUNKS over the default (2), for sessions of three and four cookies.
FOUR = {"SESSIONS": {"CHUNKED": True, "MAX_CHUNKS": 4}}


@pytest.fixture(autouse=True)
def chunked(settings: Any) -> None:
    """This project's middleware, CHUNKED with MAX_CHUNKS 4 (tests of the default, 2, say so)."""
    settings.MIDDLEWARE = middleware_with(OUR_MIDDLEWARE)
    settings.BLAKE2SIGN_WEB = FOUR


def blob(characters: int) -> str:
    """Text zstd cannot shrink: the session's size is about its length."""
    return secrets.token_urlsafe(characters)[:characters]


def set_cookie_lines(response: Any) -> dict[str, str]:
    """Each Set-Cookie line as the WSGI handler sends it (without "Set-Cookie: "), by cookie name."""
    return {name: morsel.output(header="").strip() for name, morsel in response.cookies.items()}


def written(response: Any) -> list[str]:
    return [name for name, morsel in response.cookies.items() if morsel["max-age"] != 0]


def deleted(response: Any) -> list[str]:
    return [name for name, morsel in response.cookies.items() if morsel["max-age"] == 0]


def test_a_session_that_fits_is_one_cookie_as_without_chunks(client: Client) -> None:
    response = run(client, ["__setitem__", "a", 1])
    assert written(response) == [NAME]
    assert signer().loads(response.cookies[NAME].value) == {"a": 1}  # no chunk header: the token itself


def test_a_large_session_goes_out_in_chunks_each_within_the_browser_limit(client: Client) -> None:
    data = blob(10_000)
    with override_settings(BLAKE2SIGN_WEB={}), pytest.raises(SessionTooLarge):  # without CHUNKED
        run(Client(), ["__setitem__", "blob", data])
    response = run(client, ["__setitem__", "blob", data])
    assert written(response) == [NAME, f"{NAME}.1", f"{NAME}.2"]
    lines = set_cookie_lines(response)
    assert all(len(line.encode()) <= 4096 for line in lines.values()), {k: len(v) for k, v in lines.items()}
    assert max(len(line) for line in lines.values()) > 4000  # filled, not split evenly into small ones
    assert response.cookies[NAME].value.startswith(".3.")
    for line in lines.values():  # every chunk carries the session cookie's attributes
        assert "; Secure" in line
        assert "; HttpOnly" in line
        assert "Max-Age=1209600" in line
    assert session_of(run(client))["blob"] == data  # the test client sends the three back


def test_a_session_that_shrinks_deletes_its_stale_chunks(client: Client) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    response = run(client, ["__delitem__", "blob"], ["__setitem__", "a", 1])
    assert written(response) == [NAME]
    assert sorted(deleted(response)) == [f"{NAME}.1", f"{NAME}.2"]
    assert response.cookies[f"{NAME}.1"]["path"] == "/"
    assert session_of(run(client)) == {"a": 1}
    assert client.cookies[f"{NAME}.1"].value == client.cookies[f"{NAME}.2"].value == ""  # the test client's jar


def test_a_session_from_three_chunks_to_two(client: Client) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    response = run(client, ["__setitem__", "blob", blob(6_000)])
    assert written(response) == [NAME, f"{NAME}.1"]
    assert deleted(response) == [f"{NAME}.2"]


def test_logout_deletes_every_chunk(client: Client) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    response = run(client, ["flush"])
    assert sorted(deleted(response)) == [NAME, f"{NAME}.1", f"{NAME}.2"]


def test_a_missing_chunk_is_an_empty_session_a_warning_and_the_chunks_deleted(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    del client.cookies[f"{NAME}.1"]
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = run(client, ["get", "blob"])
    assert session_of(response) == {}
    [warning] = [r for r in caplog.records if r.name == SUSPICIOUS]
    assert (
        warning.getMessage()
        == "Session cookie rejected: cookie 'sessionid' is in 3 chunks and 'sessionid.1' is missing."
    )
    assert sorted(deleted(response)) == [NAME, f"{NAME}.2"]


def test_chunks_without_their_first_cookie_are_an_empty_session_a_warning_and_deleted(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27 item 5: curl dropped "sessionid" (the shortest name, sent last) from a Cookie header near 8 KB.

    The rest read as no cookie: no warning, and "sessionid.1", "sessionid.2" were never deleted.
    """
    run(client, ["__setitem__", "blob", blob(10_000)])
    del client.cookies[NAME]
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        response = client.get("/untouched/")  # a view that never reads the session: deleted all the same
    assert [r.getMessage() for r in caplog.records if r.name == SUSPICIOUS] == [
        "Session cookie rejected: cookie 'sessionid' is missing and 'sessionid.1', 'sessionid.2' of it came without "
        "it (a client that caps its Cookie header, such as curl at about 8 KB, drops cookies)."
    ]
    # "sessionid" too: the client dropped it from its Cookie header, and still holds it.
    assert sorted(deleted(response)) == [NAME, f"{NAME}.1", f"{NAME}.2"]
    assert written(response) == []
    assert session_of(run(client)) == {}


def test_a_session_written_over_an_incomplete_set_replaces_it(client: Client) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    del client.cookies[NAME]
    response = run(client, ["__setitem__", "a", 1])
    assert written(response) == [NAME]
    assert sorted(deleted(response)) == [f"{NAME}.1", f"{NAME}.2"]
    assert session_of(run(client)) == {"a": 1}


def test_more_chunks_than_max_chunks_are_an_empty_session_a_warning_and_deleted(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    # The default MAX_CHUNKS went from 4 to 2: a three-cookie session of before reads as empty and is deleted.
    run(client, ["__setitem__", "blob", blob(10_000)])
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"CHUNKED": True}}), caplog.at_level(logging.WARNING):
        response = run(client, ["get", "blob"])
    assert session_of(response) == {}
    assert "cookie 'sessionid' is in 3 chunks, more than the 2 allowed" in caplog.text
    assert sorted(deleted(response)) == [NAME, f"{NAME}.1", f"{NAME}.2"]


def test_a_chunk_of_another_session_fails_the_signature(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    run(client, ["__setitem__", "blob", blob(10_000)])
    other = Client()
    run(other, ["__setitem__", "blob", blob(10_000)])
    client.cookies[f"{NAME}.2"] = other.cookies[f"{NAME}.2"].value
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert session_of(run(client, ["get", "blob"])) == {}
    assert "Session cookie rejected: signature does not match" in caplog.text


def test_chunks_past_the_count_are_never_read_and_are_deleted_on_the_next_write(client: Client) -> None:
    data = blob(6_000)
    run(client, ["__setitem__", "blob", data])
    client.cookies[f"{NAME}.2"] = "left-over-from-a-longer-session"
    client.cookies[f"{NAME}.7"] = "x"
    assert session_of(run(client))["blob"] == data
    response = run(client, ["__setitem__", "b", 1])
    assert deleted(response) == [f"{NAME}.2", f"{NAME}.7"]


def test_over_max_chunks_is_the_oversize_policy(client: Client) -> None:
    # Issue 27 item 6: one message for both frameworks, naming the setting as the user writes it.
    with (
        override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"CHUNKED": True}}),
        pytest.raises(SessionTooLarge) as raised,
    ):
        run(client, ["__setitem__", "blob", blob(10_000)])
    assert str(raised.value) == (
        "Session cookie 'sessionid' would take 3 cookies of at most 4096 bytes; "
        "BLAKE2SIGN_WEB['SESSIONS']['MAX_CHUNKS'] allows 2: store less in the session (keep large data "
        "server-side, keyed by the user)."
    )
    with pytest.raises(SessionTooLarge, match=r"would take 5 cookies of at most 4096 bytes; .* allows 4:"):
        run(client, ["__setitem__", "blob", blob(4 * 4000)])
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"CHUNKED": True, "MAX_CHUNKS": 5}}):
        assert len(written(run(client, ["__setitem__", "blob", blob(4 * 4000)]))) == 5


def test_over_max_chunks_with_oversize_log_keeps_the_clients_cookies(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    data = blob(6_000)
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"CHUNKED": True, "MAX_CHUNKS": 4, "OVERSIZE": "log"}}):
        run(client, ["__setitem__", "blob", data])
        with caplog.at_level(logging.ERROR, logger="blake2sign_web.django.sessions"):
            response = run(client, ["__setitem__", "blob", blob(5 * 4000)])
        assert not response.cookies  # nothing set, nothing deleted
        assert "would take 6 cookies of at most 4096 bytes; BLAKE2SIGN_WEB['SESSIONS']['MAX_CHUNKS'] allows 4" in (
            caplog.text
        )
        assert session_of(run(client))["blob"] == data


def test_a_session_cookie_written_before_chunking_still_loads(client: Client) -> None:
    client.cookies[NAME] = signer().dumps({"a": 1})
    assert session_of(run(client)) == {"a": 1}


def test_chunks_of_an_encrypted_session(client: Client) -> None:
    data = blob(4_000)  # not compressed when encrypted: about 5,400 characters of token
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"CHUNKED": True, "ENCRYPT": True}}):  # two: the default
        response = run(client, ["__setitem__", "blob", data])
        assert written(response) == [NAME, f"{NAME}.1"]
        assert response.cookies[NAME].value.startswith(".2.x")
        assert session_of(run(client))["blob"] == data


def test_host_prefixed_chunks(client: Client) -> None:
    with override_settings(SESSION_COOKIE_NAME="__Host-sessionid"):
        response = run(client, ["__setitem__", "blob", blob(6_000)])
        assert written(response) == ["__Host-sessionid", "__Host-sessionid.1"]
        line = set_cookie_lines(response)["__Host-sessionid.1"]
        assert "; Secure" in line
        assert "; Path=/" in line


@pytest.mark.skipif(django.VERSION < (5, 0), reason="Django 4.2 has no async session API")
def test_chunks_in_an_async_stack() -> None:
    async def scenario() -> list[Any]:
        client = AsyncClient()
        data = blob(6_000)
        response = await client.post("/aops/", {"ops": [["aset", "blob", data]]}, content_type="application/json")
        assert written(response) == [NAME, f"{NAME}.1"]
        response = await client.post("/aops/", {"ops": [["aget", "blob"]]}, content_type="application/json")
        return [response.json()["results"] == [data], written(response)]

    assert async_to_sync(scenario)() == [True, []]


def test_the_cookie_header_the_browser_sends_back(client: Client) -> None:
    """What reaches the server: every chunk in one Cookie header, which servers bound (see the server tests)."""
    response = run(client, ["__setitem__", "blob", blob(10_000)])
    header = "; ".join(f"{name}={morsel.value}" for name, morsel in response.cookies.items())
    parsed = SimpleCookie(header)
    assert sorted(parsed) == [NAME, f"{NAME}.1", f"{NAME}.2"]
    assert len(header) > 2 * 4096


# Settings -----------------------------------------------------------------------------------------------


def check_ids(**overrides: Any) -> set[str]:
    with override_settings(**overrides):
        return {m.id for m in run_checks() if m.id and m.id.startswith("blake2sign_web")}


def test_chunked_with_djangos_middleware_is_e022_and_stops_the_engine() -> None:
    overrides = {"MIDDLEWARE": [DJANGO_MIDDLEWARE if m == OUR_MIDDLEWARE else m for m in settings.MIDDLEWARE]}
    assert check_ids(**overrides) == {"blake2sign_web.E022"}
    with override_settings(**overrides), pytest.raises(ImproperlyConfigured, match=r"'CHUNKED'\] needs this project"):
        run(Client(), ["__setitem__", "a", 1])
    assert check_ids(**overrides, BLAKE2SIGN_WEB={}) == set()


@pytest.mark.parametrize(
    "sessions",
    [{"CHUNKED": "yes"}, {"CHUNKED": True, "MAX_CHUNKS": 1}, {"CHUNKED": True, "MAX_CHUNKS": 10}, {"MAX_CHUNKS": 3.0}],
)
def test_bad_chunk_settings_are_e021_and_stop_the_engine_and_the_middleware(sessions: dict[str, Any]) -> None:
    assert check_ids(BLAKE2SIGN_WEB={"SESSIONS": sessions}) == {"blake2sign_web.E021"}
    if "MAX_CHUNKS" in sessions:  # one range and one wording with Starlette's, from the core
        with override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions}):
            [message] = [m.msg for m in run_checks() if m.id == "blake2sign_web.E021"]
        assert message == (
            "BLAKE2SIGN_WEB['SESSIONS']['MAX_CHUNKS'] must be an int from 2 to 9 (cookies of one session); "
            f"got {sessions['MAX_CHUNKS']!r}."
        )
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions}), pytest.raises(ImproperlyConfigured, match="CHUNK"):
        Client().get("/untouched/")  # the middleware refuses to start: nothing reads the session here
