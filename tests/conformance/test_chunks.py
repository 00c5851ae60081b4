"""Chunked sessions (``chunked``, Django's ``CHUNKED``): the same through every framework that has them.

Every missing, extra, altered or swapped chunk, a count over ``max_chunks``, a session that shrinks or
grows, one over the cap (both oversize policies), and the chunks a client still holds once chunking is
turned off. Django's own session middleware writes one cookie per session (DIFFERENCES["chunked needs our
Django middleware"]): these scenarios skip it.
"""

from __future__ import annotations

from typing import Any

from .drivers import Driver
from .scenario import Scenario, Start, conformance_tests, register

SCENARIOS: dict[str, Scenario] = {}
CHUNKED = {"features": {"chunked"}}
#: A session of this many incompressible characters takes two cookies, and three takes three.
TWO_COOKIES = 5000
THREE_COOKIES = 9000
GONE = {"deleted": True, "path": "/"}


def write_big(driver: Driver, size: int = TWO_COOKIES) -> dict[str, str]:
    """Give the client a chunked session (a user and a blob); what it holds then, by neutral name."""
    response = driver.request(["set", "user", "ada"], ["set_blob", "blob", size])
    assert response.status == 200, response.error
    return driver.held()


def altered(value: str) -> str:
    """``value`` with one character near its end changed (the shape kept)."""
    return value[:-5] + ("A" if value[-5] != "A" else "B") + value[-4:]


