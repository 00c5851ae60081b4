"""Session behaviour, the same through every framework: the basic contract, set_expiry, idle and absolute
timeouts, bad cookies, key rotation, migration from the incumbents' cookies, typed and encrypted values,
oversize sessions, cookie attributes and prefixes.

Time moves by the cookies the client sends (tokens signed with a clock in the past), never by sleeping.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from blake2sign_web import BadSignature

from .drivers import OLD_SECRET, Driver, Response
from .scenario import Scenario, Start, conformance_tests, register

SCENARIOS: dict[str, Scenario] = {}
scenario = register


def bad_cookie_handled(driver: Driver, response: Response) -> str:
    """A refused cookie: what each framework's contract does with it (DIFFERENCES["bad cookie kept or deleted"]).

    Django's middleware deletes the cookie of a session that was read and is empty; Starlette's leaves it.
    """
    cookie = response.cookie("session")
    if driver.framework == "django":
        assert cookie is not None
        assert cookie.deleted, response.set_cookies
    else:
        assert cookie is None, response.set_cookies
    return "refused"


def emptied_handled(driver: Driver, response: Response) -> str:
    """A session emptied but not flushed: what each framework's contract does (DIFFERENCES["clear"]).

    Django's clear() keeps the session, so its cookie now holds an empty one; Starlette's deletes the cookie.
    """
    cookie = response.cookie("session")
    assert cookie is not None, response.set_cookies
    if driver.framework == "django":
        assert not cookie.deleted
        assert driver.read_token(cookie.value).value == {}, cookie
    else:
        assert cookie.deleted, cookie
    return "emptied"


# --- The basic contract ---------------------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_a_write_sets_the_cookie_and_a_read_gets_it_back(start: Start) -> Any:
    with start() as driver:
        written = driver.request(["set", "user", "ada"], ["set", "cart", [1, 2]])
        assert written.status == 200
        cookie = written.cookie("session")
        assert cookie is not None
        assert not cookie.deleted
        read = driver.request(["get", "user"])
        assert read.results == ["ada"]
        assert read.set_cookies == []  # read, unchanged: no new cookie
        return {"written": written.cookies(), "read": read.session}


@scenario(SCENARIOS)
def scenario_a_request_without_a_cookie_that_only_reads_sets_none(start: Start) -> Any:
    with start() as driver:
        response = driver.request(["get", "user"])
        assert response.results == [None]
        assert response.set_cookies == []
        return response.session


@scenario(SCENARIOS)
def scenario_clear_empties_the_session(start: Start) -> Any:
    with start() as driver:
        driver.request(["set", "user", "ada"])
        response = driver.request(["clear"])
        return {"response": emptied_handled(driver, response), "after": driver.read()}


@scenario(SCENARIOS)
def scenario_flush_deletes_the_cookie(start: Start) -> Any:
    """DIFFERENCES["flush"]: Starlette's clear()."""
    with start() as driver:
        driver.request(["set", "user", "ada"])
        response = driver.request(["flush"])
        assert response.cookies() == {"session": {"deleted": True, "path": "/"}}
        return {"response": response.cookies(), "after": driver.read(), "held": driver.held()}


@scenario(SCENARIOS)
def scenario_deleting_a_key_keeps_the_others(start: Start) -> Any:
    with start() as driver:
        driver.request(["set", "a", 1], ["set", "b", 2])
        response = driver.request(["delete", "a"], ["delete", "missing"])
        assert response.results == [1, None]
        assert driver.read() == {"b": 2}
        return {"response": response.cookies(), "after": driver.read()}


@scenario(SCENARIOS)
def scenario_emptying_a_session_by_its_keys(start: Start) -> Any:
    with start() as driver:
        driver.request(["set", "a", 1])
        response = driver.request(["delete", "a"])
        return {"response": emptied_handled(driver, response), "after": driver.read()}


# --- set_expiry ------------------------------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_a_cookie_past_max_age_within_its_own_expiry_is_read(start: Start) -> Any:
    with start(max_age=60) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=120, expiry=3600))
        response = driver.request(["get", "user"], ["accessors"])
        assert response.results[0] == "ada"
        assert 3600 - 2 <= response.results[1]["age"] <= 3600
        return response.session


@scenario(SCENARIOS)
def scenario_a_cookie_past_its_own_expiry_is_refused(start: Start) -> Any:
    with start() as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=120, expiry=60))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        return {"session": response.session, "cookie": bad_cookie_handled(driver, response)}


