"""Grant cookies through each framework's real stack: a view grants a folder, then files under it are served by
the cookie alone (Django's SignedFileView and signed_url_required, Starlette's SignedFiles), nothing outside it;
and on real servers (gunicorn, uvicorn) with a client that keeps cookies by their Path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from django.test import Client
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.links.grants import grant_name

from .conftest import CONTENT, django_signer
from .starlette_app import build_starlette, make_signer

URLS = pytest.mark.urls("tests.signed_urls.django_urls")
NAME = grant_name("/files/sub/")


def expired_value(signer: URLSigner, prefix: str) -> str:
    """What the cookie of a grant that expired holds."""
    return signer.sign_prefix(prefix, expires_at=1_000_000_000).query.replace("=", ":")


def files_under(served_root: Path) -> None:
    (served_root / "sub" / "second.txt").write_text("second")
    (served_root / "subway").mkdir()
    (served_root / "subway" / "x.txt").write_text("x")


@URLS
def test_django_a_granted_folder_is_served_by_cookie_alone(client: Client, file_storage: Path) -> None:
    files_under(file_storage)
    assert client.get("/files/sub/second.txt").status_code == 403
    granted = client.get("/grant/sub/")
    assert granted.status_code == 200
    cookie = granted.cookies[NAME]
    assert (cookie["path"], cookie["max-age"], cookie["samesite"]) == ("/files/sub/", 60, "Lax")
    assert cookie["httponly"] is True
    assert not cookie["secure"]
    assert not cookie["domain"]
    # The session the same view wrote is its own cookie, untouched by the grant.
    assert granted.cookies["sessionid"].value
    assert granted.cookies["sessionid"].value != cookie.value
    session = client.cookies["sessionid"].value
    response = client.get("/files/sub/second.txt")
    assert (response.status_code, b"".join(response.streaming_content)) == (200, b"second")  # type: ignore[attr-defined]
    # Its URL is no secret: no shared cache may keep what the cookie got.
    assert (response.headers["Cache-Control"], response.headers["Vary"]) == ("private", "Cookie")
    assert client.head("/files/sub/second.txt").status_code == 200
    assert client.get("/files/sub/second.txt", headers={"Range": "bytes=1-2"}).status_code == 206
    assert "sessionid" not in response.cookies
    assert client.cookies["sessionid"].value == session
    # Django's test client sends every cookie, whatever its Path: the server refuses outside the folder.
    for outside in ("/files/report.bin", "/files/subway/x.txt", "/files/sub/../report.bin", "/files/SUB/second.txt"):
        assert client.get(outside).status_code in (403, 404), outside
    assert client.post("/files/sub/second.txt").status_code == 403  # only GET and HEAD by cookie
    # A URL with a signature is verified by it, not by the cookie.
    by_url = client.get(django_signer().sign("/files/report.bin", expires_in=60))
    assert by_url.status_code == 200
    assert "Cache-Control" not in by_url.headers
    assert client.get("/files/sub/second.txt?signature=" + "A" * 43).status_code == 403
    # A wrong or expired cookie.
    client.cookies[NAME] = cookie.value.replace("%2Fsub%2F", "%2Fsubway%2F")
    assert client.get("/files/sub/second.txt").status_code == 403
    client.cookies[NAME] = expired_value(django_signer(), "/files/sub/")
    assert client.get("/files/sub/second.txt").status_code == 410


@URLS
def test_django_secure_grants_and_bound_grants(client: Client, file_storage: Path) -> None:
    files_under(file_storage)
    granted = client.get("/grant/sub/", secure=True)
    assert granted.cookies["__Secure-" + NAME]["secure"] is True
    assert client.get("/files/sub/second.txt", secure=True).status_code == 200
    other = Client()
    assert other.get("/grant-bound/sub/", headers={"X-User": "alice"}).status_code == 200
    assert other.get("/bound-files/sub/second.txt", headers={"X-User": "alice"}).status_code == 200
    assert other.get("/bound-files/sub/second.txt", headers={"X-User": "bob"}).status_code == 403
    assert other.get("/bound-files/sub/second.txt").status_code == 403


@URLS
def test_django_decorated_view_takes_a_grant(client: Client) -> None:
    response = Client().get("/grant/sub/")
    value = response.cookies[NAME].value
    # A grant of /files/sub/ is no grant of any view's path outside it.
    client.cookies[NAME] = value
    assert client.get("/echo/?q=1").status_code == 403
    echo = django_signer().sign_prefix("/anything/", expires_in=60).query.replace("=", ":")
    client.cookies[grant_name("/anything/")] = echo
    viewed = client.get("/anything/a/b")
    assert viewed.status_code == 200  # of two grants, the one named for the view's folder
    assert viewed.headers["Cache-Control"] == "private"
    client.cookies[grant_name("/anything/")], client.cookies[NAME] = value, echo
    assert client.get("/anything/a/b").status_code == 403  # the name finds a cookie; its MAC and prefix decide


def test_starlette_a_granted_folder_is_served_by_cookie_alone(served_root: Path) -> None:
    files_under(served_root)
    signer = make_signer()
    client = TestClient(build_starlette(served_root, signer))
    assert client.get("/files/sub/second.txt").status_code == 403
    granted = client.get("/grant/sub/")
    header = granted.headers["set-cookie"]
    assert header.startswith(f"{NAME}=prefix:%2Ffiles%2Fsub%2F&expires:")
    for attribute in ("HttpOnly", "Max-Age=60", "Path=/files/sub/", "SameSite=lax"):
        assert attribute in header.split("; ")
    assert "Secure" not in header
    assert "Domain" not in header
    served = client.get("/files/sub/second.txt")
    assert served.content == b"second"
    assert (served.headers["cache-control"], served.headers["vary"]) == ("private", "Cookie")
    assert client.get("/files/sub/caf%C3%A9%20menu.txt").content == b"menu"
    assert client.head("/files/sub/second.txt").status_code == 200
    assert client.post("/files/sub/second.txt").status_code in (403, 405)
    value = client.cookies[NAME]
    # httpx keeps the cookie to its Path: sent by hand, it is refused outside the folder.
    for outside in ("/files/report.bin", "/files/subway/x.txt", "/files/sub/..%2Freport.bin", "/files/sub"):
        assert client.get(outside, headers={"Cookie": f"{NAME}={value}"}).status_code == 403, outside
    by_url = client.get(signer.sign("/files/report.bin", expires_in=60))
    assert by_url.content == CONTENT
    assert "cache-control" not in by_url.headers
    expired = expired_value(signer, "/files/sub/")
    assert (
        TestClient(build_starlette(served_root, signer), cookies={NAME: expired})
        .get("/files/sub/second.txt")
        .status_code
        == 410
    )
    wrong = value.replace("signature:", "signature:A")
    assert client.get("/files/sub/second.txt", headers={"Cookie": f"{NAME}={wrong}"}).status_code == 403
    secure = TestClient(build_starlette(served_root, signer), base_url="https://testserver")
    assert "; Secure" in secure.get("/grant/sub/").headers["set-cookie"]
    assert secure.get("/files/sub/second.txt").content == b"second"


def test_starlette_bound_grants(served_root: Path) -> None:
    files_under(served_root)
    client = TestClient(build_starlette(served_root))
    assert client.get("/grant-bound/sub/", headers={"x-user": "alice"}).status_code == 200
    assert client.get("/bound-files/sub/second.txt", headers={"x-user": "alice"}).content == b"second"
    assert client.get("/bound-files/sub/second.txt", headers={"x-user": "bob"}).status_code == 403


@pytest.mark.server
@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_real_servers_serve_a_granted_folder_to_a_cookie_jar(server: str, served_root: Path, request: Any) -> None:
    files_under(served_root)
    (served_root / "sub" / "deeper").mkdir()
    (served_root / "sub" / "deeper" / "third.txt").write_text("third")
    base = request.getfixturevalue(server)
    with httpx.Client(base_url=base) as client:
        assert client.get("/files/sub/second.txt").status_code == 403
        assert client.get("/grant/sub/").status_code == 200
        assert client.get("/files/sub/second.txt").content == b"second"
        assert client.get("/files/sub/deeper/third.txt").content == b"third"
        assert client.get("/files/sub/caf%C3%A9%20menu.txt").content == b"menu"
        ranged = client.get("/files/sub/second.txt", headers={"Range": "bytes=0-2"})
        assert (ranged.status_code, ranged.content) == (206, b"sec")
        # The jar keeps the cookie to its Path: nothing outside the folder gets it, nor the file.
        assert client.get("/files/report.bin").status_code == 403
        assert client.get("/files/subway/x.txt").status_code == 403
        value = client.cookies[NAME]
    with httpx.Client(base_url=base, headers={"Cookie": f"{NAME}={value}"}) as forced:
        assert forced.get("/files/report.bin").status_code == 403
        assert forced.get("/files/subway/x.txt").status_code == 403
        assert forced.get("/files/sub/second.txt").content == b"second"


@URLS
def test_django_a_grant_cookie_in_a_second_cookie_header_under_asgi(client: Client, file_storage: Path) -> None:
    """HTTP/2 clients send a Cookie header per cookie; Django's ASGIRequest joins them with commas (ticket 36399):
    the grant is read from every header of the scope."""
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    files_under(file_storage)
    value = client.get("/grant/sub/").cookies[NAME].value

    async def scenario() -> None:
        split = AsyncClient()
        split.cookies["theme"] = "dark"  # the client's own Cookie header comes first
        response = await split.get("/files/sub/second.txt", headers={"cookie": f"{NAME}={value}"})
        assert response.status_code == 200
        assert (await split.get("/files/report.bin", headers={"cookie": f"{NAME}={value}"})).status_code == 403

    async_to_sync(scenario)()


def test_starlette_a_grant_cookie_in_a_second_cookie_header(served_root: Path) -> None:
    files_under(served_root)
    signer = make_signer()
    client = TestClient(build_starlette(served_root, signer))
    value = client.get("/grant/sub/").cookies[NAME]
    client.cookies.clear()
    split = [("cookie", "theme=dark"), ("cookie", f"{NAME}={value}")]
    assert client.get("/files/sub/second.txt", headers=split).content == b"second"
    assert client.get("/files/report.bin", headers=split).status_code == 403
