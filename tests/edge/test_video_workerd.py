"""docs/protecting-video.md's HLS video through the Cloudflare Worker (blake2sign_web/edge/verifiers/cloudflare/
worker.js) under workerd: ffprobe plays it by a folder link (the Worker signs the playlists) and by a grant cookie,
from a static file server that never sees a signature and with no request reaching the application; the links the
edge cannot admit get 403, and those only the application can decide (single-use, grouped) reach it."""

from __future__ import annotations

import http.server
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web.edge import keyring as keyrings
from blake2sign_web.links import grants
from blake2sign_web.links.signer import URLSigner
from tests.edge.conftest import program
from tests.edge.test_workerd import serve, startup, workerd

SECRET = "a workerd video test secret, never used elsewhere"
PURPOSE = "videos"
HOUR = 3600
LINK_PARAMETERS = ("signature=", "kid=", "expires=", "starts=", "prefix=", "once=", "group=", "issued=")


class Counting(http.server.ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 in a thread that counts the requests by path and keeps their raw targets."""

    daemon_threads = True

    def __init__(self, handler: type[http.server.BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.paths: Counter[str] = Counter()
        self.targets: list[str] = []
        self.cookies: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def record(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        self.paths[handler.path.split("?", 1)[0]] += 1
        self.targets.append(handler.path)
        if handler.headers.get("Cookie"):
            self.cookies.append(handler.headers["Cookie"])


def static_handler(root: Path) -> type[http.server.SimpleHTTPRequestHandler]:
    class Files(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.extensions_map = {**self.extensions_map, ".ts": "video/mp2t", ".m3u8": "application/vnd.apple.mpegurl"}
            super().__init__(*args, directory=str(root), **kwargs)

        def send_head(self) -> Any:
            self.server.record(self)  # type: ignore[attr-defined]
            return super().send_head()

        def log_message(self, *args: Any) -> None:
            pass

    return Files


class Application(http.server.BaseHTTPRequestHandler):
    """The application: what only it can decide (a nonce to consume, a group to check) comes here."""

    def answer(self) -> None:
        self.server.record(self)  # type: ignore[attr-defined]
        body = f"application {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = answer

    def log_message(self, *args: Any) -> None:
        pass


def make_stream(folder: Path) -> None:
    """docs/protecting-video.md's layout: master.m3u8 naming v0/index.m3u8, of 4 one-second segments v0/seg*.ts."""
    ffmpeg = program("ffmpeg", "ffmpeg")
    folder.mkdir(parents=True)
    command = [
        ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi",
        "-i", "testsrc=duration=4:size=160x120:rate=10", "-map", "0:v", "-b:v:0", "200k", "-g", "10",
        "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename", "v%v/seg%d.ts",
        "-master_pl_name", "master.m3u8", "-var_stream_map", "v:0", "v%v/index.m3u8",
    ]  # fmt: skip
    subprocess.run(command, cwd=folder, check=True, timeout=120)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workerd()  # before ffmpeg's work: skipped (failed in CI) without it
    root = tmp_path_factory.mktemp("workerd-video")
    make_stream(root / "videos" / "123")
    make_stream(root / "videos" / "124")
    return root


class Site:
    def __init__(self, base: str, static: Counting, application: Counting) -> None:
        self.base, self.static, self.application = base, static, application


@pytest.fixture(params=["origin", "refuse"])
def site(request: pytest.FixtureRequest, files: Path) -> Iterator[Site]:
    static, application = Counting(static_handler(files)), Counting(Application)
    static.thread.start()
    application.thread.start()
    keyring = keyrings.make(SECRET, purpose=PURPOSE).dumps()
    try:
        env = {"KEYRING": keyring, "UNVERIFIABLE": request.param}
        with serve("worker.capnp", env, {"files": static.port, "origin": application.port}) as port:
            yield Site(f"http://127.0.0.1:{port}", static, application)
    finally:
        for server in (static, application):
            server.shutdown()
            server.server_close()


def probe(url: str, cookie: str | None = None) -> subprocess.CompletedProcess[str]:
    """ffprobe's reading of the stream's duration at ``url``, sending ``cookie`` (name=value) with each request."""
    ffprobe = program("ffprobe", "ffmpeg")
    headers = [] if cookie is None else ["-headers", f"Cookie: {cookie}\r\n"]
    command = [ffprobe, "-v", "error", *headers, "-show_entries", "format=duration", "-of", "csv=p=0", url]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def duration(url: str, cookie: str | None = None) -> float:
    done = probe(url, cookie)
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip())


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, Any]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


def signer() -> URLSigner:
    return URLSigner(SECRET, purpose=PURPOSE, hasher="hmac-sha256")


