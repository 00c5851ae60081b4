"""migrate_starlette_cookies: cookies from Starlette's own SessionMiddleware keep their users logged in."""

from __future__ import annotations

import json
import logging
import sys
import time
from base64 import b64encode

import itsdangerous
import pytest
from starlette.applications import Starlette
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.testclient import TestClient

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, AppFactory, cookie_value, make_app, set_cookie_headers

LOGGER = "blake2sign_web.starlette"


def starlette_cookie(data: dict[str, object], **options: object) -> str:
    """A cookie issued by Starlette's real SessionMiddleware."""
    options.setdefault("secret_key", SECRET)
    client = TestClient(make_app(StarletteSessionMiddleware, **options))
    return cookie_value(set_cookie_headers(client.post("/write", json=data))[0])


class PastTimestampSigner(itsdangerous.TimestampSigner):
    def get_timestamp(self) -> int:
        return int(time.time()) - 3600


def old_starlette_cookie(data: dict[str, object]) -> str:
    """Starlette's format, signed an hour ago."""
    return PastTimestampSigner(SECRET).sign(b64encode(json.dumps(data).encode())).decode()


def test_a_starlette_cookie_is_accepted_and_reissued_in_our_format(client_for: AppFactory) -> None:
    legacy = starlette_cookie({"user": 42, "name": "Zoë"})
    client = client_for(migrate_starlette_cookies=True)
    response = client.get("/read", headers={"cookie": f"session={legacy}"})
    assert response.json() == {"user": 42, "name": "Zoë"}
    [header] = set_cookie_headers(response)
    ours = cookie_value(header)
    assert ours != legacy
    assert SerializerSigner(SECRET, purpose="starlette.sessions:session").loads(ours) == {"user": 42, "name": "Zoë"}
    assert header.endswith("; path=/; Max-Age=1209600; httponly; samesite=lax")
    # The new cookie stands on its own, without migration.
    assert client_for().get("/read", headers={"cookie": f"session={ours}"}).json() == {"user": 42, "name": "Zoë"}


def test_a_migrated_session_can_be_changed_in_the_same_request(client_for: AppFactory) -> None:
    client = client_for(migrate_starlette_cookies=True)
    response = client.post("/write", json={"b": 2}, headers={"cookie": f"session={starlette_cookie({'a': 1})}"})
    assert response.json() == {"a": 1, "b": 2}
    ours = cookie_value(set_cookie_headers(response)[0])
    assert client_for().get("/read", headers={"cookie": f"session={ours}"}).json() == {"a": 1, "b": 2}


def test_a_starlette_browser_session_cookie_is_accepted(client_for: AppFactory) -> None:
    legacy = starlette_cookie({"a": 1}, max_age=None)
    client = client_for(max_age=None, migrate_starlette_cookies=True)
    assert client.get("/read", headers={"cookie": f"session={legacy}"}).json() == {"a": 1}


def test_max_age_applies_to_starlette_cookies(client_for: AppFactory) -> None:
    legacy = old_starlette_cookie({"a": 1})
    assert client_for(max_age=7200, migrate_starlette_cookies=True).get(
        "/read", headers={"cookie": f"session={legacy}"}
    ).json() == {"a": 1}
    assert (
        client_for(max_age=1800, migrate_starlette_cookies=True)
        .get("/read", headers={"cookie": f"session={legacy}"})
        .json()
        == {}
    )


def test_a_starlette_cookie_under_a_fallback_secret_is_accepted(client_for: AppFactory) -> None:
    legacy = starlette_cookie({"a": 1}, secret_key="the-old-secret-0123456789")
    client = client_for(fallback_secrets=["the-old-secret-0123456789"], migrate_starlette_cookies=True)
    assert client.get("/read", headers={"cookie": f"session={legacy}"}).json() == {"a": 1}


def test_bad_starlette_cookies_give_an_empty_session_and_a_warning(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    good = starlette_cookie({"user": 42})
    data, timestamp, signature = good.split(".")
    signer = itsdangerous.TimestampSigner(SECRET)
    bad = {
        "tampered data": b64encode(b'{"user": 1}').decode() + f".{timestamp}.{signature}",
        # The first character: the last one carries two bits itsdangerous' base64 ignores.
        "tampered signature": f"{data}.{timestamp}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}",
        "another secret": starlette_cookie({"user": 42}, secret_key="another-secret-0123456789"),
        "not base64 JSON": signer.sign(b"not json at all").decode(),
        "not a dict": signer.sign(b64encode(b"[1, 2]")).decode(),
        "three dots of garbage": "a.b.c",
    }
    client = client_for(migrate_starlette_cookies=True)
    for name, cookie in bad.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            response = client.get("/read", headers={"cookie": f"session={cookie}"})
        assert response.status_code == 200, name
        assert response.json() == {}, name
        assert set_cookie_headers(response) == [], name
        [record] = [r for r in caplog.records if r.name == LOGGER]
        assert record.getMessage() == "Rejected session cookie 'session': not a valid Starlette session cookie"


def test_a_starlette_cookie_holding_an_integer_over_64_bits_is_migrated(client_for: AppFactory) -> None:
    """Starlette's json wrote it; the core's json fallback re-issues it (needs the core's orjson fallback)."""
    signer = itsdangerous.TimestampSigner(SECRET)
    cookie = signer.sign(b64encode(b'{"n": 18446744073709551616}')).decode()
    client = client_for(migrate_starlette_cookies=True)
    response = client.get("/read", headers={"cookie": f"session={cookie}"})
    assert response.status_code == 200
    assert response.json() == {"n": 2**64}
    assert len(set_cookie_headers(response)) == 1  # re-issued in this project's format
    client.cookies.clear()
    client.cookies["session"] = cookie_value(set_cookie_headers(response)[0])
    assert client.get("/read").json() == {"n": 2**64}


def test_without_migration_a_starlette_cookie_is_rejected(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = client_for().get("/read", headers={"cookie": f"session={starlette_cookie({'a': 1})}"})
    assert response.json() == {}
    assert "Rejected session cookie 'session'" in caplog.text


def test_our_own_cookies_still_work_with_migration_on(client_for: AppFactory) -> None:
    client = client_for(migrate_starlette_cookies=True)
    client.post("/write", json={"a": 1})
    response = client.get("/read")
    assert response.json() == {"a": 1}
    assert set_cookie_headers(response) == []  # not re-issued


def test_migration_without_itsdangerous_fails_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "itsdangerous", None)  # what Python does when it is not installed
    with pytest.raises(ImportError, match=r"migrate_starlette_cookies=True.*pip install itsdangerous"):
        SessionMiddleware(Starlette(), secret_key=SECRET, migrate_starlette_cookies=True)
    SessionMiddleware(Starlette(), secret_key=SECRET)  # without migration itsdangerous is not needed
