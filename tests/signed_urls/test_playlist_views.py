"""What the file views send for a playlist by a folder link, in each framework (Django's test client, Starlette's
TestClient): its URIs with the request's own signed query, whole, uncached; anything else as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import path
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django.views import SignedFileView

from .conftest import django_signer
from .remote_storage import KeyPrefixStorage
from .starlette_app import build_starlette, make_signer

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")

MASTER = (
    "#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=1000\r\nv0/index.m3u8\r\n"
    '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="https://cdn.example.com/a.m3u8"\r\n'
    "/files/elsewhere/x.m3u8\r\n"
)


def signed_master(query: str) -> bytes:
    return MASTER.replace("v0/index.m3u8\r\n", f"v0/index.m3u8?{query}\r\n").encode()


@pytest.fixture
def videos(served_root: Path) -> Path:
    (served_root / "videos").mkdir()
    (served_root / "videos" / "master.m3u8").write_text(MASTER, newline="")
    return served_root


Get = Callable[..., Any]


def body(response: Any) -> bytes:
    """The body of a Django (maybe streaming) or Starlette response."""
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


@pytest.fixture(params=["django", "starlette"])
def framework(request: Any, videos: Path) -> tuple[Get, Get, URLSigner]:
    """GET and HEAD of a path on the framework's test app, and its link signer."""
    if request.param == "django":
        request.getfixturevalue("file_storage")
        client = Client()
        return client.get, client.head, django_signer()
    test_client = TestClient(build_starlette(videos), base_url="http://testserver")
    return test_client.get, test_client.head, make_signer()


def test_a_playlist_by_a_folder_link_passes_the_link_on(framework: tuple[Get, Get, URLSigner]) -> None:
    get, head, signer = framework
    folder = signer.sign_prefix("/files/videos/", expires_in=60)
    response = get(folder.link("master.m3u8"), headers={"Range": "bytes=0-9", "If-None-Match": "*"})
    assert response.status_code == 200  # whole: no range, no 304 (the body is not the file's)
    assert response.content == signed_master(folder.query)
    assert response.headers["Content-Length"] == str(len(signed_master(folder.query)))
    assert response.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert response.headers["Cache-Control"] == "private, no-store"
    assert "ETag" not in response.headers
    assert "Accept-Ranges" not in response.headers
    heads = head(folder.link("master.m3u8"))
    assert heads.status_code == 200
    # HEAD is answered without rewriting: no length, which only the rewrite tells (RFC 9110, 9.3.2).
    assert "Content-Length" not in heads.headers
    assert heads.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert body(heads) == b""
    # With ignored or extra parameters the link does not verify (403); the signed query is passed on, exactly.
    assert get("/files/videos/master.m3u8?" + folder.query + "&x=1").status_code == 403


def test_other_links_and_the_option_off_send_the_file_as_it_is(framework: tuple[Get, Get, URLSigner]) -> None:
    get, _, signer = framework
    one_file = signer.sign("/files/videos/master.m3u8", expires_in=60)  # a single-file link: nothing to pass on
    assert body(get(one_file)) == MASTER.encode()
    raw = signer.sign_prefix("/raw-playlists/videos/", expires_in=60)  # sign_playlists=False
    response = get(raw.link("master.m3u8"))
    assert body(response) == MASTER.encode()
    assert "ETag" in response.headers
    assert body(get(raw.link("master.m3u8"), headers={"Range": "bytes=0-6"})) == b"#EXTM3U"


def test_django_offloading_view_sends_the_playlist_itself(client: Client, file_storage: Path, videos: Path) -> None:
    folder = django_signer().sign_prefix("/accel/videos/", expires_in=60)
    response = client.get(folder.link("master.m3u8"))
    assert "X-Accel-Redirect" not in response.headers
    assert response.content == signed_master(folder.query)
    (videos / "videos" / "seg.ts").write_bytes(b"ts")
    assert client.get(folder.link("seg.ts")).headers["X-Accel-Redirect"] == "/protected/videos/seg.ts"


def test_starlette_passes_on_the_query_without_ignored_parameters(videos: Path) -> None:
    signer = make_signer(ignore=["utm_*"])
    client = TestClient(build_starlette(videos, signer), base_url="http://testserver")
    folder = signer.sign_prefix("/files/videos/", expires_in=60)
    response = client.get(folder.link("master.m3u8") + "&utm_source=%22%0D%0Ainjected")
    assert response.content == signed_master(folder.query)


class WholeObjects(KeyPrefixStorage):
    """Like django-storages' Google Cloud or Azure backends: seeking a file downloads the whole object, so a Range
    is redirected to the storage's own URL."""

    def url(self, name: str | None) -> str:
        return f"https://storage.example/{name}"


WholeObjects.__module__ = "storages.backends.example"
urlpatterns = [path("remote/<path:name>", SignedFileView.as_view(storage=WholeObjects()))]


@pytest.mark.urls(__name__)
def test_a_range_of_a_playlist_is_not_redirected_to_the_storages_unsigned_copy(client: Client) -> None:
    KeyPrefixStorage.objects.clear()
    KeyPrefixStorage.objects.update({"videos/master.m3u8": MASTER.encode(), "videos/seg.ts": b"ts" * 100})
    try:
        folder = django_signer().sign_prefix("/remote/videos/", expires_in=60)
        response = client.get(folder.link("master.m3u8"), headers={"Range": "bytes=0-"})  # as ffmpeg asks
        assert response.status_code == 200
        assert response.content == signed_master(folder.query)
        segment = client.get(folder.link("seg.ts"), headers={"Range": "bytes=0-9"})
        assert segment.status_code == 302  # a segment's range goes to the storage as before
        assert segment["Location"] == "https://storage.example/videos/seg.ts"
    finally:
        KeyPrefixStorage.objects.clear()
