"""django.contrib.auth, messages and CSRF_USE_SESSIONS on this engine, through the test client."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from .conftest import cookie, signer

pytestmark = [pytest.mark.urls("tests.django_sessions.urls"), pytest.mark.django_db]


@pytest.fixture
def user() -> Any:
    return get_user_model().objects.create_user("ada", password="correct horse")


def test_login_cycles_the_session_and_logout_flushes_it(client: Client, session_middleware: str, user: Any) -> None:
    client.post("/ops/", json.dumps({"ops": [["__setitem__", "cart", [1]]]}), content_type="application/json")
    anonymous = client.cookies[settings.SESSION_COOKIE_NAME].value
    response = client.post("/login/", {"username": "ada"})
    logged_in = cookie(response).value
    assert logged_in != anonymous
    data = signer().loads(logged_in)
    assert data["_auth_user_id"] == str(user.pk)
    assert data["cart"] == [1]
    assert client.get("/whoami/").content == b"ada"
    response = client.post("/logout/")
    assert cookie(response).value == ""
    assert client.get("/whoami/").content == b"anonymous"


def test_a_password_change_logs_the_session_out(client: Client, user: Any) -> None:
    client.post("/login/", {"username": "ada"})
    user.set_password("another")
    user.save()
    assert client.get("/whoami/").content == b"anonymous"


def test_test_client_login_and_force_login(client: Client, session_middleware: str, user: Any) -> None:
    assert client.login(username="ada", password="correct horse")
    assert client.get("/whoami/").content == b"ada"
    client.logout()
    assert client.get("/whoami/").content == b"anonymous"
    client.force_login(user)
    assert client.get("/whoami/").content == b"ada"


def test_test_client_session_property(client: Client) -> None:
    session = client.session
    session["a"] = 1
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key  # the key is the data: send the new one
    assert client.session["a"] == 1


@override_settings(MESSAGE_STORAGE="django.contrib.messages.storage.session.SessionStorage")
def test_messages_in_session_storage(client: Client, session_middleware: str) -> None:
    client.post("/messages/add/", {"text": "saved ✓"})
    client.post("/messages/add/", {"text": "again"})
    assert json.loads(client.get("/messages/").content) == {"messages": ["saved ✓", "again"]}
    assert json.loads(client.get("/messages/").content) == {"messages": []}


@override_settings(CSRF_USE_SESSIONS=True)
def test_csrf_use_sessions(session_middleware: str) -> None:
    client = Client(enforce_csrf_checks=True)
    token = client.get("/csrf/").content.decode()
    assert "_csrftoken" in signer().loads(client.cookies[settings.SESSION_COOKIE_NAME].value)
    assert client.post("/csrf/protected/", {"csrfmiddlewaretoken": token}).status_code == 200
    assert client.post("/csrf/protected/", {"csrfmiddlewaretoken": "x" * 64}).status_code == 403


@pytest.mark.parametrize("value", ["a", "abc1234"])
def test_a_cookie_too_short_to_be_a_session_is_warned_about_and_deleted(
    client: Client, session_middleware: str, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Django drops a key under 8 characters without a word; every other bad cookie is logged (docs/security.md)."""
    client.cookies[settings.SESSION_COOKIE_NAME] = value
    with caplog.at_level(logging.WARNING, logger="django.security.SuspiciousSession"):
        response = client.post("/ops/", json.dumps({"ops": [["get", "x"]]}), content_type="application/json")
    assert json.loads(response.content)["session"] == {}
    assert response.cookies[settings.SESSION_COOKIE_NAME].value == ""  # deleted
    assert [r.getMessage() for r in caplog.records if r.name == "django.security.SuspiciousSession"] == [
        f"Session cookie rejected: {len(value)} characters, too short to be a session."
    ]
