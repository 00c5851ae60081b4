"""max_age as Starlette takes it: 0 and negative values are accepted, and then every cookie has expired."""

from __future__ import annotations

import logging

import pytest
from starlette.middleware.sessions import SessionMiddleware as StarletteSessionMiddleware
from starlette.testclient import TestClient

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, AppFactory, cookie_attributes, cookie_value, make_app, set_cookie_headers

LOGGER = "blake2sign_web.starlette"


@pytest.mark.parametrize("max_age", [0, -1, -3600])
def test_max_age_zero_or_negative_is_sent_as_starlette_sends_it(max_age: int) -> None:
    headers = []
    for middleware in (StarletteSessionMiddleware, SessionMiddleware):
        client = TestClient(make_app(middleware, secret_key=SECRET, max_age=max_age))
        [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
        headers.append(cookie_attributes(header))
    assert f"Max-Age={max_age};" in headers[1]
    if max_age == 0 and "Max-Age" not in headers[0]:
        # Starlette before 1.0 writes no Max-Age for 0 (a browser-session cookie); ours, like newer
        # Starlette's, sends Max-Age=0 so the browser drops it at once. Every other attribute is the same.
        assert headers[0] == headers[1].replace(" Max-Age=0;", "")
    else:
        assert headers[0] == headers[1]


@pytest.mark.parametrize("max_age", [0, -1])
def test_with_max_age_zero_or_negative_no_cookie_is_accepted(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture, max_age: int
) -> None:
    client = client_for(max_age=max_age)
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    # A client that ignores Max-Age sends the cookie back at once: it has already expired.
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        response = client.get("/read", headers={"cookie": f"session={cookie_value(header)}"})
    assert response.status_code == 200
    assert response.json() == {}
    assert "expired" in caplog.text
    assert cookie_value(header) not in caplog.text


def test_a_positive_max_age_still_accepts_fresh_cookies(client_for: AppFactory) -> None:
    client = client_for(max_age=60)
    client.post("/write", json={"a": 1})
    assert client.get("/read").json() == {"a": 1}
