"""Cookie name prefixes (``__Host-``, ``__Secure-``...): E020 whatever the engine, refused at start-up by ours.

A browser drops a prefixed cookie whose attributes break the prefix's rules, silently: the login does not
stick. Django's test client keeps it, so without the check nothing would tell.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE, middleware_with, run, session_of

pytestmark = pytest.mark.urls("tests.django_sessions.urls")

DB_ENGINE = "django.contrib.sessions.backends.db"


def e020(**overrides: Any) -> list[Any]:
    with override_settings(**overrides):
        return [m for m in run_checks() if m.id == "blake2sign_web.E020"]


@pytest.mark.parametrize(
    ("overrides", "wrong"),
    [
        ({"SESSION_COOKIE_NAME": "__Host-sessionid", "SESSION_COOKIE_SECURE": False}, "it must be Secure"),
        ({"SESSION_COOKIE_NAME": "__Host-sessionid", "SESSION_COOKIE_PATH": "/app/"}, "Path must be exactly '/'"),
        ({"SESSION_COOKIE_NAME": "__Host-sessionid", "SESSION_COOKIE_DOMAIN": "example.com"}, "no Domain"),
        ({"SESSION_COOKIE_NAME": "__Secure-sessionid", "SESSION_COOKIE_SECURE": False}, "it must be Secure"),
        ({"SESSION_COOKIE_NAME": "__host-sessionid"}, "spell the prefix '__Host-' exactly"),
        ({"SESSION_COOKIE_NAME": "__Host-Http-sessionid", "SESSION_COOKIE_HTTPONLY": False}, "must be HttpOnly"),
    ],
)
@pytest.mark.parametrize("engine", ["blake2sign_web.django.sessions", DB_ENGINE], ids=["ours", "db"])
def test_a_prefix_its_attributes_break_is_e020_whatever_the_engine(
    overrides: dict[str, Any], wrong: str, engine: str
) -> None:
    errors = e020(SESSION_ENGINE=engine, **overrides)
    assert len(errors) == 1
    assert errors[0].msg.startswith("SESSION_COOKIE_NAME: cookie name ")
    assert wrong in errors[0].msg
    assert "SESSION_COOKIE_SECURE = True" in errors[0].hint


def test_the_hint_names_the_settings_of_the_prefix() -> None:
    [error] = e020(SESSION_COOKIE_NAME="__Host-sessionid", SESSION_COOKIE_SECURE=False)
    assert error.hint == (
        'Set SESSION_COOKIE_SECURE = True, SESSION_COOKIE_PATH = "/", SESSION_COOKIE_DOMAIN = None (and serve the '
        "site over HTTPS), or choose a SESSION_COOKIE_NAME without the prefix '__Host-'."
    )
    [error] = e020(SESSION_COOKIE_NAME="__Secure-sessionid", SESSION_COOKIE_SECURE=False)
    assert "PATH" not in error.hint


@pytest.mark.parametrize(
    ("good", "bad"),
    [
        ({"SESSION_COOKIE_NAME": "__Host-sessionid"}, {"SESSION_COOKIE_SECURE": False}),
        ({"SESSION_COOKIE_NAME": "__Host-sessionid"}, {"SESSION_COOKIE_PATH": "/app/"}),
        (
            {"SESSION_COOKIE_NAME": "__Secure-sessionid", "SESSION_COOKIE_DOMAIN": "example.com"},
            {"SESSION_COOKIE_SECURE": False},
        ),
        ({"SESSION_COOKIE_NAME": "__Host-Http-sessionid"}, {"SESSION_COOKIE_HTTPONLY": False}),
    ],
)
def test_only_the_attribute_that_breaks_the_rule_is_reported(good: dict[str, Any], bad: dict[str, Any]) -> None:
    """The test settings are Secure, Path=/, no Domain, HttpOnly: what every prefix asks."""
    assert e020(**good) == []
    assert len(e020(**good, **bad)) == 1
    assert e020(SESSION_COOKIE_NAME="sessionid", **bad) == []  # no prefix: no rule


def test_the_csrf_cookie_is_checked_too_unless_it_lives_in_the_session() -> None:
    [error] = e020(CSRF_COOKIE_NAME="__Host-csrftoken", CSRF_COOKIE_SECURE=False)
    assert error.msg.startswith("CSRF_COOKIE_NAME: ")
    assert error.hint.startswith('Set CSRF_COOKIE_SECURE = True, CSRF_COOKIE_PATH = "/", CSRF_COOKIE_DOMAIN = None')
    assert e020(CSRF_COOKIE_NAME="__Host-csrftoken", CSRF_COOKIE_SECURE=False, CSRF_USE_SESSIONS=True) == []
    assert e020(CSRF_COOKIE_NAME="__Host-csrftoken", CSRF_COOKIE_SECURE=True) == []


@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def test_our_engine_refuses_to_run_with_a_broken_prefix(middleware: str) -> None:
    with (
        override_settings(
            MIDDLEWARE=middleware_with(middleware), SESSION_COOKIE_NAME="__Host-sessionid", SESSION_COOKIE_PATH="/a/"
        ),
        pytest.raises(ImproperlyConfigured, match=r"SESSION_COOKIE_NAME: cookie name '__Host-sessionid'"),
    ):
        run(Client(), ["__setitem__", "a", 1])


def test_our_middleware_refuses_to_start_with_a_broken_prefix_whatever_the_engine() -> None:
    with (
        override_settings(
            MIDDLEWARE=middleware_with(OUR_MIDDLEWARE),
            SESSION_ENGINE=DB_ENGINE,
            SESSION_COOKIE_NAME="__Secure-sessionid",
            SESSION_COOKIE_SECURE=False,
        ),
        pytest.raises(ImproperlyConfigured, match=r"it must be Secure"),
    ):
        Client().get("/untouched/")


@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE], ids=["django-middleware", "our-middleware"])
def test_the_recommended_host_prefix_passes_and_is_written_as_it_demands(middleware: str) -> None:
    client = Client()
    recommended = {"SESSION_COOKIE_NAME": "__Host-sessionid", "SESSION_COOKIE_SECURE": True}
    with override_settings(MIDDLEWARE=middleware_with(middleware), **recommended):
        assert e020() == []
        response = run(client, ["__setitem__", "a", 1])
        line = response.cookies["__Host-sessionid"].output(header="")
        assert "; Secure" in line
        assert "; Path=/" in line
        assert "Domain" not in line
        assert session_of(run(client)) == {"a": 1}
        assert len(e020(SESSION_COOKIE_SECURE=False)) == 1  # what the check catches: the test client never would
