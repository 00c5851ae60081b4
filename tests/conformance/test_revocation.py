"""Revocation, the same through every framework, in a real redis-server: logout ends a copied cookie, "log out
everywhere" refuses the user's existing sessions and not a later login, and the records live as long in both.
"""

from __future__ import annotations

from typing import Any

import redis

from blake2sign_web import revocation
from tests.redis_server import RedisServer

from .drivers import USER_KEY, Driver
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


test_each_driver, test_frameworks_agree = conformance_tests(SCENARIOS)
