"""A session's cookies as Morsels (``session_cookies.SessionMorsels``): the core's cookie rules for Django."""

from __future__ import annotations

from http.cookies import Morsel, SimpleCookie

from blake2sign_web.sessions.cookies import MorselCookie, SessionMorsels


def morsels(**options: object) -> SessionMorsels:
    settings: dict[str, object] = {
        "path": "/",
        "domain": None,
        "secure": False,
        "httponly": True,
        "samesite": "Lax",
        "partitioned": False,
        "max_chunks": 0,
    }
    settings.update(options)
    return SessionMorsels("sessionid", **settings)  # type: ignore[arg-type]


def output(cookie: MorselCookie) -> str:
    jar: SimpleCookie = SimpleCookie()
    morsel: Morsel[str] = Morsel()
    name, value, attributes = cookie
    morsel.set(name, *jar.value_encode(value))
    dict.update(morsel, attributes)
    return morsel.OutputString()


def test_a_cookie_carries_its_lifetime_and_the_configured_attributes() -> None:
    (cookie,) = morsels().writes([("sessionid", "token")], {}, 60, chunked=False)
    written = output(cookie)
    assert written.startswith("sessionid=token; expires=")
    assert written.endswith("; HttpOnly; Max-Age=60; Path=/; SameSite=Lax")
    (browser_session,) = morsels().writes([("sessionid", "token")], {}, None, chunked=False)
    assert output(browser_session) == "sessionid=token; HttpOnly; Path=/; SameSite=Lax"


def test_a_deletion_is_written_as_djangos_delete_cookie_writes_it() -> None:
    deletion = 'sessionid=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/; SameSite=Lax'
    assert [output(cookie) for cookie in morsels().deletions({})] == [deletion]
    (none,) = morsels(samesite="None").deletions({})
    assert none[2]["secure"] is True  # browsers refuse SameSite=None without Secure
    (partitioned,) = morsels(partitioned=True).deletions({})
    assert partitioned[2]["secure"] is True  # and a Partitioned cookie without Secure
    assert morsels().deleted("__Host-sessionid")[2]["secure"] is True


def test_chunks_past_those_written_are_deleted_and_so_are_leftovers_once_chunking_is_off() -> None:
    sent = {"sessionid": "x", "sessionid.1": "y", "sessionid.2": "z"}
    chunked = morsels(max_chunks=3).writes([("sessionid", "a"), ("sessionid.1", "b")], sent, 60, chunked=True)
    assert [(name, value) for name, value, _ in chunked] == [
        ("sessionid", "a"),
        ("sessionid.1", "b"),
        ("sessionid.2", ""),
    ]
    assert [name for name, _, _ in morsels(max_chunks=3).deletions(sent)] == [
        "sessionid",
        "sessionid.1",
        "sessionid.2",
    ]
    leftover = {"sessionid": ".3.abc", "sessionid.1": "y", "sessionid.2": "z"}
    assert [name for name, _, _ in morsels().writes([("sessionid", "t")], leftover, 60, chunked=False)] == [
        "sessionid",
        "sessionid.1",
        "sessionid.2",
    ]