@scenario(SCENARIOS)
def scenario_a_cookie_past_max_age_is_refused(start: Start) -> Any:
    with start(max_age=60) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=120))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        return {"session": response.session, "cookie": bad_cookie_handled(driver, response)}


@scenario(SCENARIOS)
def scenario_set_expiry_past_what_a_token_can_carry_is_refused(start: Start) -> Any:
    with start() as driver:
        response = driver.request(["set", "a", 1], ["set_expiry", 2**32])
        assert isinstance(response.error, ValueError), response.error
        assert "2106-02-07" in str(response.error)
        return type(response.error).__name__


@scenario(SCENARIOS)
def scenario_set_expiry_none_after_seconds_goes_back_to_max_age(start: Start) -> Any:
    with start(max_age=600) as driver:
        driver.request(["set", "a", 1], ["set_expiry", 60])
        response = driver.request(["set_expiry", None], ["accessors"])
        cookie = response.cookie("session")
        assert cookie is not None
        assert cookie.attributes["max-age"] == 600
        return {"cookies": response.cookies(), "accessors": response.results[-1]["age"]}


# --- Idle and absolute timeouts ----------------------------------------------------------------------------

IDLE = 900
ABSOLUTE = 3600


@scenario(SCENARIOS)
def scenario_idle_a_cookie_not_reissued_for_longer_is_refused_and_deleted(start: Start) -> Any:
    with start(idle_timeout=IDLE) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=IDLE + 60))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        assert response.cookies() == {"session": {"deleted": True, "path": "/"}}
        return response.cookies()


@scenario(SCENARIOS)
def scenario_idle_a_read_after_a_quarter_reissues_the_cookie(start: Start) -> Any:
    with start(idle_timeout=IDLE) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=IDLE // 4 + 60))
        response = driver.request(["get", "user"])
        assert response.results == ["ada"]
        cookie = response.cookie("session")
        assert cookie is not None
        assert cookie.attributes["max-age"] == IDLE
        assert driver.read_token(cookie.value).issued_at >= response.received - 5  # issued now
        return response.cookies()


@scenario(SCENARIOS)
def scenario_idle_a_read_before_a_quarter_reissues_nothing(start: Start) -> Any:
    with start(idle_timeout=IDLE) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=IDLE // 4 - 60))
        response = driver.request(["get", "user"])
        assert response.results == ["ada"]
        assert response.set_cookies == []
        return response.cookies()


@scenario(SCENARIOS)
def scenario_absolute_a_session_begun_longer_ago_is_refused_and_deleted(start: Start) -> Any:
    with start(absolute_timeout=ABSOLUTE) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=10, started_ago=ABSOLUTE + 60))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        assert response.cookies() == {"session": {"deleted": True, "path": "/"}}
        return response.cookies()


@scenario(SCENARIOS)
def scenario_absolute_a_write_keeps_the_start(start: Start) -> Any:
    with start(absolute_timeout=ABSOLUTE) as driver:
        driver.put("session", driver.sign({"user": "ada"}, ago=10, started_ago=1000))
        response = driver.request(["set", "n", 1], ["accessors"])
        cookie = response.cookie("session")
        assert cookie is not None
        assert ABSOLUTE - 1000 - 2 <= cookie.attributes["max-age"] <= ABSOLUTE - 1000
        assert ABSOLUTE - 1000 - 2 <= response.results[-1]["age"] <= ABSOLUTE - 1000
        return {"cookies": response.cookies(), "age": response.results[-1]["age"], "read": driver.read()}


@scenario(SCENARIOS)
def scenario_absolute_a_login_restarts_the_clock(start: Start) -> Any:
    with start(absolute_timeout=ABSOLUTE) as driver:
        driver.put("session", driver.sign({"cart": 1}, ago=10, started_ago=1000))
        response = driver.request(["login", 42], ["accessors"])
        cookie = response.cookie("session")
        assert cookie is not None
        assert ABSOLUTE - 2 <= cookie.attributes["max-age"] <= ABSOLUTE
        return {"cookies": response.cookies(), "session": response.session}


# --- Bad cookies -------------------------------------------------------------------------------------------


