"""No cookie over the browser limit is ever sent: a clear exception by default, or a logged error and no Set-Cookie."""

from __future__ import annotations

import logging
import re
import secrets

import pytest

from blake2sign_web.starlette.sessions import BROWSER_COOKIE_LIMIT, SessionCookieTooLarge

from .conftest import AppFactory, set_cookie_headers

LOGGER = "blake2sign_web.starlette"


def incompressible(characters: int) -> str:
    return secrets.token_urlsafe(characters)[:characters]


def test_an_oversized_session_raises_a_clear_error(client_for: AppFactory) -> None:
    client = client_for()
    with pytest.raises(SessionCookieTooLarge, match=r"over the browser limit of 4096 bytes") as raised:
        client.post("/write", json={"blob": incompressible(5000)})
    assert "request.session" in str(raised.value)  # says what to do


def test_the_developer_sees_a_500_when_server_exceptions_are_not_raised(client_for: AppFactory) -> None:
    client = client_for(raise_server_exceptions=False)
    response = client.post("/write", json={"blob": incompressible(5000)})
    assert response.status_code == 500
    assert set_cookie_headers(response) == []


def test_log_policy_sends_no_cookie_and_the_client_keeps_its_previous_one(
    client_for: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = client_for(on_oversize="log")
    client.post("/write", json={"user": 1})
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        response = client.post("/write", json={"blob": incompressible(5000)})
    assert response.status_code == 200
    assert set_cookie_headers(response) == []
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.ERROR
    assert "4096" in record.getMessage()
    assert "previous session cookie" in record.getMessage()
    assert client.get("/read").json() == {"user": 1}


@pytest.mark.parametrize("domain", [None, "a-rather-long-subdomain-name.example.org"])
def test_the_limit_counts_name_value_and_attributes(client_for: AppFactory, domain: str | None) -> None:
    """Walk the session size across the limit: everything sent fits, everything over it is refused."""
    base_url = f"http://{domain}" if domain else "http://testserver"
    client = client_for(compression=None, session_cookie="a_long_session_cookie_name", domain=domain, base_url=base_url)
    outcomes: list[int | None] = []  # header length sent, or None when refused
    for size in range(2850, 3070, 3):
        try:
            response = client.post("/write", json={"blob": "x" * size})
        except SessionCookieTooLarge:
            outcomes.append(None)
            continue
        [header] = set_cookie_headers(response)
        outcomes.append(len(header.encode("latin-1")))
    sent = [length for length in outcomes if length is not None]
    assert sent, "no size under the limit was tried"
    assert None in outcomes, "no size over the limit was tried"
    assert outcomes == sent + [None] * (len(outcomes) - len(sent))  # refused only once over the limit
    assert max(sent) <= BROWSER_COOKIE_LIMIT
    assert max(sent) > BROWSER_COOKIE_LIMIT - 8  # the whole limit is used, not a smaller one


def test_a_large_but_compressible_session_fits(client_for: AppFactory) -> None:
    client = client_for()
    data = {"rows": [{"id": i, "status": "active", "tags": ["alpha", "beta"]} for i in range(150)]}
    response = client.post("/write", json=data)
    [header] = set_cookie_headers(response)
    assert len(header) < 1500
    assert client.get("/read").json() == data


def test_the_oversize_message_is_one_sentence_naming_cookie_size_limit_and_remedy(client_for: AppFactory) -> None:
    client = client_for(session_cookie="sid")
    with pytest.raises(SessionCookieTooLarge) as raised:
        client.post("/write", json={"blob": incompressible(5000)})
    message = str(raised.value)
    match = re.fullmatch(
        r"Session cookie 'sid' would take (\d+) bytes, over the browser limit of 4096 bytes: "
        r"store less in request\.session \(keep an id and load the rest server-side\), or pass chunked=True to split "
        r"it over several cookies\.",
        message,
    )
    assert match is not None, message
    assert 5000 < int(match.group(1)) < 8000
    assert "limit" not in message.split(":", 1)[1]  # never suggests raising the (capped) limit


def test_a_session_over_the_readable_json_size_says_so(client_for: AppFactory) -> None:
    client = client_for()
    with pytest.raises(SessionCookieTooLarge) as raised:
        client.post("/write", json={"blob": "x" * 300_000})  # compresses well, but would not be read back
    assert str(raised.value) == (
        "Session cookie 'session' holds over 262144 bytes of JSON, over the browser limit of 4096 bytes: "
        "store less in request.session (keep an id and load the rest server-side)."
    )