def read_back(driver: Driver, cookies: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    response = driver.request(["get", "user"], ["blob_length", "blob"], cookies=cookies)
    assert response.status == 200, response.error
    return response.results, response.cookies()


@register(SCENARIOS, **CHUNKED)
def scenario_a_large_session_is_written_in_chunks_and_read_back(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = write_big(driver)
        assert held.keys() == {"session", "session.1"}
        assert held["session"].startswith(".2.")
        results, cookies = read_back(driver, held)
        assert results == ["ada", TWO_COOKIES]
        assert cookies == {}
        return {"held": sorted(held), "results": results}


@register(SCENARIOS, **CHUNKED)
def scenario_three_chunks_within_max_chunks(start: Start) -> Any:
    with start(chunked=True, max_chunks=3) as driver:
        held = write_big(driver, THREE_COOKIES)
        assert held.keys() == {"session", "session.1", "session.2"}
        results, _ = read_back(driver, held)
        assert results == ["ada", THREE_COOKIES]
        return sorted(held)


@register(SCENARIOS, **CHUNKED)
def scenario_a_missing_chunk_empties_the_session_and_deletes_the_set(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = write_big(driver)
        results, cookies = read_back(driver, {"session": held["session"]})
        assert results == [None, 0]
        assert cookies == {"session": GONE}
        return cookies


@register(SCENARIOS, **CHUNKED)
def scenario_a_missing_first_cookie_empties_the_session_and_deletes_the_set(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = write_big(driver)
        results, cookies = read_back(driver, {"session.1": held["session.1"]})
        assert results == [None, 0]
        assert cookies == {"session": GONE, "session.1": GONE}
        return cookies


@register(SCENARIOS, **CHUNKED)
def scenario_a_missing_chunk_is_deleted_even_when_the_session_is_not_read(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = write_big(driver)
        response = driver.request(cookies={"session.1": held["session.1"]}, report=False)
        assert response.cookies() == {"session": GONE, "session.1": GONE}
        return response.cookies()


@register(SCENARIOS, **CHUNKED)
def scenario_an_altered_chunk_empties_the_session_and_deletes_the_set(start: Start) -> Any:
    """Django deleted such a set (its middleware deletes any empty session's cookies), Starlette kept it."""
    with start(chunked=True) as driver:
        held = write_big(driver)
        outcome = {}
        for name in ("session", "session.1"):
            results, cookies = read_back(driver, {**held, name: altered(held[name])})
            assert results == [None, 0], name
            assert cookies == {"session": GONE, "session.1": GONE}, name
            outcome[name] = cookies
        return outcome


@register(SCENARIOS, **CHUNKED)
def scenario_a_chunk_of_another_session_empties_the_session_and_deletes_the_set(start: Start) -> Any:
    with start(chunked=True) as driver:
        other = write_big(driver)
        held = write_big(driver)
        results, cookies = read_back(driver, {**held, "session.1": other["session.1"]})
        assert results == [None, 0]
        assert cookies == {"session": GONE, "session.1": GONE}
        return cookies


@register(SCENARIOS, **CHUNKED)
def scenario_a_count_over_max_chunks_empties_the_session_and_deletes_the_set(start: Start) -> Any:
    with start(chunked=True, max_chunks=3) as driver:
        held = write_big(driver, THREE_COOKIES)
    with start(chunked=True, max_chunks=2) as driver:
        results, cookies = read_back(driver, held)
        assert results == [None, 0]
        assert cookies == {"session": GONE, "session.1": GONE, "session.2": GONE}
        return cookies


@register(SCENARIOS, **CHUNKED)
def scenario_an_extra_chunk_is_ignored_then_deleted_by_the_next_write(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = {**write_big(driver), "session.2": "left-over"}
        results, cookies = read_back(driver, held)
        assert results == ["ada", TWO_COOKIES]
        assert cookies == {}
        written = driver.request(["set", "n", 1], cookies=held)
        assert written.cookies().keys() == {"session", "session.1", "session.2"}
        assert written.cookies()["session.2"] == GONE
        assert driver.held().keys() == {"session", "session.1"}
        return {"read": cookies, "written": sorted(written.cookies())}


@register(SCENARIOS, **CHUNKED)
def scenario_a_session_that_shrinks_to_one_cookie_deletes_its_chunks(start: Start) -> Any:
    with start(chunked=True) as driver:
        write_big(driver)
        response = driver.request(["delete", "blob"])
        cookies = response.cookies()
        assert cookies.keys() == {"session", "session.1"}
        assert cookies["session.1"] == GONE
        assert not cookies["session"]["deleted"]
        assert driver.read() == {"user": "ada"}
        return sorted(cookies)


@register(SCENARIOS, **CHUNKED)
def scenario_flushing_a_chunked_session_deletes_every_cookie(start: Start) -> Any:
    with start(chunked=True) as driver:
        write_big(driver)
        response = driver.request(["flush"])
        assert response.cookies() == {"session": GONE, "session.1": GONE}
        assert driver.held() == {}
        return response.cookies()


@register(SCENARIOS, compare=False, **CHUNKED)
def scenario_a_session_over_max_chunks_raises_naming_the_setting(start: Start) -> Any:
    with start(chunked=True) as driver:
        response = driver.request(["set_blob", "blob", THREE_COOKIES])
        assert response.status == 500
        assert isinstance(response.error, ValueError), response.error
        assert "would take 3 cookies" in str(response.error)
        assert f"{start.spelling('max_chunks')} allows 2" in str(response.error), str(response.error)
        return str(response.error)


@register(SCENARIOS, **CHUNKED)
def scenario_a_session_over_max_chunks_under_log_keeps_the_previous_session(start: Start) -> Any:
    with start(chunked=True, on_oversize="log") as driver:
        held = write_big(driver)
        response = driver.request(["set_blob", "blob", THREE_COOKIES])
        assert response.status == 200
        assert response.set_cookies == []
        assert driver.held() == held
        return {"cookies": response.cookies(), "read": sorted(driver.read())}


@register(SCENARIOS, **CHUNKED)
def scenario_chunks_left_when_chunking_is_turned_off_are_deleted(start: Start) -> Any:
    with start(chunked=True) as driver:
        held = write_big(driver)
    with start() as driver:
        read = driver.request(["get", "user"], cookies=held)
        assert read.results == [None]
        assert read.cookies() == {"session": GONE, "session.1": GONE}, read.cookies()
        written = driver.request(["set", "user", "bob"], cookies=held)
        assert written.status == 200, written.error
        assert written.cookies().keys() == {"session", "session.1"}
        assert not written.cookies()["session"]["deleted"]
        assert written.cookies()["session.1"] == GONE
        assert driver.read() == {"user": "bob"}
        return {"read": read.cookies(), "written": sorted(written.cookies())}


@register(SCENARIOS, compare=False, **CHUNKED)
def scenario_max_chunks_outside_2_to_9_stops_start_up_naming_the_setting(start: Start) -> Any:
    for value in (1, 10):
        try:
            with start(chunked=True, max_chunks=value) as driver:
                response = driver.request(["set", "a", 1])
            error: BaseException | None = response.error
        except Exception as raised:
            error = raised
        assert error is not None, value
        assert f"{start.spelling('max_chunks')} must be an int from 2 to 9" in str(error), str(error)
    return None


test_each_driver, test_frameworks_agree = conformance_tests(SCENARIOS)
