"""Every expiry accessor of both frameworks says what the Set-Cookie actually sent says (issue 27, item 7).

One scenario table (defaults, idle and absolute timeouts, ``set_expiry`` with seconds, a timedelta, a date,
0 and None, browser-session defaults, an expiry already past), run through every conformance driver
(drivers.py: Starlette's TestClient, the Django test client behind Django's SessionMiddleware and this
project's) and, for the async accessors, Django's AsyncClient behind this project's middleware. Each
request reads ``get_expiry_age()``, ``get_expiry_date()`` and ``get_expire_at_browser_close()`` in the view,
then the response's cookie must agree: ``Max-Age`` is the age, ``Expires`` (Django) and the response time
plus ``Max-Age`` are the date, and a browser-close session has neither. A second request that writes the
session again checks the same against the expiry and start restored from the cookie.

The accessors are read a moment before the middleware writes the cookie, so an end fixed in time (a date,
an absolute timeout) may be a second nearer by then: Max-Age may be one less than the age read, never more.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import django
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings as django_settings
from django.test import AsyncClient

from tests.hasher import HASHER

from .drivers import DJANGO_MIDDLEWARE, DRIVERS, OUR_DJANGO_MIDDLEWARE, TWO_WEEKS


@dataclass(frozen=True)
class Scenario:
    """A configuration, what the login request passes to set_expiry, and what the cookie must then say."""

    name: str
    #: What the view passes to set_expiry: ("seconds", n), ("timedelta", n), ("datetime_in", n), ("none",) or
    #: () for no call at all.
    expiry: tuple[Any, ...] = ()
    idle: int | None = None
    absolute: int | None = None
    #: The default cookie is a browser-session one: Django's SESSION_EXPIRE_AT_BROWSER_CLOSE = True; Starlette's
    #: max_age=None (which also drops the server's default age: only scenarios with a timeout use it).
    browser_default: bool = False
    #: get_expiry_age() on the login request (the server's limit, whether or not the cookie carries it).
    age: int = TWO_WEEKS
    browser_session: bool = False
    #: The session has ended: the cookie is deleted.
    ended: bool = False


SCENARIOS = [
    Scenario("default"),
    Scenario("idle", idle=4, age=4),
    Scenario("absolute", absolute=6, age=6),
    Scenario("idle-and-absolute", idle=4, absolute=3, age=3),
    Scenario("seconds", expiry=("seconds", 60), age=60),
    Scenario("seconds-beyond-the-default", expiry=("seconds", TWO_WEEKS * 2), age=TWO_WEEKS * 2),
    Scenario("seconds-under-idle", expiry=("seconds", 60), idle=4, age=4),
    Scenario("seconds-under-absolute", expiry=("seconds", 60), absolute=6, age=6),
    Scenario("timedelta", expiry=("timedelta", 90), age=90),
    Scenario("timedelta-under-idle", expiry=("timedelta", 90), idle=4, age=4),
    Scenario("datetime", expiry=("datetime_in", 120), age=120),
    Scenario("datetime-under-absolute", expiry=("datetime_in", 120), absolute=6, age=6),
    Scenario("browser-close", expiry=("seconds", 0), browser_session=True),
    Scenario("browser-close-under-idle", expiry=("seconds", 0), idle=4, age=4, browser_session=True),
    Scenario("browser-close-under-absolute", expiry=("seconds", 0), absolute=6, age=6, browser_session=True),
    Scenario("none", expiry=("none",), idle=4, age=4),
    Scenario("browser-default-under-idle", browser_default=True, idle=4, age=4, browser_session=True),
    Scenario("browser-default-with-seconds", browser_default=True, idle=40, expiry=("seconds", 30), age=30),
    Scenario("past", expiry=("seconds", -10), age=-10, ended=True),
]


@dataclass
class Answer:
    """What one request's view read from the accessors, and the session cookie its response set."""

    age: int | None
    date: float | None
    browser_close: bool
    #: The cookie's attributes, lower-cased names; None: the response set no session cookie.
    attributes: dict[str, str] | None
    #: When the response arrived (Unix time).
    received: float


# A framework runs one scenario: it yields the answer to the login request, then to a request that writes
# the session again.
Runner = Callable[[Scenario], Iterator[Answer]]


def _expiry_spec(scenario: Scenario) -> list[list[Any]]:
    """The scenario's set_expiry call as a neutral operation (drivers.OPERATIONS), or none."""
    kind, *value = scenario.expiry or ("",)
    if kind == "seconds":
        return [["set_expiry", value[0]]]
    if kind == "none":
        return [["set_expiry", None]]
    if kind:
        return [["set_expiry", {kind: value[0]}]]
    return []