def test_ffprobe_plays_the_video_by_a_folder_link(site: Site) -> None:
    folder = signer().sign_prefix("/videos/123/", expires_in=HOUR)
    assert abs(duration(site.base + folder.link("master.m3u8")) - 4) < 0.5
    assert site.application.paths == Counter()  # the edge decided every request
    assert site.static.paths["/videos/123/v0/seg0.ts"] >= 1
    assert site.static.paths["/videos/123/v0/index.m3u8"] >= 1
    assert not [t for t in site.static.targets if any(p in t for p in LINK_PARAMETERS)], site.static.targets

    status, body, headers = get(site.base + folder.link("master.m3u8"))
    assert status == 200
    assert headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert headers["Cache-Control"] == "private, no-store"
    assert f"v0/index.m3u8?{folder.query}" in body.decode()
    assert get(site.base + folder.link("master.m3u8"), {"Range": "bytes=0-9"})[:2] == (200, body)  # whole, rewritten
    status, body, headers = get(site.base + folder.link("v0/index.m3u8"))
    assert f"seg0.ts?{folder.query}" in body.decode()
    link = signer().sign("/videos/123/v0/seg0.ts?app=1&t=a%20b", expires_in=HOUR)
    status, body, headers = get(site.base + link)
    assert (status, headers["Content-Type"], headers.get("Vary")) == (200, "video/mp2t", None)
    application_pairs = [f for f in link.split("?")[1].split("&") if not f.startswith(LINK_PARAMETERS)]
    assert application_pairs == ["app=1", "t=a%20b"]
    assert site.static.targets[-1] == "/videos/123/v0/seg0.ts?app=1&t=a%20b"  # the application's pass on as sent
    assert site.application.paths == Counter()


def test_ffprobe_plays_the_video_by_a_grant_cookie(site: Site) -> None:
    cookie = grants.grant(signer(), "/videos/123/", secure=False, expires_in=HOUR)
    header = f"{cookie.name}={cookie.value}"
    assert abs(duration(site.base + "/videos/123/master.m3u8", header) - 4) < 0.5
    assert site.application.paths == Counter()
    assert site.static.paths["/videos/123/v0/seg3.ts"] >= 1
    assert not site.static.cookies  # the file server gets no cookie: its files are everyone's
    status, _, headers = get(site.base + "/videos/123/v0/seg0.ts", {"Cookie": f"session=1; {header}"})
    assert (status, headers["Cache-Control"], headers["Vary"]) == (200, "private", "Cookie")
    status, body, headers = get(site.base + "/videos/123/master.m3u8", {"Cookie": header})
    assert status == 200
    assert "?" not in body.decode()  # a cookie covers the segments: no rewrite
    assert probe(site.base + "/videos/124/master.m3u8", header).returncode != 0  # the cookie's folder only
    assert get(site.base + "/videos/124/master.m3u8", {"Cookie": header})[0] == 403


def test_the_links_the_edge_refuses_get_403(site: Site) -> None:
    now = int(time.time())
    sign = signer()
    folder = sign.sign_prefix("/videos/123/", expires_in=HOUR)
    good = folder.link("master.m3u8")
    refused = {
        "tampered signature": good[:-1],  # one character short: no MAC could match
        "expired": sign.sign_prefix("/videos/123/", expires_at=now - 10).link("master.m3u8"),
        "not yet valid": sign.sign_prefix("/videos/123/", expires_at=now + 2 * HOUR, starts=now + HOUR).link(
            "master.m3u8"
        ),
        "other folder": f"/videos/124/master.m3u8?{folder.query}",
        "unsigned": "/videos/123/master.m3u8",
    }
    for name, link in refused.items():
        assert get(site.base + link)[0] == 403, name
        assert probe(site.base + link).returncode != 0, name
    assert site.application.paths == Counter()
    assert site.static.paths == Counter()


def test_what_only_the_application_decides_reaches_it(site: Site, request: pytest.FixtureRequest) -> None:
    sign = signer()
    links = {
        "single use": sign.sign("/videos/123/master.m3u8", expires_in=HOUR, single_use=True),
        "grouped": sign.sign("/videos/123/master.m3u8", expires_in=HOUR, group="viewers"),
        # a MAC of no key here: maybe bound to a user, or of another purpose; the application tells
        "tampered path": sign.sign("/videos/123/master.m3u8", expires_in=HOUR).replace("/123/", "/124/"),
    }
    unverifiable = request.node.callspec.params["site"]
    for name, link in links.items():
        status, body, _ = get(site.base + link)
        if unverifiable == "origin":
            assert (status, body) == (200, f"application {link}".encode()), name  # forwarded unchanged
        else:
            assert status == 403, name
    assert sum(site.application.paths.values()) == (3 if unverifiable == "origin" else 0)
    assert site.static.paths == Counter()


def test_the_worker_starts_quickly(site: Site) -> None:
    assert startup
    assert startup[-1] < 5, startup
