"""Which host a link made in a request names: never one the client chose, unless asked (issue 27, item 3).

The ``Host`` header is the client's to write. A link that leaves the request (an e-mail) must name the
site's configured public URL: links are host-independent by default, so a link mailed as
``https://attacker.example/files/...?signature=...`` would leak to the attacker a path and query that
work on the real site (and use up a single-use link). ``sign_url_for`` makes a relative link by default
and an absolute one only on ``base_url=``. Django's ``sign_url(request=...)`` takes the host from
``request.get_host()``, which Django checks against ``ALLOWED_HOSTS``: tested here too.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from django.core.exceptions import DisallowedHost
from django.test import RequestFactory
from fastapi import FastAPI, Request
from starlette.testclient import TestClient

from blake2sign_web.django import sign_url
from blake2sign_web.starlette import SignedFiles, sign_url_for

from .conftest import CONTENT
from .starlette_app import PUBLIC_URL, build_starlette, make_signer

FORGED = {"Host": "attacker.example"}


def path_and_query(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


@pytest.fixture
def client(served_root: Path) -> TestClient:
    return TestClient(build_starlette(served_root), base_url="http://testserver")


def test_the_default_link_names_no_host_whatever_host_the_client_sent(client: TestClient) -> None:
    link = client.get("/link", params={"n": "report.bin"}, headers=FORGED).text
    assert link.startswith("/files/report.bin?expires=")
    assert "attacker" not in link
    assert client.get(link).content == CONTENT


def test_a_mailed_link_names_the_public_url_whatever_host_the_client_sent(client: TestClient) -> None:
    link = client.get("/mail-link", params={"n": "report.bin"}, headers=FORGED).text
    assert link.startswith(f"{PUBLIC_URL}/files/report.bin?expires=")
    assert client.get(path_and_query(link), headers={"Host": "files.example.com"}).content == CONTENT


def test_base_url_request_base_url_is_the_clients_own_host(client: TestClient) -> None:
    # Documented: for links shown to the client that sent the Host header, never for links to others.
    link = client.get("/own-host-link", params={"n": "report.bin"}, headers=FORGED).text
    assert link.startswith("http://attacker.example/files/report.bin?expires=")


def test_uvicorn_with_a_forged_host_header(uvicorn: str) -> None:
    """A real uvicorn, a real request with ``Host: attacker.example``: neither link names that host."""
    shown = httpx.get(f"{uvicorn}/link", params={"n": "report.bin"}, headers=FORGED).text
    mailed = httpx.get(f"{uvicorn}/mail-link", params={"n": "report.bin"}, headers=FORGED).text
    assert shown.startswith("/files/report.bin?expires=")
    assert mailed.startswith(f"{PUBLIC_URL}/files/report.bin?expires=")
    assert httpx.get(uvicorn + shown).content == CONTENT
    assert httpx.get(uvicorn + path_and_query(mailed)).content == CONTENT


def test_a_host_bound_link_on_the_public_url_is_refused_under_a_forged_host(served_root: Path) -> None:
    """With ``bind_host=True`` the mailed link is bound to the public host, so its copy fails elsewhere."""
    signer = make_signer(bind_host=True)
    app = FastAPI()
    app.add_route("/files/{name:path}", SignedFiles(signer, served_root), name="files")

    @app.get("/mail")
    async def mail(request: Request) -> str:
        return sign_url_for(request, signer, "files", base_url=PUBLIC_URL, expires_in=60, name="report.bin")

    @app.get("/show")
    async def show(request: Request) -> str:
        return sign_url_for(request, signer, "files", expires_in=60, name="report.bin")

    public = TestClient(app, base_url=PUBLIC_URL)
    link = public.get("/mail", headers=FORGED).json()
    assert link.startswith(f"{PUBLIC_URL}/files/report.bin?")
    assert public.get(link).content == CONTENT
    assert public.get(path_and_query(link), headers=FORGED).status_code == 403
    with pytest.raises(ValueError, match=r"bind_host=True.*base_url="):
        public.get("/show")


@pytest.mark.parametrize(
    "base_url",
    ["files.example.com", "/files", "ftp://files.example.com", "https://", "https://files.example.com/?a=1",
     "https://files.example.com/#top", "https://user@files.example.com"],
)  # fmt: skip
def test_a_base_url_that_is_not_a_public_url_is_refused(base_url: str) -> None:
    app = FastAPI()
    app.add_route("/files/{name:path}", SignedFiles(make_signer(), "."), name="files")

    @app.get("/mail")
    async def mail(request: Request) -> str:
        return sign_url_for(request, make_signer(), "files", base_url=base_url, expires_in=60, name="report.bin")

    with pytest.raises(ValueError, match="base_url must be the site's public URL"):
        TestClient(app).get("/mail")


def test_base_url_keeps_its_path_prefix() -> None:
    app = FastAPI()
    app.add_route("/files/{name:path}", SignedFiles(make_signer(), "."), name="files")

    @app.get("/mail")
    async def mail(request: Request) -> str:
        return sign_url_for(request, make_signer(), "files", base_url=f"{PUBLIC_URL}/app/", name="a b.bin")

    link = TestClient(app).get("/mail").json()
    assert link.startswith(f"{PUBLIC_URL}/app/files/a%20b.bin?kid={make_signer().key_id}&signature=")


@pytest.mark.django_db(databases=[])
def test_django_sign_url_refuses_a_host_outside_allowed_hosts(rf: RequestFactory, settings: object) -> None:
    """The Django helper's sibling: the host comes from get_host(), checked against ALLOWED_HOSTS."""
    settings.ALLOWED_HOSTS = ["files.example.com"]  # type: ignore[attr-defined]
    with pytest.raises(DisallowedHost):
        sign_url("/files/report.bin", expires_in=60, request=rf.get("/", HTTP_HOST="attacker.example"))
    # X-Forwarded-Host counts only with USE_X_FORWARDED_HOST, and is checked alike.
    forwarded = rf.get("/", HTTP_HOST="files.example.com", HTTP_X_FORWARDED_HOST="attacker.example")
    assert sign_url("/files/report.bin", request=forwarded).startswith("http://files.example.com/files/report.bin?")
    settings.USE_X_FORWARDED_HOST = True  # type: ignore[attr-defined]
    forwarded = rf.get("/", HTTP_HOST="files.example.com", HTTP_X_FORWARDED_HOST="attacker.example")
    with pytest.raises(DisallowedHost):
        sign_url("/files/report.bin", request=forwarded)
