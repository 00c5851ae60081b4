"""typed=, encrypt=, decrypt=, compress_encrypted=: passed to the core signer; outdated cookies re-issued when used."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest
from starlette.requests import Request

from blake2sign_web import SerializerSigner
from blake2sign_web.starlette import SessionMiddleware
from blake2sign_web.starlette.sessions import STARLETTE_MARKS_ACCESS

from .conftest import SECRET, AppFactory, cookie_value, set_cookie_headers
from .test_lazy_session import build

PURPOSE = "starlette.sessions:session"


async def app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("never called")


def test_an_encrypted_session_hides_its_content(client_for: AppFactory) -> None:
    client = client_for(encrypt=True)
    [header] = set_cookie_headers(client.post("/write", json={"email": "ada@example.com"}))
    token = cookie_value(header)
    assert token.startswith("x")  # encryption.MARKER
    assert "ada" not in token
    assert SerializerSigner(SECRET, purpose=PURPOSE, decrypt=True).loads(token) == {"email": "ada@example.com"}
    assert client.get("/read").json() == {"email": "ada@example.com"}


def test_a_signed_cookie_from_before_is_read_and_reissued_encrypted_when_used(client_for: AppFactory) -> None:
    signed = SerializerSigner(SECRET, purpose=PURPOSE).dumps({"user_id": 42})
    client = client_for(encrypt=True)
    client.cookies["session"] = signed
    response = client.get("/read")
    assert response.json() == {"user_id": 42}
    [header] = set_cookie_headers(response)
    assert cookie_value(header).startswith("x")
    assert set_cookie_headers(client.get("/read")) == []  # encrypted now: nothing more to re-issue


@pytest.mark.skipif(not STARLETTE_MARKS_ACCESS, reason="Starlette before 1.0 loads every session")
def test_an_outdated_cookie_on_a_request_that_does_not_use_the_session_costs_nothing() -> None:
    client, signer, _ = build(lambda request: None, encrypt=True)
    client.cookies["session"] = SerializerSigner(SECRET, purpose=PURPOSE).dumps({"user_id": 42})
    response = client.get("/")
    assert signer.verified == 0
    assert set_cookie_headers(response) == []


def test_decrypt_reads_encrypted_and_writes_signed(client_for: AppFactory) -> None:
    encrypted = SerializerSigner(SECRET, purpose=PURPOSE, encrypt=True).dumps({"user_id": 42})
    client = client_for(decrypt=True)
    client.cookies["session"] = encrypted
    response = client.get("/read")
    assert response.json() == {"user_id": 42}
    # The first step of turning encryption on (or the way back): read as it is, not re-issued...
    assert set_cookie_headers(response) == []
    # ...and a write is signed, for processes that do not decrypt yet.
    [header] = set_cookie_headers(client.post("/write", json={"n": 1}))
    assert SerializerSigner(SECRET, purpose=PURPOSE).loads(cookie_value(header)) == {"user_id": 42, "n": 1}


def test_a_plain_middleware_refuses_an_encrypted_cookie(client_for: AppFactory) -> None:
    client = client_for()
    client.cookies["session"] = SerializerSigner(SECRET, purpose=PURPOSE, encrypt=True).dumps({"user_id": 42})
    assert client.get("/read").json() == {}


def test_compress_encrypted_is_passed_through(client_for: AppFactory) -> None:
    big = {"text": "the same words again " * 60}
    plain = cookie_value(set_cookie_headers(client_for(encrypt=True).post("/write", json=big))[0])
    packed = cookie_value(
        set_cookie_headers(client_for(encrypt=True, compress_encrypted=True).post("/write", json=big))[0]
    )
    assert len(packed) < len(plain) / 3


TYPED_VALUES = {
    "at": datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc),
    "id": UUID("12345678123456781234567812345678"),
    "price": Decimal("1.10"),
    "pair": (1, 2),
    "tags": {"a"},
    "raw": b"\x00\xff",
}


async def store_typed(request: Request) -> Any:
    from starlette.responses import PlainTextResponse

    request.session.update(TYPED_VALUES)
    return PlainTextResponse("ok")


async def read_typed(request: Request) -> Any:
    from starlette.responses import PlainTextResponse

    same = dict(request.session) == TYPED_VALUES and type(request.session["pair"]) is tuple
    return PlainTextResponse("same" if same else repr(dict(request.session)))


@pytest.mark.parametrize("encrypt", [False, True])
def test_typed_values_come_back_as_their_types(encrypt: bool) -> None:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route
    from starlette.testclient import TestClient

    middleware = Middleware(SessionMiddleware, secret_key=SECRET, typed=True, encrypt=encrypt)
    routes = [Route("/store", store_typed), Route("/read", read_typed)]
    client = TestClient(Starlette(routes=routes, middleware=[middleware]))
    client.get("/store")
    assert client.get("/read").text == "same"


def test_typed_carries_the_timeouts_envelope(client_for: AppFactory) -> None:
    client = client_for(typed=True, absolute_timeout=3600)
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    value = SerializerSigner(SECRET, purpose=PURPOSE, typed=True).loads(cookie_value(header))
    assert value[0] == {"a": 1}
    assert set(value[1]) == {"c"}
    assert client.get("/read").json() == {"a": 1}


@pytest.mark.parametrize("name", ["typed", "encrypt", "decrypt", "compress_encrypted"])
def test_the_options_take_only_booleans(name: str) -> None:
    with pytest.raises(TypeError, match=f"SessionMiddleware {name} must be True or False"):
        SessionMiddleware(app, secret_key=SECRET, **{name: 1})  # type: ignore[arg-type]


def test_compress_encrypted_needs_encrypt() -> None:
    with pytest.raises(ValueError, match="encrypt=True"):
        SessionMiddleware(app, secret_key=SECRET, compress_encrypted=True)


def test_format_1_cannot_encrypt() -> None:
    with pytest.raises(ValueError, match="format=2"):
        SessionMiddleware(app, secret_key=SECRET, encrypt=True, format=1)


@pytest.mark.parametrize("option", ["encrypt", "decrypt"])
def test_without_cryptography_construction_names_the_extra(monkeypatch: pytest.MonkeyPatch, option: str) -> None:
    monkeypatch.setitem(sys.modules, "cryptography.hazmat.primitives.ciphers.aead", None)
    with pytest.raises(ImportError, match=r'pip install "blake2sign-web\[encrypted\]"') as raised:
        SessionMiddleware(app, secret_key=SECRET + "-no-cryptography", **{option: True})
    assert f"{option}=True" in str(raised.value)