def _driver_runner(kind: str) -> Runner:
    """A conformance driver (tests/conformance/drivers.py): the framework's real stack."""

    def run(scenario: Scenario) -> Iterator[Answer]:
        options: dict[str, Any] = {"idle_timeout": scenario.idle, "absolute_timeout": scenario.absolute}
        if scenario.browser_default:
            options["max_age"] = None
        with DRIVERS[kind](options).running() as driver:
            for ops in ([["set", "user", 42], *_expiry_spec(scenario)], [["set", "n", 1]]):
                response = driver.request(*ops, ["accessors"])
                assert response.status == 200, response.error
                cookie = response.cookie("session")
                attributes = None
                if cookie is not None:
                    attributes = {k: str(v) for k, v in cookie.attributes.items() if k in ("max-age", "expires")}
                yield Answer(**response.results[-1], attributes=attributes, received=response.received)

    return run


def _django_async_runner(scenario: Scenario) -> Iterator[Answer]:
    """The async accessors (``aget_expiry_age()``...), which the drivers' sync views do not call."""
    from django.test import override_settings

    ops: list[list[Any]] = [["__setitem__", "user", 42]]
    kind, *value = scenario.expiry or ("",)
    if kind in ("seconds", "none"):
        ops.append(["set_expiry", value[0] if value else None])
    elif kind:
        ops.append(["set_expiry", {kind: value[0]}])
    middlewares = [OUR_DJANGO_MIDDLEWARE if m == DJANGO_MIDDLEWARE else m for m in django_settings.MIDDLEWARE]
    sessions = {"IDLE_TIMEOUT": scenario.idle, "ABSOLUTE_TIMEOUT": scenario.absolute, "HASHER": HASHER}
    with override_settings(
        MIDDLEWARE=middlewares,
        ROOT_URLCONF="tests.django_sessions.urls",
        SESSION_EXPIRE_AT_BROWSER_CLOSE=scenario.browser_default,
        BLAKE2SIGN_WEB={"SESSIONS": sessions},
    ):
        client = AsyncClient()
        for request_ops in (ops, [["__setitem__", "n", 1]]):
            yield _django_async_request(client, request_ops)


def _django_async_request(client: AsyncClient, ops: list[list[Any]]) -> Answer:
    accessors = [["get_expiry_age"], ["get_expiry_date"], ["get_expire_at_browser_close"]]
    body = json.dumps({"ops": [_async_op(op) for op in (*ops, *accessors)]})
    response = async_to_sync(client.post)("/aops/", body, content_type="application/json")
    received = time.time()
    assert response.status_code == 200
    age, date, browser_close = json.loads(response.content)["results"][-3:]
    morsel = response.cookies.get(django_settings.SESSION_COOKIE_NAME)
    attributes = None
    if morsel is not None:
        client.cookies[morsel.key] = morsel.value
        attributes = {key: str(morsel[key]) for key in ("max-age", "expires") if morsel[key] != ""}
    return Answer(age, datetime.fromisoformat(date).timestamp(), browser_close, attributes, received)


def _async_op(op: list[Any]) -> list[Any]:
    """The async twin of a session call, as /aops/ takes it: ``aset`` for ``__setitem__``, else ``a<name>``."""
    name, *args = op
    return ["aset" if name == "__setitem__" else "a" + name, *args]


FRAMEWORKS: dict[str, Runner] = {
    **{kind: _driver_runner(kind) for kind in DRIVERS},
    "django-ours-async": _django_async_runner,
}


@pytest.mark.django_db
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_every_expiry_accessor_says_what_the_cookie_says(framework: str, scenario: Scenario) -> None:
    if framework.endswith("-async") and django.VERSION < (5, 0):
        pytest.skip("Django 4.2 has no async session accessors")
    answers = FRAMEWORKS[framework](scenario)
    login = next(answers)
    assert scenario.age - 1 <= (login.age or 0) <= scenario.age, login
    assert login.browser_close is scenario.browser_session, login
    _agrees_with_its_cookie(login, ended=scenario.ended)
    if not scenario.ended:
        again = next(answers)  # the expiry and the start read back from the cookie
        assert scenario.age - 2 <= (again.age or 0) <= scenario.age, again
        assert again.browser_close is scenario.browser_session, again
        _agrees_with_its_cookie(again, ended=False)


def _agrees_with_its_cookie(answer: Answer, *, ended: bool) -> None:
    assert answer.attributes is not None, "the response set no session cookie"
    assert answer.age is not None
    assert answer.date is not None
    if ended:  # the cookie is deleted: Django sends the negative Max-Age, Starlette an Expires in 1970
        assert answer.age <= 0
        if "max-age" in answer.attributes:
            assert int(answer.attributes["max-age"]) <= 0
        else:
            assert parsedate_to_datetime(answer.attributes["expires"]).timestamp() < answer.received
        return
    # The date is when the server refuses the session, the age the seconds until then.
    assert answer.date == pytest.approx(answer.received + answer.age, abs=2)
    if answer.browser_close:
        assert answer.attributes == {}, "a browser-close cookie has no Max-Age and no Expires"
        return
    max_age = int(answer.attributes["max-age"])
    assert answer.age - 1 <= max_age <= answer.age
    assert answer.date == pytest.approx(answer.received + max_age, abs=2)
    if "expires" in answer.attributes:  # Django writes both; Starlette only Max-Age
        assert parsedate_to_datetime(answer.attributes["expires"]).timestamp() == pytest.approx(answer.date, abs=2)
