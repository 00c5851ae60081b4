"""System checks: each bad setting gives its id; the engine refuses to run with an error."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client, override_settings

from blake2sign_web import get_signer

from .conftest import OUR_MIDDLEWARE, middleware_with, run, session_of

pytestmark = pytest.mark.urls("tests.django_sessions.urls")


def ids(*, deploy: bool = False, **overrides: Any) -> set[str]:
    with override_settings(**overrides):
        messages = run_checks(include_deployment_checks=deploy)
        return {m.id for m in messages if m.id and m.id.startswith("blake2sign_web")}


def test_the_test_settings_pass() -> None:
    assert ids() == set()
    assert ids(deploy=True) == set()


def test_signed_urls_section_is_checked_by_its_own_check() -> None:
    # The session checks leave SIGNED_URLS alone; E008 validates it.
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"ANYTHING": object()}}) == {"blake2sign_web.E008"}
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"HASHER": "sha1"}}) == {"blake2sign_web.E008"}
    assert ids(BLAKE2SIGN_WEB={"SIGNED_URLS": {"EXPIRED_STATUS": 403}}) == set()


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ({"SIGNATURE_PARAM": "a b"}, "['SIGNED_URLS']['SIGNATURE_PARAM'] must be a non-empty query parameter name"),
        ({"EXPIRES_PARAM": "once"}, "must differ: BLAKE2SIGN_WEB['SIGNED_URLS']['SIGNATURE_PARAM'], "),
        ({"IGNORED_PARAMS": ("sig*",)}, "['SIGNED_URLS']['IGNORED_PARAMS'] pattern 'sig*' would ignore the signature"),
        ({"IGNORED_PARAMS": (None,)}, "each BLAKE2SIGN_WEB['SIGNED_URLS']['IGNORED_PARAMS'] pattern must be"),
    ],
)
def test_link_parameter_names_are_checked_at_start_up_in_djangos_spelling(section: Any, named: str) -> None:
    """Review 4: these were found at the first signed link only, in the core's words (signature_param, ignore)."""
    with override_settings(BLAKE2SIGN_WEB={"SIGNED_URLS": section}):
        [error] = [m for m in run_checks() if m.id == "blake2sign_web.E008"]
    assert named in error.msg
    assert "signature_param" not in error.msg
    assert "ignore pattern" not in error.msg


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


def test_engine_without_the_app_has_no_check_of_its_own() -> None:
    """The engine works without the app (test_start_up.py), so there is nothing to report."""
    apps = ["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.messages"]
    assert ids(INSTALLED_APPS=apps) == set()


# SECRET_KEY and SECRET_KEY_FALLBACKS -------------------------------------------

GOOD_OLD_KEY = "old-secret-key-" + "q" * 40


@pytest.mark.parametrize("fallbacks", [GOOD_OLD_KEY, GOOD_OLD_KEY.encode(), {GOOD_OLD_KEY}])
def test_fallbacks_that_are_not_a_list_are_an_error_and_stop_the_engine(
    fallbacks: Any, session_middleware: str
) -> None:
    """A string would be one key per character: a cookie signed with the key "o" would verify."""
    assert ids(SECRET_KEY_FALLBACKS=fallbacks) == {"blake2sign_web.E009"}
    with (
        override_settings(SECRET_KEY_FALLBACKS=fallbacks),
        pytest.raises(ImproperlyConfigured, match=r"SECRET_KEY_FALLBACKS must be a list of secrets"),
    ):
        run(Client(), ["__setitem__", "a", 1])


@pytest.mark.parametrize("fallbacks", [[GOOD_OLD_KEY], (GOOD_OLD_KEY,), []])
def test_fallbacks_as_a_list_or_tuple_are_accepted(fallbacks: Any) -> None:
    assert ids(SECRET_KEY_FALLBACKS=fallbacks) == set()
    with override_settings(SECRET_KEY_FALLBACKS=fallbacks):
        run(Client(), ["__setitem__", "a", 1])


@pytest.mark.parametrize(
    "overrides",
    [
        {"SECRET_KEY": "fifteen-chars!!"},
        {"SECRET_KEY": "x"},
        {"SECRET_KEY_FALLBACKS": ["short"]},
        {"SECRET_KEY_FALLBACKS": [GOOD_OLD_KEY, ""]},
        {"SECRET_KEY_FALLBACKS": [None]},
    ],
)
def test_short_secrets_are_an_error_and_stop_the_engine(overrides: dict[str, Any], session_middleware: str) -> None:
    assert ids(**overrides) == {"blake2sign_web.E010"}
    with override_settings(**overrides), pytest.raises(ImproperlyConfigured, match=r"at least 16 bytes"):
        run(Client(), ["__setitem__", "a", 1])


def test_an_empty_secret_key_is_an_error() -> None:
    assert ids(SECRET_KEY="") == {"blake2sign_web.E010"}


def test_sixteen_characters_are_enough() -> None:
    assert ids(SECRET_KEY="sixteen-chars!!!", SECRET_KEY_FALLBACKS=["sixteen-chars!!?"]) == set()


