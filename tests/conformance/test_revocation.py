"""Revocation, the same through every framework, in a real redis-server: logout ends a copied cookie, "log out
everywhere" refuses the user's existing sessions and not a later login, and the records live as long in both.
"""

from __future__ import annotations

from typing import Any

import redis

from blake2sign_web.stores import revocation
from tests.redis_server import RedisServer

from .drivers import USER_KEY, Driver, Response
from .scenario import Scenario, Start, conformance_tests, register

SCENARIOS: dict[str, Scenario] = {}
MAX_AGE = 3600
REDIS = {"fixtures": ("conformance_redis",)}


def revocable(start: Start, server: RedisServer) -> Any:
    server.start()
    server.flush()  # each driver starts with no records
    return start(revocation=server.url, max_age=MAX_AGE)


def ttl(server: RedisServer, pattern: str) -> int:
    with redis.Redis.from_url(server.url) as client:
        (key,) = client.keys(pattern)
        return int(client.ttl(key))


def log_in(driver: Driver, user: int) -> dict[str, str]:
    response = driver.request(["login", user], cookies={})
    assert response.status == 200, response.error
    return driver.held()


def who(driver: Driver, cookies: dict[str, str]) -> Any:
    response = driver.request(["get", USER_KEY], cookies=cookies)
    assert response.status == 200, response.error
    return response.results[0]


@register(SCENARIOS, **REDIS)
def scenario_logout_ends_a_copied_cookie(start: Start, server: RedisServer) -> Any:
    with revocable(start, server) as driver:
        browser = log_in(driver, 42)
        copy = dict(browser)
        assert who(driver, copy) == "42"
        logout = driver.request(["logout"], cookies=browser)
        assert logout.cookies() == {"session": {"deleted": True, "path": "/"}}
        response = driver.request(["get", USER_KEY], cookies=copy)
        assert response.results == [None]
        assert response.cookies() == {"session": {"deleted": True, "path": "/"}}  # a refused cookie is deleted
        record = ttl(server, "*sid:*")
        assert abs(record - revocation.record_ttl(MAX_AGE, revocation.DEFAULT_CLOCK_SKEW)) <= 2, record
        return {"logout": logout.cookies(), "copy": response.cookies(), "record": {"ttl": record}}


@register(SCENARIOS, **REDIS)
def scenario_a_login_ends_the_anonymous_session_it_replaces(start: Start, server: RedisServer) -> Any:
    with revocable(start, server) as driver:
        driver.request(["set", "cart", 1], cookies={})
        anonymous = driver.held()
        driver.request(["login", 42])
        assert driver.read() == {"cart": 1, USER_KEY: "42"}
        assert driver.request(["get", "cart"], cookies=anonymous).results == [None]
        return {"record": {"ttl": ttl(server, "*sid:*")}}


@register(SCENARIOS, **REDIS)
def scenario_log_out_everywhere_keeping_this_session(start: Start, server: RedisServer) -> Any:
    with revocable(start, server) as driver:
        laptop, phone = log_in(driver, 42), log_in(driver, 42)
        other_user = log_in(driver, 7)
        response = driver.request(["everywhere", 42, True], cookies=laptop)
        assert response.status == 200, response.error
        laptop = driver.held()
        outcome = {"laptop": who(driver, laptop), "phone": who(driver, phone), "other": who(driver, other_user)}
        assert outcome == {"laptop": "42", "phone": None, "other": "7"}
        tablet = log_in(driver, 42)  # a login after the cut-off sticks
        outcome["tablet"] = [who(driver, tablet), who(driver, tablet)]
        assert outcome["tablet"] == ["42", "42"]
        record = ttl(server, "*user:42")
        longest = MAX_AGE + revocation.DEFAULT_CLOCK_SKEW + revocation.RECORD_MARGIN
        assert longest - 5 <= record <= longest, record
        return {**outcome, "record": {"ttl": record}}


