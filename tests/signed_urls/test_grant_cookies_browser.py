"""A real browser by grant cookie: chromium (Playwright) gets the cookie from the granting page and fetches files
under the folder with plain URLs, from gunicorn (Django) and uvicorn (Starlette); its jar keeps the cookie to the
folder, HttpOnly keeps it from the page's script. Skips when chromium or Playwright is absent, except under CI=true,
where it fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web.links.grants import grant_name
from tests.browser import chromium

pytestmark = pytest.mark.server

#: Fetches each path from the page's origin with the browser's cookies: [status, body] each.
FETCH = """paths => Promise.all(paths.map(path => fetch(path).then(async r => [r.status, await r.text()])))"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium()


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
