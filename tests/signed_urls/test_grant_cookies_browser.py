"""A real browser by grant cookie: chromium (Playwright) gets the cookie from the granting page and fetches files
under the folder with plain URLs, from gunicorn (Django) and uvicorn (Starlette); its jar keeps the cookie to the
folder, HttpOnly keeps it from the page's script. Skips when chromium or Playwright is absent, except under CI=true,
where it fails."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web.link_cookies import grant_name

pytestmark = pytest.mark.server

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: Fetches each path from the page's origin with the browser's cookies: [status, body] each.
FETCH = """paths => Promise.all(paths.map(path => fetch(path).then(async r => [r.status, await r.text()])))"""


def missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is needed in CI")
    pytest.skip(f"{what} is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        missing("Debian's chromium package (apt-get install chromium), /usr/bin/chromium,")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package (pip install -e . --group test)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_chromium_fetches_a_granted_folder_by_cookie(
    browser: Any, server: str, served_root: Path, request: Any
) -> None:
    (served_root / "sub" / "second.txt").write_text("second")
    (served_root / "subway").mkdir()
    (served_root / "subway" / "x.txt").write_text("x")
    base = request.getfixturevalue(server)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(base + "/grant/sub/")
        assert page.inner_text("body") == "granted"
        (cookie,) = [c for c in context.cookies() if c["name"] == grant_name("/files/sub/")]
        assert (cookie["path"], cookie["httpOnly"], cookie["sameSite"], cookie["secure"]) == (
            "/files/sub/", True, "Lax", False
        )  # fmt: skip
        assert grant_name("/files/sub/") not in page.evaluate("document.cookie")  # HttpOnly
        paths = ["/files/sub/second.txt", "/files/sub/caf%C3%A9%20menu.txt", "/files/report.bin", "/files/subway/x.txt"]
        got = page.evaluate(FETCH, paths)
        assert got[:2] == [[200, "second"], [200, "menu"]]
        assert [status for status, _ in got[2:]] == [403, 403]
    finally:
        context.close()
