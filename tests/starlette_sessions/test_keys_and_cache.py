"""Secret rotation with fallbacks, and one signer per configuration per process, never one per request."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.datastructures import Secret
from starlette.testclient import TestClient

from blake2sign_web import signer_cache_info
from blake2sign_web.starlette import SessionMiddleware

from .conftest import ROUTES, SECRET, AppFactory, cookie_value, set_cookie_headers

OLD = "the-old-secret-that-is-being-rotated-out-0123456789"


def test_a_session_from_a_fallback_secret_is_read_and_reissued(client_for: AppFactory) -> None:
    old_cookie = cookie_value(set_cookie_headers(client_for(secret_key=OLD).post("/write", json={"u": 1}))[0])

    rotated = client_for(secret_key=SECRET, fallback_secrets=[OLD])
    response = rotated.get("/read", headers={"cookie": f"session={old_cookie}"})
    assert response.json() == {"u": 1}
    [header] = set_cookie_headers(response)  # re-signed under the current secret at once
    new_cookie = cookie_value(header)
    assert new_cookie != old_cookie

    current_only = client_for(secret_key=SECRET)
    assert current_only.get("/read", headers={"cookie": f"session={new_cookie}"}).json() == {"u": 1}
    assert current_only.get("/read", headers={"cookie": f"session={old_cookie}"}).json() == {}


def test_a_session_under_the_current_secret_is_not_reissued(client_for: AppFactory) -> None:
    client = client_for(fallback_secrets=[OLD])
    client.post("/write", json={"u": 1})
    assert set_cookie_headers(client.get("/read")) == []


def test_secrets_may_be_starlette_secrets(client_for: AppFactory) -> None:
    old_cookie = cookie_value(set_cookie_headers(client_for(secret_key=OLD).post("/write", json={"u": 1}))[0])
    client = client_for(secret_key=Secret(SECRET), fallback_secrets=[Secret(OLD)])
    assert client.get("/read", headers={"cookie": f"session={old_cookie}"}).json() == {"u": 1}
    plain = client_for(secret_key=SECRET)
    new_cookie = cookie_value(set_cookie_headers(client.post("/write", json={"v": 2}))[0])
    assert plain.get("/read", headers={"cookie": f"session={new_cookie}"}).json() == {"u": 1, "v": 2}


def test_no_signer_is_built_per_request() -> None:
    app = SessionMiddleware(Starlette(routes=ROUTES), secret_key="a-secret-used-by-this-test-only-42")
    client = TestClient(app)
    client.post("/write", json={"warm": True})
    before = signer_cache_info().constructed
    for i in range(50):
        client.post("/write", json={"i": i})
        assert client.get("/read").json()["i"] == i
    with client.websocket_connect("/ws") as websocket:
        websocket.receive_json()
    assert signer_cache_info().constructed == before


def test_one_signer_per_configuration() -> None:
    inner = Starlette(routes=ROUTES)
    first = SessionMiddleware(inner, secret_key="a-secret-used-by-this-test-only-43")
    second = SessionMiddleware(inner, secret_key="a-secret-used-by-this-test-only-43")
    other_name = SessionMiddleware(inner, secret_key="a-secret-used-by-this-test-only-43", session_cookie="sid")
    assert first.signer is second.signer
    assert other_name.signer is not first.signer
    assert other_name.signer.purpose != first.signer.purpose