def test_secrets_are_counted_in_utf8_bytes_as_the_core_counts_them() -> None:
    """Eight "é" are 16 bytes, which the core accepts: the check agrees, and names the bytes it counted."""
    assert ids(SECRET_KEY="é" * 8) == set()
    get_signer("é" * 8, purpose="test")  # the core accepts it too
    with override_settings(SECRET_KEY="é" * 7):
        [problem] = [m for m in run_checks() if m.id == "blake2sign_web.E010"]
    assert "SECRET_KEY is 14 bytes long" in problem.msg
    assert "at least 16 bytes" in problem.msg


INSECURE = "django-insecure-" + "k" * 50
SECRET_WARNINGS = ("security.W009", "security.W025")


def test_startproject_key_is_left_to_djangos_own_deployment_warnings(session_middleware: str) -> None:
    """Django's security.W009 and W025 name the key and each fallback: a warning of ours would say it twice."""
    assert ids(SECRET_KEY=INSECURE, deploy=True) == set()
    assert ids(SECRET_KEY_FALLBACKS=[INSECURE], deploy=True) == set()
    with override_settings(SECRET_KEY=INSECURE, SECRET_KEY_FALLBACKS=[GOOD_OLD_KEY, INSECURE]):
        # Sorted: Django keeps its checks in a set, which runs them in an order that varies with memory layout.
        djangos = sorted((m.id, m.msg) for m in run_checks(include_deployment_checks=True) if m.id in SECRET_WARNINGS)
    assert [check_id for check_id, _ in djangos] == ["security.W009", "security.W025"]
    assert "SECRET_KEY_FALLBACKS[1]" in djangos[1][1]
    with override_settings(SECRET_KEY=INSECURE):  # manage.py test runs with DEBUG off: it must keep working
        assert session_of(run(Client(), ["__setitem__", "a", 1])) == {"a": 1}


# Session cookie attributes ------------------------------------------------------------


def test_samesite_none_without_secure_is_an_error_and_stops_the_engine(session_middleware: str) -> None:
    assert ids(SESSION_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=False, DEBUG=True) == {"blake2sign_web.E011"}
    assert ids(SESSION_COOKIE_SAMESITE="none", SESSION_COOKIE_SECURE=False, DEBUG=True) == {"blake2sign_web.E011"}
    assert ids(SESSION_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=True) == set()
    with (
        override_settings(SESSION_COOKIE_SAMESITE="None", SESSION_COOKIE_SECURE=False),
        pytest.raises(ImproperlyConfigured, match=r"SESSION_COOKIE_SAMESITE.*SESSION_COOKIE_SECURE"),
    ):
        run(Client(), ["__setitem__", "a", 1])


@pytest.mark.parametrize(
    "overrides",
    [
        {"SESSION_COOKIE_PATH": "/; Domain=evil.example"},
        {"SESSION_COOKIE_PATH": "/\r\nSet-Cookie: admin=1"},
        {"SESSION_COOKIE_PATH": "/\x1b[2J"},
        {"SESSION_COOKIE_DOMAIN": "example.com; Secure"},
        {"SESSION_COOKIE_DOMAIN": "example.com\n"},
        {"SESSION_COOKIE_NAME": "sid;x"},
        {"SESSION_COOKIE_NAME": "session id"},
        {"SESSION_COOKIE_NAME": "sid\r\n"},
        {"SESSION_COOKIE_NAME": ""},
    ],
)
def test_attribute_forging_cookie_settings_are_an_error_and_stop_the_engine(
    overrides: dict[str, Any], session_middleware: str
) -> None:
    assert ids(**overrides) == {"blake2sign_web.E012"}
    setting = next(iter(overrides))
    with override_settings(**overrides), pytest.raises(ImproperlyConfigured, match=setting):
        run(Client(), ["__setitem__", "a", 1])


def test_our_middleware_refuses_bad_cookie_settings_with_any_engine() -> None:
    engine = "django.contrib.sessions.backends.signed_cookies"
    overrides = {"SESSION_ENGINE": engine, "SESSION_COOKIE_PATH": "/\r\nX: 1"}
    assert ids(**overrides) == set()  # neither our engine nor our middleware
    with override_settings(**overrides, MIDDLEWARE=middleware_with(OUR_MIDDLEWARE)):
        assert {m.id for m in run_checks()} >= {"blake2sign_web.E012"}
        with pytest.raises(ImproperlyConfigured, match="SESSION_COOKIE_PATH"):
            run(Client(), ["__setitem__", "a", 1])


#: What this project's engine and middleware need: no django.contrib.sessions, no Django SessionMiddleware.
WITHOUT_DJANGO_SESSIONS: dict[str, Any] = {
    "INSTALLED_APPS": [app for app in settings.INSTALLED_APPS if app != "django.contrib.sessions"],
    "MIDDLEWARE": middleware_with(OUR_MIDDLEWARE),
}


