"""Scanner-safe single use (``consume_on="post"``): GET and HEAD only show a confirmation page; one POST uses the link.

Mail scanners fetch every link of a message, with GET and HEAD, often many times, before the person clicks.
Through real servers (gunicorn for Django, uvicorn for Starlette and FastAPI) and a real Redis: 20 scanner GETs
and 20 HEADs leave nothing in Redis, then one POST gets the file and a second POST gets 410.
"""

from __future__ import annotations

import html
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.template import Context, Template
from django.test import Client
from django.urls import reverse
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django import sign_url
from tests.django_links import use_served_storage, use_single_use_cache
from tests.redis_server import RedisServer, patient_store
from tests.servers import free_port, running_server

from .confirm_apps import CONTENT, CUSTOM_PAGE, build_fastapi, build_starlette, make_signer, write_files
from .conftest import keys_in

BIN = Path(sys.executable).parent
SCANNER_FETCHES = 20
#: User-Agents of the link checkers that fetch links in mail before the person does (and a bare client).
SCANNERS = ("Microsoft Office/16.0 (Safe Links)", "Mimecast-Link-Checker", "Proofpoint URL Defense", "python-httpx")


def django_signer() -> URLSigner:
    from tests.django_settings import SECRET_KEY

    return URLSigner(SECRET_KEY, purpose="blake2sign_web.signed_urls")


#: The hidden input of Django's CSRF token in the built-in page's form (Starlette has no CSRF check of its own).
CSRF_FIELD = re.compile(rb'<input type="hidden" name="csrfmiddlewaretoken" value="([A-Za-z0-9]{64})">')


def assert_confirmation_page(response: httpx.Response | Any, *, method: str, csrf: bool = False) -> None:
    headers = {k.lower(): v for k, v in response.headers.items()}
    assert response.status_code == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["cache-control"] == "no-store"
    # Not no-referrer: the browser's POST would carry "Origin: null", which Django's CSRF check refuses.
    assert headers["referrer-policy"] == "strict-origin"
    if isinstance(response, httpx.Response):  # a real server: no session; Django's CSRF cookie at most
        cookies = response.headers.get_list("set-cookie")
        assert all(cookie.startswith("csrftoken=") for cookie in cookies)
        assert len(cookies) == (1 if csrf else 0)
    else:  # Django's test client
        assert set(response.cookies) <= {"csrftoken"}
    body = response.content
    if method == "HEAD":
        assert body == b""
    else:
        # The form POSTs to the document's own URL: no action, so nothing of the request is echoed into it.
        hidden = rb'<input type="hidden" name="csrfmiddlewaretoken" value="[A-Za-z0-9]{64}">' if csrf else b""
        assert re.search(rb'<form method="post">' + hidden + rb'<button type="submit">', body)
        assert b"action=" not in body
        assert b"signature" not in body


def csrf_token(page: httpx.Response | Any) -> str:
    """The CSRF token in a confirmation page's form, as the browser posts it."""
    found = CSRF_FIELD.search(page.content)
    assert found is not None, page.content
    return found.group(1).decode()


# Real servers.


@pytest.fixture
def gunicorn(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    root = write_files(tmp_path / "served")
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "tests.signed_urls.wsgi"]
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.signed_urls.confirm_settings",
        "BLAKE2SIGN_SERVED_ROOT": str(root),
        "BLAKE2SIGN_REDIS_URL": redis_server.url,
    }
    with running_server(command, port, **env) as base:
        yield base