def _bad_cookies(driver: Driver) -> dict[str, str]:
    good = driver.sign({"user": "ada"})
    return {
        "garbage": "this-is-not-a-token",
        "wrong signature": driver.sign({"user": "ada"}, secret="another-secret-0123456789abcdefghij"),
        "tampered": good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB"),
        "truncated": good[: len(good) // 2],
        "too long": "0" + "A" * 5000 + "." + "A" * 43,
        "dots": "0.." + "." * 50,
        "from the future": driver.sign({"user": "ada"}, ago=-3600),
    }


@scenario(SCENARIOS, fixtures=("caplog",))
def scenario_every_bad_cookie_reads_as_an_empty_session_with_a_warning(
    start: Start, caplog: pytest.LogCaptureFixture
) -> Any:
    outcome = {}
    with start() as driver:
        for kind, cookie in _bad_cookies(driver).items():
            caplog.clear()
            with caplog.at_level(logging.WARNING):
                response = driver.request(["get", "user"], cookies={"session": cookie})
            assert response.status == 200, (kind, response.error)
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]  # DIFFERENCES["logger"]
            assert len(warnings) == 1, (kind, [r.getMessage() for r in caplog.records])
            assert cookie[:20] not in warnings[0].getMessage()  # the token is never logged
            outcome[kind] = {"session": response.session, "cookie": bad_cookie_handled(driver, response)}
    return outcome


@scenario(SCENARIOS)
def scenario_a_bad_cookie_then_a_login_writes_a_new_session(start: Start) -> Any:
    with start() as driver:
        driver.put("session", "this-is-not-a-token")
        response = driver.request(["set", "user", "ada"])
        cookie = response.cookie("session")
        assert cookie is not None
        assert not cookie.deleted
        return {"cookies": response.cookies(), "read": driver.read()}


# --- Key rotation ------------------------------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_a_cookie_of_a_fallback_secret_is_read_and_reissued(start: Start) -> Any:
    with start(fallback_secrets=[OLD_SECRET]) as driver:
        driver.put("session", driver.sign({"user": "ada"}, secret=OLD_SECRET))
        response = driver.request(["get", "user"])
        assert response.results == ["ada"]
        cookie = response.cookie("session")
        assert cookie is not None
        assert not cookie.deleted
        assert driver.read_token(cookie.value).value == {"user": "ada"}  # under the current secret alone
        return {"cookies": response.cookies(), "session": response.session}


@scenario(SCENARIOS, compare=False)
def scenario_a_cookie_of_a_fallback_secret_on_a_request_that_does_not_read_it(start: Start) -> Any:
    # Each framework's contract (DIFFERENCES["re-issued unread"]): Starlette's middleware sends a session's
    # cookie on every response, so a rotated one is re-signed at once; Django loads a session only when used.
    with start(fallback_secrets=[OLD_SECRET]) as driver:
        driver.put("session", driver.sign({"user": "ada"}, secret=OLD_SECRET))
        response = driver.request(report=False)
        cookie = response.cookie("session")
        if start.kind == "starlette":
            assert cookie is not None
            assert driver.read_token(cookie.value).value == {"user": "ada"}
        else:
            assert cookie is None
        return response.cookies()


@scenario(SCENARIOS)
def scenario_a_cookie_of_a_retired_secret_is_refused(start: Start) -> Any:
    with start() as driver:
        driver.put("session", driver.sign({"user": "ada"}, secret=OLD_SECRET))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        return {"session": response.session, "cookie": bad_cookie_handled(driver, response)}


# --- Migration from the incumbents' cookies -------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_an_incumbent_cookie_is_read_and_reissued_with_migration_on(start: Start) -> Any:
    with start(migrate=True) as driver:
        driver.put("session", driver.incumbent_cookie({"user": "ada", "cart": [1, 2]}))
        response = driver.request(["get", "user"])
        assert response.results == ["ada"]
        cookie = response.cookie("session")
        assert cookie is not None
        assert driver.read_token(cookie.value).value == {"user": "ada", "cart": [1, 2]}  # this project's format
        return {"cookies": response.cookies(), "session": response.session, "read": driver.read()}


@scenario(SCENARIOS, compare=False)
def scenario_an_incumbent_cookie_on_a_request_that_does_not_read_it(start: Start) -> Any:
    # As for a fallback secret's cookie (DIFFERENCES["re-issued unread"]).
    with start(migrate=True) as driver:
        driver.put("session", driver.incumbent_cookie({"user": "ada"}))
        response = driver.request(report=False)
        cookie = response.cookie("session")
        if start.kind == "starlette":
            assert cookie is not None
            assert driver.read_token(cookie.value).value == {"user": "ada"}
        else:
            assert cookie is None
        return response.cookies()


