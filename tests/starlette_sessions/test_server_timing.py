"""SessionMiddleware(server_timing=True): each response says how long the session's load and save took."""

from __future__ import annotations

import re

import pytest

from blake2sign_web.starlette import SessionMiddleware

from .conftest import AppFactory, cookie_value, make_app, set_cookie_headers

TIMING = re.compile(r"^b2sw-load;dur=(?P<load>[0-9.]+), b2sw-save;dur=(?P<save>[0-9.]+)$")


def durations(header: str) -> tuple[float, float]:
    match = TIMING.match(header)
    assert match is not None, header
    return float(match["load"]), float(match["save"])


def test_on_every_response_carries_load_and_save_durations(client_for: AppFactory) -> None:
    client = client_for(server_timing=True)
    written = client.post("/write", json={"cart": ["secret-item-name"]})
    read = client.get("/read")
    cleared = client.post("/clear")
    plain = client.get("/plain")
    for response in (written, read, cleared, plain):
        durations(response.headers["server-timing"])  # both parse as floats
    token = cookie_value(set_cookie_headers(written)[0])
    for response in (written, read):
        assert token not in response.headers["server-timing"]
        assert "secret-item-name" not in response.headers["server-timing"]
    assert read.json() == {"cart": ["secret-item-name"]}
    assert set_cookie_headers(plain) == []  # timing alone writes no cookie
    assert "vary" not in plain.headers


def test_off_by_default_no_header(client_for: AppFactory) -> None:
    client = client_for()
    assert "server-timing" not in client.post("/write", json={"a": 1}).headers
    assert "server-timing" not in client.get("/read").headers
    assert "server-timing" not in client.get("/plain").headers


def test_server_timing_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="server_timing"):
        make_app(SessionMiddleware, secret_key="x" * 40, server_timing="yes").build_middleware_stack()
