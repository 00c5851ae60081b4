"""Signed Content-Disposition: the link names the download (``filename``, ``disposition``) and nobody can change it.

Both adapters' download helpers, in process and through real servers (gunicorn, uvicorn): an RFC 6266 header with
an ASCII ``filename`` and ``filename*`` (RFC 8187) for the rest, never CR, LF, a path separator or a stray quote;
a changed, removed or added parameter is 403.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from django.test import Client
from fastapi import Depends, FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.testclient import TestClient

from blake2sign_web.django import sign_url
from blake2sign_web.starlette import require_signature, sign_url_for, signed_file_response

from .conftest import CONTENT, django_signer
from .starlette_app import build_starlette, make_signer

BIN = Path(sys.executable).parent
#: (signed filename, disposition) -> the header both adapters send.
NAMES = [
    ("Invoice 2026-11.pdf", "attachment", 'attachment; filename="Invoice 2026-11.pdf"'),
    (
        "Rapport été.pdf",
        "attachment",
        "attachment; filename=\"Rapport _t_.pdf\"; filename*=UTF-8''Rapport%20%C3%A9t%C3%A9.pdf",
    ),
    ('say "hi".txt', "inline", "inline; filename=\"say _hi_.txt\"; filename*=UTF-8''say%20%22hi%22.txt"),
    ("100%.csv", "attachment", "attachment; filename=\"100_.csv\"; filename*=UTF-8''100%25.csv"),
    ("отчёт.xlsx", "inline", "inline; filename=\"_____.xlsx\"; filename*=UTF-8''%D0%BE%D1%82%D1%87%D1%91%D1%82.xlsx"),
    ("a;b=c,d.txt", "attachment", 'attachment; filename="a;b=c,d.txt"'),
]
#: What a Content-Disposition value may be: the type, then parameters, a quoted ASCII filename without quotes inside.
HEADER = re.compile(r"""(attachment|inline)(; filename="[ -!#-~]*"(; filename\*=UTF-8''[A-Za-z0-9%._~-]+)?)?""")


def check_header(header: str, filename: str, disposition: str) -> None:
    assert HEADER.fullmatch(header), header
    for forbidden in ("\r", "\n", "/", "\\"):
        assert forbidden not in header
    assert header.startswith(disposition)
    if "filename*=" in header:  # the exact name, for browsers that read RFC 8187 (all current ones)
        assert unquote(header.rpartition("''")[2]) == filename


def tampered(link: str, param: str, value: str) -> str:
    prefix, _, rest = link.partition(f"{param}=")
    return prefix + f"{param}={value}" + rest[rest.index("&") :]


def changed_links(link: str) -> list[str]:
    return [
        tampered(link, "filename", "evil.html"),
        tampered(link, "disposition", "inline" if "disposition=attachment" in link else "attachment"),
        re.sub(r"(?<=[?&])disposition=[^&]*&", "", link),
        re.sub(r"(?<=[?&])filename=[^&]*&", "", link),
        link.replace("&signature=", "&filename=other.pdf&signature="),  # a second one
    ]


@pytest.mark.urls("tests.signed_urls.django_urls")
@pytest.mark.parametrize(("filename", "disposition", "header"), NAMES)
def test_django_view_names_the_download_as_signed(
    file_storage: Path, filename: str, disposition: str, header: str
) -> None:
    link = sign_url("/files/report.bin", expires_in=60, filename=filename, disposition=disposition)  # type: ignore[arg-type]
    response = Client().get(link)
    assert response.status_code == 200
    assert response["Content-Disposition"] == header
    assert response["Content-Type"] == "application/octet-stream"  # from the stored name, never the signed one
    check_header(header, filename, disposition)
    for changed in changed_links(link):
        assert Client().get(changed).status_code == 403, changed
    # X-Accel-Redirect hands nginx the same header (nginx keeps it: tests/recipes).
    accel = Client().get(sign_url("/accel/report.bin", filename=filename, disposition=disposition))  # type: ignore[arg-type]
    assert accel["Content-Disposition"] == header


@pytest.mark.urls("tests.signed_urls.django_urls")
def test_django_view_without_a_signed_name_is_unchanged(file_storage: Path) -> None:
    assert Client().get(sign_url("/files/report.bin"))["Content-Disposition"] == 'attachment; filename="report.bin"'
    assert Client().get(sign_url("/inline/report.bin"))["Content-Disposition"] == 'inline; filename="report.bin"'
    # The link's disposition wins over the view's, both ways; without a filename the stored name is kept.
    inline = Client().get(sign_url("/files/report.bin", disposition="inline"))
    assert inline["Content-Disposition"] == 'inline; filename="report.bin"'
    attached = Client().get(sign_url("/inline/report.bin", disposition="attachment"))
    assert attached["Content-Disposition"] == 'attachment; filename="report.bin"'


@pytest.mark.parametrize(("filename", "disposition", "header"), NAMES)
def test_starlette_signed_files_name_the_download_as_signed(
    served_root: Path, filename: str, disposition: str, header: str
) -> None:
    client = TestClient(build_starlette(served_root))
    link = make_signer().sign("/files/report.bin", expires_in=60, filename=filename, disposition=disposition)  # type: ignore[arg-type]
    response = client.get(link)
    assert response.status_code == 200
    assert response.headers["content-disposition"] == header
    for changed in changed_links(link):
        assert client.get(changed).status_code == 403, changed


def test_fastapi_dependency_and_signed_file_response(served_root: Path) -> None:
    signer = make_signer()
    app = FastAPI()

    @app.get("/dl/{filename:path}", dependencies=[Depends(require_signature(signer))], name="dl")
    async def download(filename: str, request: Request) -> Response:
        return await signed_file_response(request, served_root, filename)

    @app.get("/share")
    async def share(request: Request) -> dict[str, str]:
        # The route's own "filename" path parameter still reaches url_for: the signed name is download_as.
        return {"link": sign_url_for(request, signer, "dl", download_as="Q3 été.bin", filename="report.bin")}

    client = TestClient(app)
    link = client.get("/share").json()["link"]
    response = client.get(link)
    assert response.content == CONTENT
    assert response.headers["content-disposition"] == (
        "attachment; filename=\"Q3 _t_.bin\"; filename*=UTF-8''Q3%20%C3%A9t%C3%A9.bin"
    )
    for changed in changed_links(link):
        assert client.get(changed).status_code == 403


# Real servers.


@pytest.mark.server
@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_real_servers_send_the_signed_name(server: str, request: Any) -> None:
    base = request.getfixturevalue(server)
    signer = django_signer() if server == "gunicorn" else make_signer()
    for filename, disposition, header in NAMES:
        link = signer.sign("/files/report.bin", expires_in=60, filename=filename, disposition=disposition)  # type: ignore[arg-type]
        response = httpx.get(base + link)
        assert response.status_code == 200
        assert response.content == CONTENT
        assert response.headers["content-disposition"] == header
        ranged = httpx.get(base + link, headers={"Range": "bytes=0-9"})
        assert (ranged.status_code, ranged.headers["content-disposition"]) == (206, header)
        for changed in changed_links(link):
            assert httpx.get(base + changed).status_code == 403
