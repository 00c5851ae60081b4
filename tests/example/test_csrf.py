"""The FastAPI example's CSRF check: a forged POST is refused with 403 and changes nothing; its own forms work.

A cross-site form needs no cookie to log a visitor in as the attacker's account or switch
their engine, and a same-site one (another subdomain, another port of 127.0.0.1) carries
the SameSite=Lax session cookie: every unsafe request needs the session's token and, from
a browser, this site's origin.
"""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from example_project.fastapi_site.engines import CHOICE_COOKIE

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
LOGIN = {"username": "demo", "password": "demo"}
#: What a browser sends with a form submitted from this site's own page (TestClient's host is testserver).
SAME_ORIGIN = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
ENGINES = ["ours", "starlette", "starsessions"]


@pytest.fixture
def client(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("EXAMPLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EXAMPLE_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens: no single-use links
    from example_project.fastapi_site import app

    return TestClient(app.app)


def token(client: TestClient, path: str = "/") -> str:
    """The token in the page's forms ("" if it has none, so that a POST still goes out)."""
    match = TOKEN.search(client.get(path).text)
    return match.group(1) if match else ""


def logged_in_with_a_teapot(client: TestClient, engine: str) -> None:
    client.cookies.set(CHOICE_COOKIE, engine)
    page = client.post("/accounts/login", data={**LOGIN, "csrf_token": token(client)}, headers=SAME_ORIGIN)
    assert "Log out demo" in page.text
    page = client.post("/cart/add", data={"product": "teapot", "csrf_token": token(client)}, headers=SAME_ORIGIN)
    assert "Added Teapot to your cart." in page.text


def state(client: TestClient) -> tuple[bool, str, str, str]:
    """Logged in?, the cart, the engine and the session's token: what a forged request must leave as they were."""
    page = client.get("/cart").text
    match = TOKEN.search(page)
    engine = re.search(r'<option value="([^"]+)" selected>', page)
    assert engine is not None
    return "Log out demo" in page, page.split('id="cart"')[1][:200], engine.group(1), match.group(1) if match else ""


#: Each state-changing form of the site, as an attacker's page would post it.
FORMS: dict[str, dict[str, str]] = {
    "/accounts/login": LOGIN,
    "/accounts/logout": {},
    "/engine": {"engine": "starlette", "next": "/"},
    "/cart/add": {"product": "kettle"},
    "/cart/empty": {},
}


def forgeries(client: TestClient) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Form fields and headers of each kind of forged request (some with the visitor's own token)."""
    real = token(client)
    return {
        "no token": ({}, {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}),
        "no token, no browser headers": ({}, {}),
        "empty token": ({"csrf_token": ""}, {}),
        "wrong token": ({"csrf_token": "A" * 43}, {}),
        "non-ASCII token": ({"csrf_token": "é" * 43}, {}),
        "wrong header token": ({}, {"X-CSRF-Token": "A" * 43}),
        "foreign Origin": ({"csrf_token": real}, {"Origin": "https://evil.example"}),
        "same-site Origin": ({"csrf_token": real}, {"Origin": "http://testserver:8000"}),
        "null Origin": ({"csrf_token": real}, {"Origin": "null"}),
        "cross-site fetch": ({"csrf_token": real}, {"Sec-Fetch-Site": "cross-site", "Origin": "http://testserver"}),
        "same-site fetch": ({"csrf_token": real}, {"Sec-Fetch-Site": "same-site"}),
    }


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", list(FORMS))
def test_a_forged_post_is_refused_and_changes_nothing(client: TestClient, engine: str, path: str) -> None:
    logged_in_with_a_teapot(client, engine)
    for kind, (fields, headers) in forgeries(client).items():
        before = state(client)
        response = client.post(path, data={**FORMS[path], **fields}, headers=headers, follow_redirects=False)
        assert response.status_code == 403, (kind, response.status_code)
        assert "CSRF" in response.text, kind
        assert CHOICE_COOKIE not in response.headers.get("set-cookie", ""), kind
        if engine == "ours":  # Starlette's middleware and starsessions re-issue every non-empty session
            assert "set-cookie" not in response.headers, kind
        assert state(client) == before, kind
    assert state(client)[0]  # still logged in, through every forgery


@pytest.mark.parametrize("engine", ENGINES)
def test_a_forged_login_does_not_log_the_visitor_in(client: TestClient, engine: str) -> None:
    """Login CSRF needs no session cookie: the visitor's browser would keep the response's Set-Cookie."""
    client.cookies.set(CHOICE_COOKIE, engine)
    response = client.post("/accounts/login", data=LOGIN, follow_redirects=False)  # a visitor with no session yet
    assert response.status_code == 403
    assert "set-cookie" not in response.headers
    assert "Log out demo" not in client.get("/").text
    page = client.post("/accounts/login", data={**LOGIN, "csrf_token": token(client)}, headers=SAME_ORIGIN)
    assert "Log out demo" in page.text  # the same form from the site's own page works


def test_a_forged_engine_switch_keeps_the_engine(client: TestClient) -> None:
    response = client.post("/engine", data=FORMS["/engine"], follow_redirects=False)
    assert response.status_code == 403
    assert CHOICE_COOKIE not in response.headers.get("set-cookie", "")
    assert '<option value="ours" selected>' in client.get("/").text


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("headers", [SAME_ORIGIN, {"Origin": "http://testserver"}, {"Sec-Fetch-Site": "none"}, {}])
def test_the_sites_own_forms_work(client: TestClient, engine: str, headers: dict[str, str]) -> None:
    """Same origin by Sec-Fetch-Site or Origin, or from no browser at all (curl, a test client): the token decides."""
    logged_in_with_a_teapot(client, engine)
    page = client.post("/cart/empty", data={"csrf_token": token(client)}, headers=headers)
    assert "Your cart is empty." in page.text
    page = client.post("/accounts/logout", data={"csrf_token": token(client)}, headers=headers)
    assert "You are logged out." in page.text
    assert "Log out demo" not in page.text
    page = client.post("/engine", data={"engine": "starlette", "csrf_token": token(client)}, headers=headers)
    assert '<option value="starlette" selected>' in page.text


def test_scripts_send_the_token_in_a_header(client: TestClient) -> None:
    """A fetch() from the site's pages: X-CSRF-Token instead of a form field, whatever the body."""
    headers = {**SAME_ORIGIN, "X-CSRF-Token": token(client)}
    page = client.post("/accounts/login", content=b"username=demo&password=demo", headers=headers)
    assert page.status_code == 200
    assert "Log out demo" in page.text


def test_the_token_changes_at_login_and_logout(client: TestClient) -> None:
    anonymous = token(client)
    client.post("/accounts/login", data={**LOGIN, "csrf_token": anonymous})
    logged_in = token(client)
    assert logged_in not in ("", anonymous)
    # The token from before login no longer works (a token planted before login is worth nothing after).
    assert client.post("/accounts/logout", data={"csrf_token": anonymous}).status_code == 403
    client.post("/accounts/logout", data={"csrf_token": logged_in})
    assert token(client) not in ("", anonymous, logged_in)


def test_every_form_carries_the_token(client: TestClient) -> None:
    client.post("/accounts/login", data={**LOGIN, "csrf_token": token(client)})
    client.post("/cart/add", data={"product": "teapot", "csrf_token": token(client)})
    for path in ["/", "/cart", "/accounts/login", "/downloads"]:
        html = client.get(path).text
        forms = re.findall(r"<form\b.*?</form>", html, re.S)
        assert forms, path
        for form in forms:
            assert 'name="csrf_token"' in form, (path, form)


def test_a_large_form_is_refused_before_it_is_read_whole(client: TestClient) -> None:
    body = b"csrf_token=" + b"A" * (128 * 1024)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    assert client.post("/cart/add", content=body, headers=headers).status_code == 413
