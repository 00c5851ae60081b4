"""What docs/security.md claims of the Django engine that no other test shows.

A password change ends copied cookies through Django's session auth hash; a key rotation in two
phases logs nobody out while processes disagree; a fallback-verified session is re-signed only by a
request that reads it; a bad cookie is deleted only by a response that read the session; the session
key changes on every save (so links are not bound to it); a download that started before its link
expired finishes, while a resume after it gets 410.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from blake2sign_web import BadSignature, SerializerSigner, URLSigner
from blake2sign_web.django import sign_url
from blake2sign_web.django.conf import PURPOSE
from blake2sign_web.django.sessions import SessionStore

from .conftest import browser, middleware_with, whoami

pytestmark = [pytest.mark.urls("tests.migrating.urls"), pytest.mark.django_db]

OLD_KEY = "rotation-old-key-" + "o" * 40
NEW_KEY = "rotation-new-key-" + "n" * 40
BEFORE = {"SECRET_KEY": OLD_KEY, "SECRET_KEY_FALLBACKS": []}
PHASE_1 = {"SECRET_KEY": OLD_KEY, "SECRET_KEY_FALLBACKS": [NEW_KEY]}
PHASE_2 = {"SECRET_KEY": NEW_KEY, "SECRET_KEY_FALLBACKS": [OLD_KEY]}
AFTER = {"SECRET_KEY": NEW_KEY, "SECRET_KEY_FALLBACKS": []}


def signed_only_with(key: str, token: str) -> bool:
    try:
        SerializerSigner(key, purpose=PURPOSE).loads(token)
    except BadSignature:
        return False
    return True


def test_a_password_change_ends_copied_cookies_but_not_the_session_that_made_it(
    user: Any, session_middleware: str
) -> None:
    with override_settings(MIDDLEWARE=middleware_with(session_middleware)):
        owner = browser()
        owner.post("/login/", {"username": "ada"})
        copy = owner.cookies["sessionid"].value
        thief = browser(copy)
        assert whoami(thief) == "ada"
        owner.post("/change-password/", {"password": "a new one"})
        assert whoami(owner) == "ada"
        response = browser(copy).get("/whoami/")
        assert response.content == b"anonymous"
        assert response.cookies["sessionid"].value == ""  # Django flushed the copy's session
        # The copy is still a valid token: the login ended, not the signature.
        assert signed_only_with(settings.SECRET_KEY, copy)


def test_rotation_in_two_phases_logs_nobody_out(user: Any, session_middleware: str) -> None:
    with override_settings(MIDDLEWARE=middleware_with(session_middleware), **BEFORE):
        client = browser()
        client.post("/login/", {"username": "ada"})
    for phase, signs_with in [(PHASE_1, OLD_KEY), (PHASE_2, NEW_KEY), (PHASE_1, OLD_KEY), (PHASE_2, NEW_KEY)]:
        # Processes in either phase serve the same browser, in any order, during the roll.
        with override_settings(MIDDLEWARE=middleware_with(session_middleware), **phase):
            assert whoami(client) == "ada"
        assert signed_only_with(signs_with, client.cookies["sessionid"].value)
    issued_in_phase_2 = client.cookies["sessionid"].value
    with override_settings(MIDDLEWARE=middleware_with(session_middleware), **BEFORE):
        assert whoami(browser(issued_in_phase_2)) == "anonymous"  # phase 1 skipped: logged out
    with override_settings(MIDDLEWARE=middleware_with(session_middleware), **AFTER):
        assert whoami(browser(issued_in_phase_2)) == "ada"  # the old key retired: re-signed sessions stay


def test_only_a_request_that_reads_the_session_re_signs_it(user: Any, session_middleware: str) -> None:
    with override_settings(MIDDLEWARE=middleware_with(session_middleware), **BEFORE):
        client = browser()
        client.post("/login/", {"username": "ada"})
        old_token = client.cookies["sessionid"].value
    with override_settings(MIDDLEWARE=middleware_with(session_middleware), **PHASE_2):
        assert "sessionid" not in client.get("/untouched/").cookies
        response = client.get("/whoami/")
        assert response.content == b"ada"
        assert response.cookies["sessionid"].value != old_token
        assert signed_only_with(NEW_KEY, response.cookies["sessionid"].value)


def test_a_bad_cookie_is_deleted_only_by_a_response_that_reads_the_session(session_middleware: str) -> None:
    with override_settings(MIDDLEWARE=middleware_with(session_middleware)):
        client = browser("not-a-session-cookie")
        assert "sessionid" not in client.get("/untouched/").cookies
        assert client.get("/whoami/").cookies["sessionid"].value == ""


def test_the_session_key_changes_whenever_the_session_is_saved() -> None:
    session = SessionStore()
    session["link_key"] = "kept"
    session.save()
    first = session.session_key
    session["cart"] = [1]
    session.save()
    assert session.session_key != first
    links = URLSigner("links-" + "k" * 40, purpose="downloads")
    url = links.sign("/files/a.pdf", bind=first)
    with pytest.raises(BadSignature):
        links.verify(url, bind=session.session_key)
    links.verify(links.sign("/files/a.pdf", bind=session["link_key"]), bind=session["link_key"])


def test_a_download_started_before_expiry_finishes_and_a_resume_after_it_is_410(tmp_path: Path) -> None:
    content = bytes(range(256)) * 4096  # 1 MiB
    (tmp_path / "big.bin").write_bytes(content)
    storage = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}}
    with override_settings(STORAGES={**settings.STORAGES, "migrating_files": storage}):
        download_after_expiry(content)


def download_after_expiry(content: bytes) -> None:
    while time.time() % 1 > 0.5:  # sign early in a second: the link then lives 0.5 to 1 s
        time.sleep(0.05)
    url = sign_url(reverse("migrating-file", args=["big.bin"]), expires_in=1)
    expires_at = int(url.split("expires=")[1].split("&")[0])
    client = browser()
    response = client.get(url)
    assert response.status_code == 200
    assert response.streaming
    assert client.get(url, HTTP_RANGE="bytes=0-9").status_code == 206  # a resume while the link is valid
    while time.time() < expires_at + 0.05:
        time.sleep(0.05)
    assert b"".join(response.streaming_content) == content  # the download under way runs to its end
    response.close()
    assert client.get(url, HTTP_RANGE=f"bytes={len(content) // 2}-").status_code == 410
