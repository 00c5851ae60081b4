"""System checks: each bad setting gives its id; the engine refuses to run with an error."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client, override_settings

from .conftest import run

pytestmark = pytest.mark.urls("tests.django_sessions.urls")


def ids(**overrides: Any) -> set[str]:
    with override_settings(**overrides):
        return {m.id for m in run_checks() if m.id and m.id.startswith("blake2sign_web")}


def test_the_test_settings_pass() -> None:
    assert ids() == set()


def test_signed_urls_section_is_checked_by_its_own_check() -> None:
    # The session checks leave SIGNED_URLS alone; E008 validates it.
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"ANYTHING": object()}}) == {"blake2sign_web.E008"}
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"HASHER": "sha1"}}) == {"blake2sign_web.E008"}
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"EXPIRED_STATUS": 403}}) == set()


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("not a dict", "blake2sign_web.E001"),
        ({"SESIONS": {}}, "blake2sign_web.E001"),
        ({"SESSIONS": {"HASH": "blake2b"}}, "blake2sign_web.E001"),
        ({"SESSIONS": []}, "blake2sign_web.E001"),
        ({"SESSIONS": {"HASHER": "md5"}}, "blake2sign_web.E002"),
        ({"SESSIONS": {"COMPRESSION": "gzip"}}, "blake2sign_web.E003"),
        ({"SESSIONS": {"COMPRESSION_THRESHOLD": -1}}, "blake2sign_web.E004"),
        ({"SESSIONS": {"COOKIE_SIZE_LIMIT": 8192}}, "blake2sign_web.E004"),
        ({"SESSIONS": {"COOKIE_SIZE_LIMIT": "4096"}}, "blake2sign_web.E004"),
        ({"SESSIONS": {"MAX_DECOMPRESSED_SIZE": 100}}, "blake2sign_web.E004"),
        ({"SESSIONS": {"OVERSIZE": "truncate"}}, "blake2sign_web.E005"),
        ({"SESSIONS": {"ACCEPT_DJANGO_SIGNED_COOKIES": "yes"}}, "blake2sign_web.E006"),
    ],
)
def test_bad_settings_are_errors_and_stop_the_engine(setting: Any, expected: str) -> None:
    assert ids(BLAKE2SIGN_WEB=setting) == {expected}
    with override_settings(BLAKE2SIGN_WEB=setting), pytest.raises(ImproperlyConfigured, match="BLAKE2SIGN_WEB"):
        run(Client(), ["__setitem__", "a", 1])


def test_manage_py_check_fails_on_errors() -> None:
    with (
        override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"HASHER": "sha1"}}),
        pytest.raises(SystemCheckError, match=r"blake2sign_web.E002.*HASHER"),
    ):
        call_command("check")


def test_engine_without_the_app() -> None:
    apps = ["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.messages"]
    assert "blake2sign_web.E007" in ids(INSTALLED_APPS=apps)
    with override_settings(INSTALLED_APPS=apps), pytest.raises(ImproperlyConfigured, match="INSTALLED_APPS"):
        run(Client(), ["__setitem__", "a", 1])


def test_cookie_warnings() -> None:
    assert ids(SESSION_COOKIE_HTTPONLY=False) == {"blake2sign_web.W001"}
    assert ids(SESSION_COOKIE_SECURE=False) == {"blake2sign_web.W002"}
    assert ids(SESSION_COOKIE_SECURE=False, DEBUG=True) == set()
    assert ids(SESSION_SERIALIZER="myapp.serializers.Pickle") == {"blake2sign_web.W003"}


def test_warnings_only_for_this_engine() -> None:
    engine = "django.contrib.sessions.backends.signed_cookies"
    assert ids(SESSION_ENGINE=engine, SESSION_COOKIE_HTTPONLY=False, SESSION_COOKIE_SECURE=False) == set()
