"""TYPED, ENCRYPT, DECRYPT and COMPRESS_ENCRYPTED through the real middleware stack, with both middlewares.

Each test fails without its option: a datetime is refused at save, an encrypted cookie is unreadable by a
plain engine, a signed cookie read by an encrypting engine would not be re-issued (the engine re-issued
only what a fallback key verified).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pybase64
import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from blake2sign_web import BadSignature, SerializerSigner
from blake2sign_web.django import conf

from .conftest import SUSPICIOUS, cookie, run, session_of, signer
from .views import TYPED_VALUES

ROOT = Path(__file__).resolve().parents[2]
OLD_KEY = "old-secret-key-" + "o" * 40
NEW_KEY = "new-secret-key-" + "n" * 40

pytestmark = pytest.mark.urls("tests.django_sessions.urls")


def options(**sessions: Any) -> Any:
    return override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions})


def send(client: Client, token: str) -> None:
    client.cookies[settings.SESSION_COOKIE_NAME] = token


def check_ids(**sessions: Any) -> set[str]:
    with options(**sessions):
        return {m.id for m in run_checks() if m.id and m.id.startswith("blake2sign_web")}


def body(token: str) -> bytes:
    """The bytes after the marker and the key id, as base64url decodes them (what anyone holding the cookie can
    read)."""
    text = token[2:]
    return pybase64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_")


# TYPED ----------------------------------------------------------------------------------------------


def test_typed_session_reads_back_the_same_types(client: Client, session_middleware: str) -> None:
    with options(TYPED=True):
        assert client.get("/typed/store/").status_code == 200
        read = json.loads(client.get("/typed/").content)
    assert read["equal"] is True
    assert read["types"] == {key: type(value).__name__ for key, value in TYPED_VALUES.items()}


def test_without_typed_a_datetime_is_still_refused_at_save(client: Client, session_middleware: str) -> None:
    with pytest.raises(TypeError, match=r"value at \['values'\]\['datetime'\] is datetime"):
        client.get("/typed/store/")


def test_typed_engine_reads_sessions_signed_before(client: Client, session_middleware: str) -> None:
    run(client, ["__setitem__", "a", [1, 2]])
    with options(TYPED=True):
        response = run(client, ["get", "a"])
    assert json.loads(response.content)["results"] == [[1, 2]]
    assert cookie(response) is None  # nothing to rewrite: a typed engine reads plain tokens as they are


def test_an_engine_without_typed_refuses_a_typed_session(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Its values may not be JSON: reading it as JSON would hand the view a tag dict for a datetime."""
    with options(TYPED=True):
        client.get("/typed/store/")
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert json.loads(client.get("/typed/").content)["types"] == {}
    assert "Session cookie rejected" in caplog.text


# ENCRYPT ---------------------------------------------------------------------------------------------

SECRET_VALUE = "a-secret-note-0123456789"


def test_encrypted_session_round_trips_and_hides_its_content(client: Client, session_middleware: str) -> None:
    with options(ENCRYPT=True, COMPRESSION=None):
        response = run(client, ["__setitem__", "note", SECRET_VALUE])
        token = cookie(response).value
        assert token.startswith("x")
        assert SECRET_VALUE.encode() not in body(token)
        assert session_of(run(client)) == {"note": SECRET_VALUE}
    with options(COMPRESSION=None):  # signed, uncompressed: the value can be read from the cookie
        signed = cookie(run(client, ["__setitem__", "note", SECRET_VALUE])).value
    assert SECRET_VALUE.encode() in body(signed)
    with pytest.raises(BadSignature, match="encrypted"):
        signer().loads(token)


def test_an_engine_that_does_not_decrypt_refuses_encrypted_sessions(
    client: Client, session_middleware: str, caplog: pytest.LogCaptureFixture
) -> None:
    with options(ENCRYPT=True):
        run(client, ["__setitem__", "a", 1])
    with caplog.at_level(logging.WARNING, logger=SUSPICIOUS):
        assert session_of(run(client)) == {}
    assert "encrypted" in caplog.text


def test_a_signed_session_read_by_an_encrypting_engine_is_re_issued_encrypted(
    client: Client, session_middleware: str
) -> None:
    send(client, signer().dumps({"a": 1}))
    with options(ENCRYPT=True):
        response = run(client, ["get", "a"])  # read only
        assert json.loads(response.content)["results"] == [1]
        reissued = cookie(response).value
        assert reissued.startswith("x")
        assert conf.session_config().signer.load_token(reissued).encrypted
        # Once encrypted, a read sends nothing: the rewrite happens once.
        assert cookie(run(client, ["get", "a"])) is None


def test_decrypt_only_reads_encrypted_sessions_and_writes_signed_ones(client: Client, session_middleware: str) -> None:
    """The first step of a roll-out: every process reads encrypted cookies before any writes one."""
    with options(ENCRYPT=True):
        run(client, ["__setitem__", "a", 1])
    with options(DECRYPT=True):
        response = run(client, ["get", "a"])
        assert json.loads(response.content)["results"] == [1]
        assert cookie(response) is None  # read: not rewritten (the way back leaves encrypted cookies as they are)
        written = cookie(run(client, ["__setitem__", "b", 2])).value
    assert signer().loads(written) == {"a": 1, "b": 2}


