"""Both example sites in a real browser: Debian's chromium, driven by Playwright, against real servers.

Log in, add to the cart and see the flash message, download through signed links (bytes
checked, Range on the large file), read Server-Timing, log out; the cost panel's chart is
drawn; forms posted from another origin of the same site are refused. Skips when chromium or
Playwright is absent, except under CI=true, where it fails: CI installs Debian's chromium.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from example_project.files import LARGE, README
from tests.browser import chromium
from tests.servers import ROOT, free_port, running_server

pytestmark = pytest.mark.server

TIMING = re.compile(r"^b2sw-load;dur=([0-9.]+), b2sw-save;dur=([0-9.]+)$")
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("example-data"))
    migrate = [sys.executable, "example_project/django_site/manage.py", "migrate", "--noinput", "-v", "0"]
    env = {**os.environ, "EXAMPLE_DATA_DIR": path, "DJANGO_SETTINGS_MODULE": "example_project.django_site.settings"}
    subprocess.run(migrate, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)}, check=True)
    return path


@pytest.fixture(params=["django", "fastapi"])
def site(request: pytest.FixtureRequest, data_dir: str) -> Iterator[tuple[str, str]]:
    port = free_port()
    env = {"EXAMPLE_DATA_DIR": data_dir, "DJANGO_SETTINGS_MODULE": "example_project.django_site.settings"}
    if request.param == "django":
        command = [str(BIN / "gunicorn"), "example_project.django_site.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1"]
    else:
        app = "example_project.fastapi_site.app:app"
        command = [str(BIN / "uvicorn"), app, "--host", "127.0.0.1", "--port", str(port)]
    with running_server(command, port, **env) as url:
        yield request.param, url


def link(page: Any, base: str, selector: str) -> str:
    """The absolute URL of a download link (Django's are relative, the FastAPI app's absolute)."""
    href = page.get_attribute(f"a.download{selector}", "href")
    assert href is not None
    return urljoin(base + "/", href)


def test_shop_login_cart_download_logout(browser: Any, site: tuple[str, str]) -> None:
    name, base = site
    context = browser.new_context()
    page = context.new_page()
    timings: dict[str, str] = {}
    page.on("response", lambda response: timings.__setitem__(response.url, response.headers.get("server-timing", "")))

    page.goto(base + "/")
    page.click("#login-link")
    page.fill("#id_username", "demo")
    page.fill("#id_password", "demo")
    page.click("#login-submit")
    assert "you are logged in" in page.inner_text(".messages")

    page.click("#add-teapot")
    assert "Added Teapot to your cart." in page.inner_text(".messages")
    page.goto(base + "/cart")
    assert "Teapot" in page.inner_text("#cart")

    response = page.goto(base + "/downloads")
    assert response is not None
    # Server-Timing, as the browser received it, on the page and on every response the session middleware saw.
    assert TIMING.match(response.headers["server-timing"])
    assert all(TIMING.match(value) for url, value in timings.items() if url.startswith(base) and "/files/" not in url)
    page.wait_for_function("document.getElementById('timing').textContent.includes('load')")
    assert "µs" in page.inner_text("#timing")  # the page read it from its navigation entry
    assert re.fullmatch(r"\d+", page.inner_text("#cookie-size"))
    assert re.fullmatch(r"\d+ s", page.inner_text(".countdown"))  # the countdown ticks in the page
    page.screenshot(path=f"/tmp/example-{name}-downloads.png", full_page=True)

    bound = link(page, base, '[data-kind="only demo"]:text("readme.txt")')
    download = page.request.get(bound)
    assert download.status == 200
    assert download.body() == README.encode()
    large = link(page, base, f'[data-kind="anyone"]:text("{LARGE}")')
    part = page.request.get(large, headers={"Range": "bytes=1000-1099"})
    assert part.status == 206
    assert part.body() == bytes(100)  # the sparse file reads as zeros
    tampered = page.request.get(bound.replace("readme.txt", "price-list.csv"))
    assert tampered.status == 403

    page.click("#logout")
    assert "logged out" in page.inner_text(".messages")
    assert page.is_visible("#login-link")
    # Logged out, the link bound to demo no longer verifies: no user to bind to.
    assert page.request.get(bound).status == 403
    context.close()


def test_the_cost_panel_draws_its_chart(browser: Any, site: tuple[str, str]) -> None:
    """The chart is drawn (inline SVG, no script), legible at a laptop's width, with its numbers one click away."""
    name, base = site
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    page.goto(base + "/")
    chart = page.locator("#cost-chart svg")
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box is not None
    assert box["width"] > 400
    assert box["height"] > 200
    assert "lower is better" in page.inner_text("#cost-chart figcaption")
    assert not page.is_visible("#cost-numbers table")
    page.click("#cost-numbers summary")
    assert page.is_visible("#cost-numbers table")
    page.locator(".facts").screenshot(path=f"/tmp/example-{name}-costs.png")
    context.close()


#: The forms an attacker's page would post: (path on the Django site, on the FastAPI app), fields.
FORGED = {
    "login": (("/accounts/login/", "/accounts/login"), {"username": "demo", "password": "demo"}),
    "logout": (("/accounts/logout/", "/accounts/logout"), {}),
    "engine": (("/engine/", "/engine"), {"engine": "starlette", "next": "/"}),
}


def forge(page: Any, name: str, base: str, form: str) -> int:
    """Post one of FORGED from a page of another origin of the same site (127.0.0.1, another port); its status.

    Every port of 127.0.0.1 is the same site, as every subdomain of a domain is: the browser
    sends the SameSite=Lax session cookie with the POST.
    """
    paths, fields = FORGED[form]
    action = base + paths[name == "fastapi"]
    attacker = f"http://127.0.0.1:{free_port()}/attack"
    inputs = "".join(f'<input type="hidden" name="{key}" value="{value}">' for key, value in fields.items())
    html = f'<form method="post" action="{action}">{inputs}</form><script>document.forms[0].submit()</script>'
    page.route(attacker, lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    with page.expect_response(lambda response: response.url == action and response.request.method == "POST") as posted:
        page.goto(attacker)
    response = posted.value
    assert response.request.headers["origin"] == attacker.removesuffix("/attack")
    return int(response.status)


def test_forms_posted_from_another_origin_are_refused(browser: Any, site: tuple[str, str]) -> None:
    name, base = site
    context = browser.new_context()
    page = context.new_page()

    assert forge(page, name, base, "login") == 403  # login CSRF: the visitor would be logged in as demo
    page.goto(base + "/")
    assert page.is_visible("#login-link")

    page.click("#login-link")
    page.fill("#id_username", "demo")
    page.fill("#id_password", "demo")
    page.click("#login-submit")
    assert page.is_visible("#logout")
    engine = page.input_value("#engine")
    assert forge(page, name, base, "logout") == 403
    assert forge(page, name, base, "engine") == 403
    page.goto(base + "/")
    assert page.is_visible("#logout")  # still logged in
    assert page.input_value("#engine") == engine  # on the same engine
    context.close()
