"""Scanner-safe links (``consume_on="post"``) in a Flask app behind Flask-WTF's ``CSRFProtect``: the built-in
confirmation page carries Flask-WTF's token, so its button passes the check that guards every POST of the app,
through Flask's test client and in a real browser (Debian's chromium, driven by Playwright) on gunicorn."""

from __future__ import annotations

import os
import re
import site
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, missing
from tests.redis_server import PATIENT_TIMEOUT, RedisServer
from tests.servers import ROOT, free_port, running_server

from .confirm_apps import CONTENT, write_files
from .conftest import keys_in
from .flask_app import make_signer

try:
    import flask_wtf
except ImportError:  # pragma: no cover: the test group installs it
    flask_wtf = None

#: The hidden input of Flask-WTF's token in the built-in page's form.
TOKEN_FIELD = re.compile(rb'<form method="post"><input type="hidden" name="csrf_token" value="([^"]+)"><button')


@pytest.fixture(autouse=True)
def needs_flask_wtf() -> None:
    if flask_wtf is None:
        missing("Flask-WTF (pip install -e . --group test)")


@pytest.fixture
def app(redis_server: RedisServer, tmp_path: Path) -> Any:
    from blake2sign_web.flask.revocation import RedisStore

    from .flask_csrf_app import build_flask_csrf

    store = RedisStore(redis_server.url, timeout=PATIENT_TIMEOUT, key_prefix="tests")
    yield build_flask_csrf(write_files(tmp_path / "served"), store)
    store.close()


@pytest.mark.parametrize("path", ["/sign-in", "/files/report.bin"])
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_built_in_page_carries_flask_wtfs_token(
    app: Any, redis_server: RedisServer, path: str, scheme: str
) -> None:
    """Its POST passes CSRFProtect (on https, with the origin-only Referer the page's policy sends); a POST without
    the token gets CSRFProtect's 400 and never reaches the link."""
    client, link = app.test_client(), make_signer().sign(path, expires_in=600, single_use=True, consume_on="post")
    base = f"{scheme}://localhost"
    refused = client.post(link, base_url=base, headers={"Referer": base + "/"})
    assert (refused.status_code, keys_in(redis_server)) == (400, 0)
    assert b"The CSRF token is missing." in refused.data
    page = client.get(link, base_url=base)
    assert (page.status_code, page.headers["Cache-Control"]) == (200, "no-store")
    found = TOKEN_FIELD.search(page.data)
    assert found is not None, page.data
    form = {"csrf_token": found.group(1).decode()}
    headers = {"Referer": base + "/", "Sec-Fetch-Site": "same-origin"}
    used = client.post(link, base_url=base, data=form, headers=headers)
    assert used.status_code == 200
    assert used.data == (b"signed in" if path == "/sign-in" else CONTENT)
    assert client.post(link, base_url=base, data=form, headers=headers).status_code == 410  # used up
    # Another site's page posting the form from this browser: the link's own cross-site check still refuses it.
    other = make_signer().sign(path, expires_in=600, single_use=True, consume_on="post")
    forged = client.post(other, base_url=base, data=form, headers={**headers, "Sec-Fetch-Site": "cross-site"})
    assert forged.status_code == 403


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium()


@pytest.fixture
def gunicorn(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    root, port = write_files(tmp_path / "served"), free_port()
    bind = ["--bind", f"127.0.0.1:{port}", "--workers", "1"]
    command = [str(Path(sys.executable).parent / "gunicorn"), *bind, "tests.signed_urls.flask_csrf_app:app_from_env()"]
    # The server imports Flask-WTF from where this process found it (PYTHONPATH, when not in the environment).
    found = str(Path(flask_wtf.__file__).parents[1]) if flask_wtf else ""
    path = str(ROOT) if found in ("", *site.getsitepackages()) else os.pathsep.join([str(ROOT), found])
    env = {"BLAKE2SIGN_SERVED_ROOT": str(root), "BLAKE2SIGN_REDIS_URL": redis_server.url, "PYTHONPATH": path}
    with running_server(command, port, **env) as base:
        yield base


@pytest.mark.server
@pytest.mark.parametrize("path", ["/sign-in", "/files/report.bin"])
def test_a_browser_passes_flask_wtfs_check_with_the_built_in_page(
    browser: Any, gunicorn: str, redis_server: RedisServer, path: str
) -> None:
    """Chromium shows the page (a GET uses nothing up) and presses its button: the download, or the signed-in view."""
    link = gunicorn + make_signer().sign(path, expires_in=600, single_use=True, consume_on="post")
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(link)
        assert page.title() == "Continue"
        assert keys_in(redis_server) == 0
        if path == "/sign-in":
            with page.expect_navigation():
                page.click("button")
            assert page.inner_text("body") == "signed in"
        else:
            with page.expect_download() as download:
                page.click("button")
            assert Path(download.value.path()).read_bytes() == CONTENT
        assert keys_in(redis_server) == 1
    finally:
        context.close()