@scenario(SCENARIOS)
def scenario_an_incumbent_cookie_is_refused_with_migration_off(start: Start) -> Any:
    with start() as driver:
        driver.put("session", driver.incumbent_cookie({"user": "ada"}))
        response = driver.request(["get", "user"])
        assert response.results == [None]
        return {"session": response.session, "cookie": bad_cookie_handled(driver, response)}


# --- Typed and encrypted values ------------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_typed_values_read_back_as_themselves(start: Start) -> Any:
    with start(typed=True) as driver:
        driver.request(["set_typed", "values"])
        response = driver.request(["types", "values"])
        assert response.results[0]["equal"] is True, response.results
        return response.results


@scenario(SCENARIOS, compare=False)
def scenario_a_value_json_cannot_hold_names_the_typed_option(start: Start) -> Any:
    with start() as driver:
        response = driver.request(["set_typed", "values"])
        assert response.status == 500
        assert isinstance(response.error, TypeError), response.error
        assert driver.spelling("typed") in str(response.error), str(response.error)
        return str(response.error)


@scenario(SCENARIOS)
def scenario_encrypted_sessions_read_back_and_hide_their_data(start: Start) -> Any:
    with start(encrypt=True) as driver:
        written = driver.request(["set", "user", "ada"])
        cookie = written.cookie("session")
        assert cookie is not None
        assert driver.read_token(cookie.value).value == {"user": "ada"}
        with pytest.raises(BadSignature, match=r"(?i)encrypt"):
            driver.read_token(cookie.value, encrypt=False, decrypt=False)  # not readable by a signing-only reader
        return {"written": written.cookies(), "read": driver.read()}


@scenario(SCENARIOS)
def scenario_a_signed_cookie_is_reissued_encrypted_once_encryption_is_on(start: Start) -> Any:
    with start(encrypt=True) as driver:
        driver.put("session", driver.sign({"user": "ada"}, encrypt=False))
        response = driver.request(["get", "user"])
        assert response.results == ["ada"]
        cookie = response.cookie("session")
        assert cookie is not None
        assert driver.read_token(cookie.value).value == {"user": "ada"}
        with pytest.raises(BadSignature, match=r"(?i)encrypt"):
            driver.read_token(cookie.value, encrypt=False, decrypt=False)
        return response.cookies()


# --- Oversize ------------------------------------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_a_session_over_the_cookie_limit_raises(start: Start) -> Any:
    with start() as driver:
        response = driver.request(["set_blob", "blob", 5000])
        assert response.status == 500
        assert isinstance(response.error, ValueError), response.error
        assert "4096" in str(response.error)
        return {"status": response.status, "held": driver.held()}


@scenario(SCENARIOS)
def scenario_a_session_over_the_cookie_limit_under_log_keeps_the_previous_cookie(start: Start) -> Any:
    """DIFFERENCES["oversize 'log' under Django's middleware"]: the Set-Cookie is not compared, what the client
    holds afterwards is."""
    with start(on_oversize="log") as driver:
        driver.request(["set", "user", "ada"])
        response = driver.request(["set_blob", "blob", 5000])
        assert response.status == 200, response.error
        return {"status": response.status, "read": driver.read()}


# --- Cookie attributes and prefixes --------------------------------------------------------------------


@scenario(SCENARIOS)
def scenario_default_attributes(start: Start) -> Any:
    with start() as driver:
        cookie = driver.request(["set", "a", 1]).cookie("session")
        assert cookie is not None
        assert cookie.neutral() == {
            "deleted": False,
            "path": "/",
            "max-age": 14 * 24 * 3600,
            "httponly": True,
            "samesite": "lax",
        }
        return cookie.neutral()


@scenario(SCENARIOS)
def scenario_secure_strict_domain_and_path(start: Start) -> Any:
    with start(secure=True, same_site="strict", domain="example.com", path="/app") as driver:
        written = driver.request(["set", "a", 1]).cookie("session")
        assert written is not None
        assert written.neutral() == {
            "deleted": False,
            "path": "/app",
            "domain": "example.com",
            "max-age": 14 * 24 * 3600,
            "httponly": True,
            "samesite": "strict",
            "secure": True,
        }
        deleted = driver.request(["flush"]).cookie("session")
        assert deleted is not None
        assert deleted.neutral() == {"deleted": True, "path": "/app", "domain": "example.com"}
        return {"written": written.neutral(), "deleted": deleted.neutral()}


