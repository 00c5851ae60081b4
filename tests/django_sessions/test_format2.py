"""Format 2 under Django: the session dictionary and 16-byte tags by default, and the settings that change them."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from blake2sign_web.django import conf
from blake2sign_web.signing.serializer import LAYOUTS, NO_COMPRESSION, ZSTD, ZSTD_DICTIONARY

from .conftest import cookie, run, session_of, signer

pytestmark = pytest.mark.urls("tests.django_sessions.urls")

LOGIN = {
    "_auth_user_id": "42",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
}


def login(client: Client) -> str:
    response = run(client, *(["__setitem__", key, value] for key, value in LOGIN.items()))
    return str(cookie(response).value)


def test_a_login_session_is_compressed_against_the_session_dictionary(client: Client, session_middleware: str) -> None:
    token = login(client)
    layout = LAYOUTS[token[:1].encode()]
    assert (layout.format, layout.compression, layout.tag_size) == (2, ZSTD_DICTIONARY, 16)
    assert len(token) <= 111
    assert session_of(run(client)) == LOGIN


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"COMPRESSION": None}})
def test_compression_none_still_turns_compression_off(client: Client, session_middleware: str) -> None:
    token = login(client)
    assert LAYOUTS[token[:1].encode()].compression == NO_COMPRESSION
    assert session_of(run(client)) == LOGIN


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"DICTIONARY": None, "COMPRESSION_THRESHOLD": 0}})
def test_without_a_dictionary_plain_zstd_by_threshold(client: Client, session_middleware: str) -> None:
    response = run(client, ["__setitem__", "items", ["same text again"] * 50])
    assert LAYOUTS[str(cookie(response).value)[:1].encode()].compression == ZSTD
    assert session_of(run(client)) == {"items": ["same text again"] * 50}


@override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"TAG_SIZE": 32}})
def test_tag_size_32(client: Client, session_middleware: str) -> None:
    token = login(client)
    assert LAYOUTS[token[:1].encode()].tag_size == 32
    assert session_of(run(client)) == LOGIN


def test_format_1_cookies_load_under_the_new_defaults(client: Client, session_middleware: str) -> None:
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": {"FORMAT": 1}}):
        token = login(client)
        assert token[0] in "01"
    assert len(token) > 120  # a 43-character tag, no dictionary
    assert signer().loads(token) == LOGIN
    assert session_of(run(client)) == LOGIN  # the default configuration reads the format-1 cookie


@pytest.mark.parametrize(
    ("sessions", "message"),
    [
        ({"DICTIONARY": 7}, r"\['DICTIONARY'\] must be a shipped dictionary id \(1\) or None; got 7"),
        ({"DICTIONARY": True}, r"\['DICTIONARY'\] must be a shipped dictionary id"),
        ({"TAG_SIZE": 20}, r"\['TAG_SIZE'\] must be 16 or 32"),
        ({"FORMAT": 3}, r"\['FORMAT'\] must be 2, or 1"),
    ],
)
def test_bad_format_settings_fail_at_start_up(sessions: dict[str, object], message: str) -> None:
    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions}), pytest.raises(ImproperlyConfigured, match=message):
        conf.session_config()


@pytest.mark.parametrize(
    ("sessions", "check_id"),
    [
        ({"DICTIONARY": 7}, "blake2sign_web.E014"),
        ({"TAG_SIZE": 20}, "blake2sign_web.E015"),
        ({"FORMAT": 3}, "blake2sign_web.E016"),
    ],
)
def test_bad_format_settings_are_reported_by_the_checks(sessions: dict[str, object], check_id: str) -> None:
    from blake2sign_web.django.checks import check_settings

    with override_settings(BLAKE2SIGN_WEB={"SESSIONS": sessions}):
        errors = check_settings()
    assert len(errors) == 1
    assert next(iter(sessions)) in errors[0].msg
    assert errors[0].id == check_id
