"""Folder links on real servers: one prefix link fetches two files under it from gunicorn (Django's SignedFileView)
and uvicorn (Starlette's SignedFiles), and nothing outside it, however the path is spelled on the wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from .conftest import django_signer
from .starlette_app import make_signer
from .test_servers import raw_get

pytestmark = pytest.mark.server


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_a_folder_link_fetches_files_under_it_and_nothing_outside(server: str, served_root: Path, request: Any) -> None:
    (served_root / "sub" / "second.txt").write_text("second")
    (served_root / "sub" / "deeper").mkdir()
    (served_root / "sub" / "deeper" / "third.txt").write_text("third")
    (served_root / "sub" / "out.txt").symlink_to(served_root / "report.bin")  # inside the root, outside the folder
    (served_root / "subway").mkdir()
    (served_root / "subway" / "x.txt").write_text("x")
    base = request.getfixturevalue(server)
    signer = django_signer() if server == "gunicorn" else make_signer()
    folder = signer.sign_prefix("/files/sub/", expires_in=60)
    with httpx.Client(base_url=base) as client:
        assert client.get(folder.link(quote("caf\u00e9 menu.txt"))).content == b"menu"
        assert client.get(folder.link("second.txt")).content == b"second"
        assert client.get(folder.link("deeper/third.txt")).content == b"third"
        assert client.head(folder.link("second.txt")).status_code == 200
        query = "?" + folder.query
        for outside in ("/files/report.bin", "/files/subway/x.txt", "/files/SUB/second.txt", "/files/sub"):
            assert client.get(outside + query).status_code == 403, outside
        assert client.get(folder.link("out.txt")).status_code == 400  # a link out of the folder on disk
        expired = signer.sign_prefix("/files/sub/", expires_at=1_000_000_000)
        assert client.get(expired.link("second.txt")).status_code == 410
    # Sent byte for byte: no client removes the dot segments or decodes anything first.
    for target in (
        "/files/sub/../report.bin",
        "/files/sub/%2e%2e/report.bin",
        "/files/sub/%2E%2E%2Freport.bin",
        "/files/sub/..%5Creport.bin",
        "/files/sub//second.txt",
        "/files/sub/%252e%252e/report.bin",
        "/files/sub/%c0%ae%c0%ae/report.bin",
    ):
        status, body = raw_get(base, (target + query).encode())
        assert status in (400, 403, 404), (target, status)
        assert body[:10] != b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\t"  # never report.bin's bytes