def uvicorn(factory: str, redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    root = write_files(tmp_path / "served")
    port = free_port()
    command = [
        str(BIN / "uvicorn"), "--factory", f"tests.signed_urls.confirm_apps:{factory}",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    env = {"BLAKE2SIGN_SERVED_ROOT": str(root), "BLAKE2SIGN_REDIS_URL": redis_server.url}
    with running_server(command, port, **env) as base:
        yield base


@pytest.fixture
def starlette_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    yield from uvicorn("starlette_from_env", redis_server, tmp_path)


@pytest.fixture
def fastapi_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[str]:
    yield from uvicorn("fastapi_from_env", redis_server, tmp_path)


SERVERS = {"gunicorn": django_signer, "starlette_server": make_signer, "fastapi_server": make_signer}


@pytest.mark.server
@pytest.mark.parametrize("server", list(SERVERS))
@pytest.mark.parametrize("path", ["/files/report.bin", "/magic"])
def test_scanners_never_use_the_link_up_and_one_post_does(
    server: str, path: str, redis_server: RedisServer, request: pytest.FixtureRequest
) -> None:
    base = request.getfixturevalue(server)
    link = SERVERS[server]().sign(path, expires_in=600, single_use=True, consume_on="post")
    csrf = server == "gunicorn"  # Django's page carries the CSRF token its POST needs
    for fetch in range(SCANNER_FETCHES):
        agent = {"User-Agent": SCANNERS[fetch % len(SCANNERS)]}
        for method in ("GET", "HEAD"):
            with httpx.Client(headers=agent) as scanner:  # a new connection, no cookies, as a scanner fetches
                assert_confirmation_page(scanner.request(method, base + link), method=method, csrf=csrf)
    assert keys_in(redis_server) == 0  # 40 fetches wrote nothing: the link is as new

    browser = httpx.Client(headers={"User-Agent": "Mozilla/5.0 (the person)"})  # keeps the CSRF cookie
    page = browser.get(base + link)
    form = {"csrfmiddlewaretoken": csrf_token(page)} if csrf else {}
    person = browser.post(base + link, data=form)
    assert person.status_code == 200
    if path == "/magic":
        assert person.text in ("signed in by POST", '{"signed_in_by":"POST"}')
    else:
        assert person.content == CONTENT
        assert person.headers["content-disposition"] == 'attachment; filename="report.bin"'
        assert person.headers["cache-control"] == "no-store"
        assert "content-range" not in person.headers
    assert keys_in(redis_server) == 1  # the once:<nonce> record, and no budget: a POST is never continued

    again = browser.post(base + link, data=form)
    assert again.status_code == 410
    browser.close()
    # Someone else: Django refuses his POST without the token (CSRF) before the link's record is read.
    assert httpx.post(base + link, headers={"User-Agent": "someone else"}).status_code == (403 if csrf else 410)
    # GET still only shows the page (nothing is read from Redis for it); its POST is refused.
    assert_confirmation_page(httpx.get(base + link), method="GET", csrf=csrf)


@pytest.mark.server
@pytest.mark.parametrize("server", list(SERVERS))
def test_a_changed_link_or_another_method_gets_nothing(
    server: str, redis_server: RedisServer, request: pytest.FixtureRequest
) -> None:
    base = request.getfixturevalue(server)
    signer = SERVERS[server]()
    link = signer.sign("/files/report.bin", expires_in=600, single_use=True, consume_on="post")
    for changed in (link.replace("&consume=post", ""), link.replace("consume=post", "consume=get")):
        assert httpx.get(base + changed).status_code == 403
        assert httpx.post(base + changed).status_code == 403
    assert httpx.put(base + link).status_code == 405
    if server == "fastapi_server":  # the application's own route decides what its POST does
        return
    # An ordinary link (single-use or not) to the file is never served to a POST by SignedFiles/SignedFileView.
    for ordinary in (signer.sign("/files/report.bin", expires_in=600), signer.sign("/files/report.bin")):
        assert httpx.post(base + ordinary).status_code == 405
    assert keys_in(redis_server) == 0


# In-process: the template tag, the application's own page, CSRF, no store.

pytest_django_urls = pytest.mark.urls("tests.signed_urls.confirm_urls")


@pytest.fixture
def django_links(settings: Any, redis_server: RedisServer, tmp_path: Path) -> Path:
    root = write_files(tmp_path / "served")
    use_single_use_cache(settings, redis_server)
    use_served_storage(settings, root)
    return root


def body(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest_django_urls
def test_template_tag_signs_scanner_safe_links(django_links: Path, redis_server: RedisServer) -> None:
    template = Template(
        "{% load blake2sign %}"
        "{% signed_url 'files' 'report.bin' expires_in=600 single_use=True consume_on='post' "
        "download_as='Q3 été.bin' %}"
    )
    link = html.unescape(template.render(Context({})))  # written into a page: & is &amp;
    assert "consume=post" in link
    assert "disposition=attachment" in link
    client = Client(enforce_csrf_checks=True)
    for _ in range(SCANNER_FETCHES):
        assert_confirmation_page(client.get(link), method="GET", csrf=True)
        assert_confirmation_page(client.head(link), method="HEAD", csrf=True)
    assert keys_in(redis_server) == 0
    form = {"csrfmiddlewaretoken": csrf_token(client.get(link))}
    response = client.post(link, form)
    assert response.status_code == 200
    assert body(response) == CONTENT
    assert (
        response["Content-Disposition"]
        == "attachment; filename=\"Q3 _t_.bin\"; filename*=UTF-8''Q3%20%C3%A9t%C3%A9.bin"
    )
    assert client.post(link, form).status_code == 410


@pytest_django_urls
def test_django_views_own_page_is_made_unframeable(django_links: Path, redis_server: RedisServer) -> None:
    link = sign_url(reverse("own-page"), expires_in=600, single_use=True, consume_on="post")
    client = Client(enforce_csrf_checks=True)
    page = client.get(link)
    assert page.content.decode().startswith("<!DOCTYPE html><title>Sign in</title><form method=post>")
    assert page["X-Frame-Options"] == "DENY"
    assert page["Content-Security-Policy"] == "default-src 'self'; frame-ancestors 'none'"
    assert page["Cache-Control"] == "no-store"
    assert page["Referrer-Policy"] == "strict-origin"  # so that the browser's POST has a real Origin
    assert client.post(link).status_code == 403  # a page without the token: CSRF, nothing used up
    assert keys_in(redis_server) == 0
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    assert client.post(link, {"csrfmiddlewaretoken": token.group(1)}).content == b"signed in"
    assert client.post(link, {"csrfmiddlewaretoken": token.group(1)}).status_code == 410


@pytest_django_urls
def test_a_csrf_protected_view_gets_the_built_in_pages_post(django_links: Path, redis_server: RedisServer) -> None:
    """No csrf_exempt needed: the built-in page's form carries Django's CSRF token (issue 27, item 10)."""
    link = sign_url(reverse("protected"), expires_in=600, single_use=True, consume_on="post")
    client = Client(enforce_csrf_checks=True)
    page = client.get(link)
    assert_confirmation_page(page, method="GET", csrf=True)
    assert "csrftoken" in client.cookies
    assert client.post(link).status_code == 403  # no token: CsrfViewMiddleware, before the view
    assert keys_in(redis_server) == 0
    response = client.post(link, {"csrfmiddlewaretoken": csrf_token(page)})
    assert response.status_code == 200
    assert response.content == b"protected"
    assert client.post(link, {"csrfmiddlewaretoken": csrf_token(page)}).status_code == 410


@pytest_django_urls
@pytest.mark.parametrize("target", ["magic", "magic-async", "files"])
def test_a_forged_cross_site_post_never_uses_a_link_even_in_a_csrf_exempt_view(
    target: str, django_links: Path, redis_server: RedisServer
) -> None:
    """A link the attacker got for himself, posted from the victim's browser by his page, acts for nobody.

    ``magic`` is csrf_exempt (as the docs once advised) and so is SignedFileView: the decorator and
    the view still make Django's CSRF check before the link is used up. The victim's browser has
    its own CSRF cookie; the forged form has no token, or the attacker's own.
    """
    path = reverse("files", args=["report.bin"]) if target == "files" else reverse(target)
    link = sign_url(path, expires_in=600, single_use=True, consume_on="post")
    victim = Client(enforce_csrf_checks=True)
    victim.get(reverse("protected"))  # an earlier visit: the victim has a CSRF cookie of her own
    cross_site = {"HTTP_ORIGIN": "https://attacker.example", "HTTP_SEC_FETCH_SITE": "cross-site"}
    assert victim.post(link, **cross_site).status_code == 403
    assert victim.post(link).status_code == 403
    attacker = Client(enforce_csrf_checks=True)
    attackers_token = csrf_token(attacker.get(link))
    assert victim.post(link, {"csrfmiddlewaretoken": attackers_token}, **cross_site).status_code == 403
    assert victim.post(link, {"csrfmiddlewaretoken": attackers_token}).status_code == 403
    assert keys_in(redis_server) == 0  # nothing used up: the attacker's link is as new
    # The attacker himself, from the page, still can.
    assert attacker.post(link, {"csrfmiddlewaretoken": attackers_token}).status_code == 200
    assert keys_in(redis_server) == 1


@pytest_django_urls
def test_django_link_without_store_shows_the_page_and_refuses_the_post(settings: Any, tmp_path: Path) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"SINGLE_USE_CACHE": None}}
    link = django_signer().sign("/magic", expires_in=600, single_use=True, consume_on="post")
    client = Client()
    assert_confirmation_page(client.get(link), method="GET", csrf=True)
    assert client.post(link).status_code == 403


@pytest.fixture
def starlette_client(redis_server: RedisServer, tmp_path: Path) -> Iterator[TestClient]:
    store = patient_store(redis_server)
    with TestClient(build_starlette(write_files(tmp_path / "served"), store)) as client:
        yield client
        client.portal.call(store.aclose)  # on the client's event loop, which closes with it


def test_starlette_own_page_is_made_unframeable(starlette_client: TestClient) -> None:
    link = make_signer().sign("/own-page", expires_in=600, single_use=True, consume_on="post")
    page = starlette_client.get(link)
    assert page.text == CUSTOM_PAGE
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'none'"
    assert starlette_client.post(link).text == "signed in"
    assert starlette_client.post(link).status_code == 410


@pytest.mark.parametrize(
    ("framework", "path"), [("starlette", "/magic"), ("starlette", "/files/report.bin"), ("fastapi", "/magic")]
)
def test_starlette_refuses_a_cross_site_post_of_the_link(
    framework: str, path: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Starlette has no CSRF check: the browser's Sec-Fetch-Site says whether the page itself posted."""
    store = patient_store(redis_server)
    build = build_starlette if framework == "starlette" else build_fastapi
    link = make_signer().sign(path, expires_in=600, single_use=True, consume_on="post")
    with TestClient(build(write_files(tmp_path / "served"), store)) as client:
        for site in ("cross-site", "same-site", "none"):  # another site's (or subdomain's) form, or no page at all
            assert client.post(link, headers={"Sec-Fetch-Site": site}).status_code == 403
        assert keys_in(redis_server) == 0  # nothing used up
        assert client.post(link, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200  # the page's form
        assert client.post(link, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 410
        client.portal.call(store.aclose)


def test_fastapi_without_the_handler_fails_closed(redis_server: RedisServer, tmp_path: Path) -> None:
    """Forgetting confirmation_handler is a 500, never a GET that uses the link up."""
    store = patient_store(redis_server)
    app = build_fastapi(write_files(tmp_path / "served"), store)
    app.exception_handlers.clear()
    app.add_exception_handler(404, lambda request, exc: None)  # type: ignore[arg-type]  # rebuild the stack
    link = make_signer().sign("/magic", expires_in=600, single_use=True, consume_on="post")
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get(link).status_code == 500
        assert keys_in(redis_server) == 0
        assert client.post(link).json() == {"signed_in_by": "POST"}
        client.portal.call(store.aclose)


# A real browser: the page's form posts to the link itself, and another page cannot frame it.

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    def missing(what: str) -> None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run this test, which needs {what}", pytrace=False)
        pytest.skip(f"needs {what}")

    if not CHROMIUM.exists():
        missing("Debian's chromium (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package")
    with sync_playwright() as playwright:
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args, headless=True)
        yield launched
        launched.close()


@pytest.mark.server
def test_a_browser_presses_the_button_once(browser: Any, starlette_server: str, redis_server: RedisServer) -> None:
    link = starlette_server + make_signer().sign("/magic", expires_in=600, single_use=True, consume_on="post")
    page = browser.new_page()
    try:
        page.goto(link)
        assert page.title() == "Continue"
        assert keys_in(redis_server) == 0
        with page.expect_navigation():
            page.click("button")
        assert page.url == link  # the form posted to the link itself, query and signature included
        assert page.inner_text("body") == "signed in by POST"
        page.goto(link)  # back to the page: it shows again, but its POST is refused
        with page.expect_navigation():
            page.click("button")
        assert page.inner_text("body") == "This link has already been used."
    finally:
        page.close()


@pytest.mark.server
@pytest.mark.parametrize("path", ["/protected", "/files/report.bin"])
def test_a_browser_passes_djangos_csrf_check_with_the_built_in_page(
    browser: Any, gunicorn: str, redis_server: RedisServer, path: str
) -> None:
    """Chromium posts the page's form with the token and a real Origin (a no-referrer page would send "null")."""
    link = gunicorn + django_signer().sign(path, expires_in=600, single_use=True, consume_on="post")
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(link)
        assert page.title() == "Continue"
        if path == "/protected":
            with page.expect_navigation():
                page.click("button")
            assert page.inner_text("body") == "protected"
        else:
            with page.expect_download() as download:
                page.click("button")
            assert Path(download.value.path()).read_bytes() == CONTENT
        assert keys_in(redis_server) == 1
    finally:
        context.close()


@pytest.mark.server
def test_another_site_cannot_frame_the_page(browser: Any, starlette_server: str, tmp_path: Path) -> None:
    link = starlette_server + make_signer().sign("/magic", expires_in=600, single_use=True, consume_on="post")
    framing = tmp_path / "framing.html"
    framing.write_text(f'<!DOCTYPE html><iframe id="f" src="{html.escape(link)}"></iframe>')
    page = browser.new_page()
    try:
        page.goto(framing.as_uri())
        page.wait_for_timeout(1000)
        frame = page.frame_locator("#f")
        assert frame.locator("button").count() == 0  # blocked: X-Frame-Options and frame-ancestors
    finally:
        page.close()