def test_a_fallback_key_decrypts_and_the_next_response_re_encrypts_under_secret_key(
    client: Client, session_middleware: str
) -> None:
    with override_settings(SECRET_KEY=OLD_KEY), options(ENCRYPT=True):
        old = cookie(run(client, ["__setitem__", "a", 1])).value
    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[OLD_KEY]), options(ENCRYPT=True):
        response = run(client, ["get", "a"])
        assert json.loads(response.content)["results"] == [1]
        new = cookie(response).value
    assert new.startswith("x")
    assert new != old
    current_only = SerializerSigner(NEW_KEY, purpose=conf.PURPOSE, encrypt=True, dictionary=1)
    assert current_only.load_token(new).value == {"a": 1}
    with pytest.raises(BadSignature):
        current_only.loads(old)


def test_compress_encrypted_makes_a_compressible_session_shorter(client: Client, session_middleware: str) -> None:
    data = ["the same words again"] * 40
    with options(ENCRYPT=True):
        plain = cookie(run(client, ["__setitem__", "a", data])).value
    with options(ENCRYPT=True, COMPRESS_ENCRYPTED=True):
        compressed = cookie(run(client, ["__setitem__", "a", data])).value
        assert session_of(run(client))["a"] == data
    assert len(compressed) < len(plain) / 2


def test_typed_and_encrypted_together(client: Client, session_middleware: str) -> None:
    with options(TYPED=True, ENCRYPT=True):
        client.get("/typed/store/")
        assert client.cookies[settings.SESSION_COOKIE_NAME].value.startswith("x")
        assert json.loads(client.get("/typed/").content)["equal"] is True


# Validation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        ({"TYPED": "yes"}, r"\['TYPED'\] must be True or False"),
        ({"ENCRYPT": 1}, r"\['ENCRYPT'\] must be True or False"),
        ({"DECRYPT": None}, r"\['DECRYPT'\] must be True or False"),
        ({"COMPRESS_ENCRYPTED": True}, r"COMPRESS_ENCRYPTED'\] applies to encrypted sessions"),
        ({"COMPRESS_ENCRYPTED": True, "DECRYPT": True}, r"COMPRESS_ENCRYPTED'\] applies to encrypted sessions"),
        ({"TYPED": True, "FORMAT": 1}, r"\['TYPED'\] needs FORMAT 2"),
        ({"ENCRYPT": True, "FORMAT": 1}, r"\['ENCRYPT'\] needs FORMAT 2"),
    ],
)
def test_bad_signer_options_are_e019_and_stop_the_engine(sessions: dict[str, Any], message: str) -> None:
    assert check_ids(**sessions) == {"blake2sign_web.E019"}
    with options(**sessions), pytest.raises(ImproperlyConfigured, match=message):
        run(Client(), ["__setitem__", "a", 1])


def test_the_options_are_off_by_default_and_the_plain_signer_is_used() -> None:
    assert type(conf.session_config().signer) is SerializerSigner
    assert {key: conf.SESSION_DEFAULTS[key] for key in conf.SIGNER_FLAGS} == dict.fromkeys(conf.SIGNER_FLAGS, False)


def test_decrypt_with_format_1_is_accepted() -> None:
    """Format 1 writers can still read encrypted cookies: the way back from encryption to an old fleet."""
    assert check_ids(DECRYPT=True, FORMAT=1) == set()


#: Start the test settings' WSGI handler (every middleware, so the engine) without the cryptography package.
WITHOUT_CRYPTOGRAPHY = (
    "import sys\n"
    "sys.modules['cryptography'] = None  # as if it were not installed: importing it raises ImportError\n"
    "import django\n"
    "django.setup()\n"
    "{action}\n"
)


@pytest.mark.parametrize("key", ["ENCRYPT", "DECRYPT"])
@pytest.mark.parametrize(
    "action",
    [
        "import django.core.wsgi; django.core.wsgi.get_wsgi_application()",
        "from django.core.management import call_command; call_command('check')",
    ],
    ids=["start-up", "check"],
)
def test_without_cryptography_start_up_stops_naming_the_extra(key: str, action: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "tests.django_sessions.startup_settings",
        "BAD_SESSION_SETTING": key,
        "WITH_APP": "1",
    }
    process = subprocess.run(
        [sys.executable, "-c", WITHOUT_CRYPTOGRAPHY.format(action=action)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode != 0
    assert f"['{key}'] needs the cryptography package" in process.stderr
    if "check" in action:
        assert "blake2sign_web.E019" in process.stderr
    assert 'pip install "blake2sign-web[encrypted]"' in process.stderr


def test_with_cryptography_the_same_settings_start() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "tests.django_sessions.startup_settings",
        "BAD_SESSION_SETTING": "ENCRYPT",
    }
    code = "import django.core.wsgi; django.core.wsgi.get_wsgi_application(); print('started')"
    process = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert process.returncode == 0, process.stderr
    assert process.stdout.strip() == "started"
