"""The engine works without the app in INSTALLED_APPS, and a bad configuration stops start-up, not a login."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from .conftest import DJANGO_MIDDLEWARE, OUR_MIDDLEWARE

pytestmark = pytest.mark.urls("tests.django_sessions.urls")
ROOT = Path(__file__).resolve().parents[2]
#: What a WSGI server does at start-up: build the handler, which builds every middleware.
START = "import django.core.wsgi; django.core.wsgi.get_wsgi_application(); print('started')"


def start(middleware: str, bad_setting: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.django_sessions.startup_settings",
        "SESSION_MIDDLEWARE": middleware,
        "PYTHONPATH": str(ROOT),
    }
    env.pop("BAD_SESSION_SETTING", None)
    if bad_setting:
        env["BAD_SESSION_SETTING"] = bad_setting
    return subprocess.run(
        [sys.executable, "-c", START], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.django_db
@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE])
def test_a_login_works_without_the_app(middleware: str) -> None:
    apps = [app for app in settings.INSTALLED_APPS if app != "blake2sign_web.django"]
    get_user_model().objects.create_user("ada")
    with override_settings(
        INSTALLED_APPS=apps, MIDDLEWARE=[m if m != DJANGO_MIDDLEWARE else middleware for m in settings.MIDDLEWARE]
    ):
        client = Client()
        assert client.post("/login/", {"username": "ada"}).status_code == 200
        assert client.get("/whoami/").content == b"ada"


@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE])
def test_good_settings_start_without_the_app(middleware: str) -> None:
    process = start(middleware)
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "started"


@pytest.mark.parametrize("middleware", [DJANGO_MIDDLEWARE, OUR_MIDDLEWARE])
@pytest.mark.parametrize("bad_setting", ["HASHER", "SECRET_KEY", "SESSION_COOKIE_PATH"])
def test_bad_settings_stop_the_start_up_without_the_app(middleware: str, bad_setting: str) -> None:
    process = start(middleware, bad_setting)
    assert process.returncode != 0
    assert "started" not in process.stdout
    last_line = process.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured:"), process.stderr
    assert bad_setting in last_line


def test_a_string_secret_key_fallbacks_from_settings_configure_stops_the_engine_at_import() -> None:
    """A settings module cannot give a string (Django refuses it as a tuple setting), settings.configure() can."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "tests.django_sessions.startup_settings"}
    code = (
        "from django.conf import settings\n"
        "settings.configure(SECRET_KEY='x' * 50, SECRET_KEY_FALLBACKS='old-secret-key-0123456789',\n"
        "                   SESSION_ENGINE='blake2sign_web.django.sessions')\n"
        "import django; django.setup()\n"
        "import blake2sign_web.django.sessions\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert process.returncode != 0
    last_line = process.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured: SECRET_KEY_FALLBACKS must be a list")