@scenario(SCENARIOS)
def scenario_samesite_none_with_secure(start: Start) -> Any:
    with start(secure=True, same_site="none") as driver:
        cookie = driver.request(["set", "a", 1]).cookie("session")
        assert cookie is not None
        assert cookie.neutral()["samesite"] == "none"
        assert cookie.neutral()["secure"] is True
        return cookie.neutral()


@scenario(SCENARIOS)
def scenario_a_host_prefixed_cookie(start: Start) -> Any:
    with start(cookie_name="__Host-sid", secure=True) as driver:
        response = driver.request(["set", "a", 1])
        assert [c.name for c in response.set_cookies] == ["session"]  # the configured name, neutral
        assert response.set_cookies[0].attributes.get("path") == "/"
        assert "domain" not in response.set_cookies[0].attributes
        assert driver.jar.keys() == {"__Host-sid"}
        return {"cookies": response.cookies(), "read": driver.read()}


@scenario(SCENARIOS, features={"partitioned"})
def scenario_partitioned(start: Start) -> Any:
    with start(secure=True, same_site="none", partitioned=True) as driver:
        cookie = driver.request(["set", "a", 1]).cookie("session")
        assert cookie is not None
        assert cookie.attributes.get("partitioned") is True
        return cookie.neutral()


@scenario(SCENARIOS, features={"partitioned"})
def scenario_partitioned_deletion_is_partitioned_and_secure(start: Start) -> Any:
    """A partitioned cookie is deleted only by a partitioned Set-Cookie (CHIPS keys it by the top-level site),
    which browsers accept only when Secure."""
    with start(secure=True, same_site="none", partitioned=True) as driver:
        driver.request(["set", "a", 1])
        deleted = driver.request(["flush"]).cookie("session")
        assert deleted is not None
        assert deleted.deleted
        assert deleted.attributes.get("partitioned") is True
        assert deleted.attributes.get("secure") is True
        return deleted.neutral()


@scenario(SCENARIOS, features={"partitioned", "chunked"})
def scenario_partitioned_chunks(start: Start) -> Any:
    with start(secure=True, same_site="none", partitioned=True, chunked=True, max_chunks=3) as driver:
        response = driver.request(["set_blob", "blob", 5000])  # two cookies' worth, incompressible
        names = sorted(response.cookies())
        assert names == ["session", "session.1"]
        assert all(c.attributes.get("partitioned") is True for c in response.set_cookies)
        return names


def _start_up_error(start: Start, **options: Any) -> BaseException:
    """The error a configuration stops with, before any response (DIFFERENCES["when a configuration error..."])."""
    try:
        with start(**options) as driver:
            response = driver.request(["set", "a", 1])
    except Exception as error:
        return error
    assert response.error is not None, "the configuration was accepted"
    assert response.view is None
    return response.error


@scenario(SCENARIOS, compare=False)
def scenario_a_secure_prefix_without_secure_stops_start_up_naming_the_setting(start: Start) -> Any:
    for name in ("__Secure-sid", "__Host-sid"):
        error = _start_up_error(start, cookie_name=name)
        assert "must be Secure" in str(error)
        assert start.spelling("secure") in str(error), str(error)
    return None


@scenario(SCENARIOS, compare=False)
def scenario_a_host_prefix_with_a_domain_or_path_stops_start_up_naming_the_setting(start: Start) -> Any:
    error = _start_up_error(start, cookie_name="__Host-sid", secure=True, domain="example.com")
    assert start.spelling("domain") in str(error), str(error)
    error = _start_up_error(start, cookie_name="__Host-sid", secure=True, path="/app")
    assert start.spelling("path") in str(error), str(error)
    return None


@scenario(SCENARIOS, compare=False)
def scenario_samesite_none_without_secure_stops_start_up_naming_the_setting(start: Start) -> Any:
    error = _start_up_error(start, same_site="none")
    assert start.spelling("secure") in str(error), str(error)
    return None


test_each_driver, test_frameworks_agree = conformance_tests(SCENARIOS)
