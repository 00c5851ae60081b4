"""Switching SESSION_ENGINE from Django's engines to this project's, and back: who stays logged in.

Each test logs in with the real incumbent engine, deploys the new settings (a new test client,
so the middleware loads the engine anew, as a restarted process does), sends the old cookie and
observes what the user gets. docs/migrating/ states these outcomes.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import override_settings

from blake2sign_web.django.conf import session_config

from .conftest import OUR_ENGINE, SUSPICIOUS, browser, middleware_with, whoami

pytestmark = [pytest.mark.urls("tests.migrating.urls"), pytest.mark.django_db]

SIGNED_COOKIES = "django.contrib.sessions.backends.signed_cookies"
STORE_ENGINES = [
    "django.contrib.sessions.backends.db",
    "django.contrib.sessions.backends.cache",
    "django.contrib.sessions.backends.cached_db",
]
ACCEPT = {"SESSIONS": {"ACCEPT_DJANGO_SIGNED_COOKIES": True}}


def log_in_with(engine: str, middleware: str) -> str:
    """Log ada in under ``engine`` and return the session cookie the browser got."""
    with override_settings(SESSION_ENGINE=engine, MIDDLEWARE=middleware_with(middleware)):
        client = browser()
        client.post("/login/", {"username": "ada"})
        assert whoami(client) == "ada"
        return str(client.cookies["sessionid"].value)


def deleted(response: Any, name: str = "sessionid") -> bool:
    morsel = response.cookies.get(name)
    return morsel is not None and morsel.value == "" and str(morsel["max-age"]) == "0"


def test_signed_cookies_sessions_are_migrated_with_accept_on(
    user: Any, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = log_in_with(SIGNED_COOKIES, session_middleware)
    assert ":" in legacy
    with override_settings(
        SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware), BLAKE2SIGN_WEB=ACCEPT
    ):
        with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
            response = browser(legacy).get("/whoami/")
        assert response.content == b"ada"
        assert not caplog.records
        reissued = response.cookies["sessionid"].value
        assert ":" not in reissued
        migrated = session_config().signer.loads(reissued)
        assert migrated["_auth_user_id"] == str(user.pk)
        assert migrated["cart"] == [3, 7]
    # Migration off again: the re-issued cookie stands on its own; a cookie never re-issued does not.
    with override_settings(SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware)):
        assert whoami(browser(reissued)) == "ada"
        assert whoami(browser(legacy)) == "anonymous"


def test_signed_cookies_sessions_are_dropped_with_accept_off(
    user: Any, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = log_in_with(SIGNED_COOKIES, session_middleware)
    with (
        override_settings(SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware)),
        caplog.at_level(logging.WARNING, logger=SUSPICIOUS),
    ):
        response = browser(legacy).get("/whoami/")
    assert response.content == b"anonymous"
    assert deleted(response)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert caplog.records[0].getMessage().startswith("Session cookie rejected: ")


@pytest.mark.parametrize("engine", STORE_ENGINES)
def test_store_sessions_are_dropped_logged_and_deleted(
    user: Any, engine: str, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = log_in_with(engine, session_middleware)
    assert len(legacy) == 32  # a random key into the store, nothing else
    with override_settings(SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware)):
        client = browser(legacy)
        with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
            response = client.get("/whoami/")
        assert response.content == b"anonymous"
        assert deleted(response)
        assert [(r.levelname, r.name) for r in caplog.records] == [("WARNING", SUSPICIOUS)]
        assert caplog.records[0].getMessage().startswith("Session cookie rejected: ")
        assert legacy not in caplog.records[0].getMessage()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
            assert whoami(client) == "anonymous"  # the cookie is gone: once per browser
        assert not caplog.records


@pytest.mark.parametrize("engine", STORE_ENGINES)
def test_a_new_cookie_name_ignores_old_cookies_silently(
    user: Any, engine: str, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = log_in_with(engine, session_middleware)
    with override_settings(
        SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware), SESSION_COOKIE_NAME="session"
    ):
        client = browser(legacy)
        with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
            response = client.get("/whoami/")
        assert response.content == b"anonymous"
        assert not caplog.records
        assert "sessionid" not in response.cookies  # the old cookie is neither read nor deleted
        client.post("/login/", {"username": "ada"})
        assert whoami(client) == "ada"


@pytest.mark.parametrize("engine", STORE_ENGINES)
def test_rolling_back_to_a_store_engine_logs_everyone_out_once(
    user: Any, engine: str, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    ours = log_in_with(OUR_ENGINE, session_middleware)
    with override_settings(SESSION_ENGINE=engine, MIDDLEWARE=middleware_with(session_middleware)):
        client = browser(ours)
        with caplog.at_level(logging.WARNING):
            assert whoami(client) == "anonymous"
        assert not [r for r in caplog.records if r.name.startswith("django")]
        client.post("/login/", {"username": "ada"})
        assert whoami(client) == "ada"


def test_rolling_back_to_signed_cookies_keeps_only_cookies_not_yet_reissued(user: Any, session_middleware: str) -> None:
    not_yet_reissued = log_in_with(SIGNED_COOKIES, session_middleware)
    reissued_by_us = log_in_with(OUR_ENGINE, session_middleware)
    with override_settings(SESSION_ENGINE=SIGNED_COOKIES, MIDDLEWARE=middleware_with(session_middleware)):
        assert whoami(browser(not_yet_reissued)) == "ada"
        assert whoami(browser(reissued_by_us)) == "anonymous"


@pytest.mark.parametrize("engine", STORE_ENGINES)
def test_with_a_renamed_cookie_a_rollback_finds_the_old_sessions(
    user: Any, engine: str, session_middleware: str
) -> None:
    legacy = log_in_with(engine, session_middleware)
    client = browser(legacy)
    with override_settings(
        SESSION_ENGINE=OUR_ENGINE, MIDDLEWARE=middleware_with(session_middleware), SESSION_COOKIE_NAME="session"
    ):
        client.post("/login/", {"username": "ada"})
        assert whoami(client) == "ada"
    assert client.cookies["sessionid"].value == legacy  # never read, never deleted
    with override_settings(SESSION_ENGINE=engine, MIDDLEWARE=middleware_with(session_middleware)):
        assert whoami(browser(legacy)) == "ada"