def test_cookie_warnings_where_djangos_own_checks_cannot_see() -> None:
    """Warnings do not stop the engine. Django's security.W010 to W015 look only for its own app or middleware."""
    alone = WITHOUT_DJANGO_SESSIONS
    assert ids(SESSION_COOKIE_HTTPONLY=False, **alone) == {"blake2sign_web.W001"}
    assert ids(SESSION_COOKIE_SECURE=False, deploy=True, **alone) == {"blake2sign_web.W002"}
    assert ids(SESSION_COOKIE_SECURE=True, deploy=True, **alone) == set()
    assert ids(SESSION_COOKIE_SECURE=False, **alone) == set()  # a test run or runserver: plain HTTP is expected
    # This project's middleware writes the cookie whatever the engine.
    engine = "django.contrib.sessions.backends.signed_cookies"
    assert ids(SESSION_ENGINE=engine, SESSION_COOKIE_SECURE=False, deploy=True, **alone) == {"blake2sign_web.W002"}
    # Where Django's own app or middleware is installed, its security.W010 to W015 say it.
    assert ids(SESSION_COOKIE_HTTPONLY=False, SESSION_COOKIE_SECURE=False, deploy=True) == set()
    assert ids(SESSION_SERIALIZER="myapp.serializers.Pickle") == {"blake2sign_web.W003"}


def test_warnings_only_for_this_engine_or_middleware() -> None:
    engine = "django.contrib.sessions.backends.signed_cookies"
    apps = WITHOUT_DJANGO_SESSIONS["INSTALLED_APPS"]
    assert ids(SESSION_ENGINE=engine, SESSION_COOKIE_HTTPONLY=False, INSTALLED_APPS=apps) == set()
    assert ids(SESSION_ENGINE=engine, SESSION_COOKIE_SECURE=False, INSTALLED_APPS=apps, deploy=True) == set()


def check_deploy(**overrides: Any) -> list[str]:
    """The warnings ``manage.py check --deploy`` prints with these settings, one line each (hints apart)."""
    output = io.StringIO()
    with override_settings(**overrides):
        call_command("check", deploy=True, stdout=output, stderr=output)
    return [line for line in output.getvalue().splitlines() if line.startswith("?: (")]


def naming(warnings: list[str], said: str) -> list[str]:
    return [warning for warning in warnings if said in warning]


@pytest.mark.parametrize(
    "installed",
    [
        {},  # the test settings: django.contrib.sessions and Django's SessionMiddleware, this project's engine
        {"MIDDLEWARE": middleware_with(OUR_MIDDLEWARE)},  # the app, this project's middleware
        {"INSTALLED_APPS": WITHOUT_DJANGO_SESSIONS["INSTALLED_APPS"]},  # Django's middleware, no app
    ],
    ids=["app-and-django-middleware", "app-and-our-middleware", "django-middleware-only"],
)
def test_check_deploy_says_each_thing_once(installed: dict[str, Any]) -> None:
    """manage.py check --deploy: where Django's own warning names a setting, ours stays silent (issue 27, item 12)."""
    insecure = {"SECRET_KEY": INSECURE, "SECRET_KEY_FALLBACKS": [INSECURE]}
    warnings = check_deploy(SESSION_COOKIE_SECURE=False, SESSION_COOKIE_HTTPONLY=False, **insecure, **installed)
    assert naming(warnings, "blake2sign_web.") == []
    for said in ("SESSION_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY", "Your SECRET_KEY ", "SECRET_KEY_FALLBACKS[0]"):
        assert len(naming(warnings, said)) == 1, (said, warnings)


def test_check_deploy_without_djangos_session_app_or_middleware_names_the_cookie_settings_once() -> None:
    warnings = check_deploy(SESSION_COOKIE_SECURE=False, SESSION_COOKIE_HTTPONLY=False, **WITHOUT_DJANGO_SESSIONS)
    assert naming(warnings, "SESSION_COOKIE_HTTPONLY") == [
        "?: (blake2sign_web.W001) SESSION_COOKIE_HTTPONLY is False: any script on your pages can read the signed "
        "session cookie. (Django's security.W013 to W015 cannot see it: neither django.contrib.sessions nor its "
        "SessionMiddleware is installed.)"
    ]
    [secure] = naming(warnings, "SESSION_COOKIE_SECURE")
    assert secure.startswith("?: (blake2sign_web.W002) SESSION_COOKIE_SECURE is False")


def test_two_session_middlewares_are_an_error() -> None:
    django_middleware = "django.contrib.sessions.middleware.SessionMiddleware"
    both = [django_middleware, *middleware_with(OUR_MIDDLEWARE)]
    assert ids(MIDDLEWARE=both) == {"blake2sign_web.E018"}
    assert ids(MIDDLEWARE=[*middleware_with(OUR_MIDDLEWARE), OUR_MIDDLEWARE]) == {"blake2sign_web.E018"}
    assert ids(MIDDLEWARE=middleware_with(OUR_MIDDLEWARE)) == set()
    assert ids(MIDDLEWARE=middleware_with(django_middleware)) == set()  # our engine under Django's: the switch