@register(SCENARIOS, **REDIS)
def scenario_log_out_everywhere_including_this_session(start: Start, server: RedisServer) -> Any:
    with revocable(start, server) as driver:
        laptop, phone = log_in(driver, 42), log_in(driver, 42)
        response = driver.request(["everywhere", 42, False], cookies=laptop)
        assert response.status == 200, response.error
        outcome = {"laptop": who(driver, laptop), "phone": who(driver, phone)}
        assert outcome == {"laptop": None, "phone": None}
        assert who(driver, log_in(driver, 42)) == "42"
        return outcome


@register(SCENARIOS, **REDIS)
def scenario_log_out_everywhere_including_this_session_deletes_its_cookie_at_once(
    start: Start, server: RedisServer
) -> Any:
    with revocable(start, server) as driver:
        laptop = log_in(driver, 42)
        response = driver.request(["everywhere", 42, False], cookies=laptop, report=False)
        assert response.status == 200, response.error
        assert response.cookies() == {"session": {"deleted": True, "path": "/"}}
        return response.cookies()


@register(SCENARIOS, **REDIS)
def scenario_logging_another_user_out_everywhere_leaves_the_callers_session(start: Start, server: RedisServer) -> Any:
    with revocable(start, server) as driver:
        victim = log_in(driver, 42)
        admin = log_in(driver, 1)
        response = driver.request(["everywhere", 42, False], cookies=admin, report=False)
        assert response.status == 200, response.error
        outcome = {"admin": who(driver, driver.held()), "victim": who(driver, victim)}
        assert outcome == {"admin": "1", "victim": None}
        return outcome


def kept(response: Response, sent: dict[str, str]) -> bool:
    """Whether the client holds, after ``response``, the session cookie it sent: none set, or the same value (Django's
    own middleware sets the cookie again after any save, with the key it has: the client's)."""
    cookie = response.cookie()
    return cookie is None or (not cookie.deleted and cookie.value == sent["session"])


def read_while_down(driver: Driver, server: RedisServer, browser: dict[str, str]) -> dict[str, Any]:
    """A read and a write of the logged-in session ``browser`` while Redis is stopped, then a read once it is back."""
    server.stop()
    try:
        read = driver.request(["get", USER_KEY], cookies=browser)
        write = driver.request(["set", "cart", 1], cookies=browser)
    finally:
        server.start()
    assert read.status == 200, read.error
    assert write.status == 200, write.error
    return {
        "read": {"results": read.results, "cookie kept": kept(read, browser)},
        "write": {"results": write.results, "cookie kept": kept(write, browser)},
        "back": who(driver, browser),
    }


@register(SCENARIOS, **REDIS)
def scenario_a_store_that_is_down_refuses_the_session_and_keeps_its_cookie(start: Start, server: RedisServer) -> Any:
    server.start()
    server.flush()
    with start(revocation=server.url, max_age=MAX_AGE) as driver:
        outcome = read_while_down(driver, server, log_in(driver, 42))
    # "closed" (the default): read as empty, nothing written (the client keeps its cookie), the session back after.
    assert outcome == {
        "read": {"results": [None], "cookie kept": True},
        "write": {"results": [None], "cookie kept": True},
        "back": "42",
    }
    return outcome


@register(SCENARIOS, **REDIS)
def scenario_a_store_that_is_down_fails_open_when_told_to(start: Start, server: RedisServer) -> Any:
    server.start()
    server.flush()
    with start(revocation=server.url, max_age=MAX_AGE, revocation_unavailable="open") as driver:
        outcome = read_while_down(driver, server, log_in(driver, 42))
    # "open": the session is read unchecked, and a change to it is written (a new cookie).
    assert outcome == {
        "read": {"results": ["42"], "cookie kept": True},
        "write": {"results": [None], "cookie kept": False},
        "back": "42",
    }
    return outcome


test_each_driver, test_frameworks_agree = conformance_tests(SCENARIOS)
