"""HLS over real servers with a real client: ffmpeg reads a master playlist by a folder link from gunicorn (Django's
SignedFileView) and uvicorn (Starlette's SignedFiles), which pass the link on to each playlist's URIs; every request
it makes is counted in the server's access log. A wrong or expired signature is refused, and ffmpeg fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web import URLSigner

from ..servers import free_port, logged_server, stop_process
from .conftest import django_signer
from .starlette_app import make_signer

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.server
HINT = "not found: install Debian's ffmpeg package (apt-get install ffmpeg), which has ffprobe"
SEGMENTS = 6  # one-second segments of a six-second stream, in each of two variants
#: A request line and its status, as gunicorn's and uvicorn's access logs both write them.
ACCESS = re.compile(r'"(GET|HEAD) (/\S*) HTTP/1\.1" (\d{3})')


def program(name: str) -> str:
    """``name``'s path; pytest.skip outside CI, pytest.fail under CI, when it is missing."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} {HINT} (CI must run the HLS tests)", pytrace=False)
        pytest.skip(f"{name} {HINT}")
    return found


def make_stream(folder: Path) -> None:
    """A master playlist with two H.264 (or MPEG-2) variants of ``SEGMENTS`` one-second MPEG-TS segments each."""
    ffmpeg = program("ffmpeg")
    codecs = subprocess.run([ffmpeg, "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    codec = ["-c:v", "libx264", "-preset", "ultrafast"] if " libx264 " in codecs else ["-c:v", "mpeg2video"]
    folder.mkdir(parents=True)
    command = [
        ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10",
        "-t", str(SEGMENTS), "-map", "0:v", "-map", "0:v", *codec, "-b:v:0", "200k", "-b:v:1", "100k",
        "-g", "10", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
        "-hls_segment_filename", "v%v/seg%d.ts", "-master_pl_name", "master.m3u8",
        "-var_stream_map", "v:0 v:1", "v%v/index.m3u8",
    ]  # fmt: skip
    subprocess.run(command, cwd=folder, check=True, timeout=60)


@pytest.fixture
def videos(served_root: Path) -> Path:
    folder = served_root / "videos" / "1"
    make_stream(folder)
    return folder


def server_command(server: str, port: int) -> tuple[list[str], dict[str, str]]:
    if server == "gunicorn":
        # Threads: ffmpeg keeps each connection open after its response, and a sync worker lingers on each closed
        # one (up to 2 s, gunicorn's close_graceful) before it reads the next request.
        command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4"]
        command += ["--access-logfile", "-"]
        return [*command, "tests.signed_urls.wsgi"], {"DJANGO_SETTINGS_MODULE": "tests.signed_urls.server_settings"}
    command = [
        str(BIN / "uvicorn"), "--factory", "tests.signed_urls.starlette_app:app_from_env",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "info",
    ]  # fmt: skip
    return command, {}


Requests = Callable[[], list[tuple[str, str, int]]]


@pytest.fixture(params=["gunicorn", "uvicorn"])
def server(request: Any, served_root: Path, videos: Path, tmp_path: Path) -> Iterator[tuple[str, Requests, URLSigner]]:
    """The server's base URL, what stops it and reads every request from its access log (path, query, status), and
    the signer of its links. (A server writes a request's line after its response: read once it has stopped.)"""
    port, log = free_port(), tmp_path / "server.log"
    command, env = server_command(request.param, port)
    with logged_server(command, port, log, BLAKE2SIGN_SERVED_ROOT=str(served_root), **env) as (base, process):

        def requests() -> list[tuple[str, str, int]]:
            stop_process(process)
            return [(path, query, int(status)) for _, target, status in ACCESS.findall(log.read_text())
                    for path, _, query in [target.partition("?")]]  # fmt: skip

        yield base, requests, django_signer() if request.param == "gunicorn" else make_signer()


def read_stream(url: str, out: Path) -> subprocess.CompletedProcess[str]:
    command = [program("ffmpeg"), "-hide_banner", "-loglevel", "error", "-y", "-i", url, "-c", "copy", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def duration(path: Path) -> float:
    command = [program("ffprobe"), "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)]
    found = subprocess.run(command, capture_output=True, text=True, check=True, timeout=30).stdout
    return float(json.loads(found)["format"]["duration"])


def test_ffmpeg_reads_a_signed_master_playlist_and_every_segment_is_verified(
    server: tuple[str, Requests, URLSigner], tmp_path: Path
) -> None:
    base, requests, signer = server
    folder = signer.sign_prefix("/files/videos/1/", expires_in=300)
    out = tmp_path / "out.ts"
    finished = read_stream(base + folder.link("master.m3u8"), out)
    assert finished.returncode == 0, finished.stderr
    assert abs(duration(out) - SEGMENTS) < 0.5
    seen = requests()
    assert seen
    assert all(status in (200, 206) for _, _, status in seen), seen  # nothing refused (ffmpeg asks for ranges)
    assert all(query == folder.query for _, query, _ in seen)  # each URI carried the folder's query, exactly
    fetched = Counter(path for path, _, _ in seen)
    assert fetched["/files/videos/1/master.m3u8"] == 1
    variants = [v for v in ("v0", "v1") if fetched[f"/files/videos/1/{v}/index.m3u8"]]
    assert variants
    # The variant ffmpeg plays: every one of its segments fetched, and verified (200).
    assert any(all(fetched[f"/files/videos/1/{v}/seg{n}.ts"] for n in range(SEGMENTS)) for v in variants), fetched


@pytest.mark.parametrize("wrong", ["tampered", "expired", "other folder"])
def test_ffmpeg_is_refused_a_wrong_or_expired_signature(
    server: tuple[str, Requests, URLSigner], tmp_path: Path, wrong: str
) -> None:
    base, requests, signer = server
    if wrong == "expired":
        url, status = signer.sign_prefix("/files/videos/1/", expires_at=1_000_000_000).link("master.m3u8"), 410
    elif wrong == "tampered":
        url = signer.sign_prefix("/files/videos/1/", expires_in=300).link("master.m3u8")
        url, status = url[:-10] + ("A" if url[-10] != "A" else "B") + url[-9:], 403  # a bit of the MAC
    else:
        url, status = signer.sign_prefix("/files/videos/2/", expires_in=300).query, 403
        url = "/files/videos/1/master.m3u8?" + url
    finished = read_stream(base + url, tmp_path / "out.ts")
    assert finished.returncode != 0
    assert [(path, code) for path, _, code in requests()] == [("/files/videos/1/master.m3u8", status)]


def test_without_sign_playlists_a_player_with_no_cookie_is_refused_the_variants(
    server: tuple[str, Requests, URLSigner], tmp_path: Path
) -> None:
    base, requests, signer = server
    folder = signer.sign_prefix("/raw-playlists/videos/1/", expires_in=300)  # sign_playlists=False there
    finished = read_stream(base + folder.link("master.m3u8"), tmp_path / "out.ts")
    assert finished.returncode != 0
    seen = [(path, query, status) for path, query, status in requests()]
    assert seen[0][:2] == ("/raw-playlists/videos/1/master.m3u8", folder.query)
    assert seen[0][2] in (200, 206)  # the file as it is (ffmpeg asks for "bytes=0-")
    assert {(path, status) for path, _, status in seen[1:]} <= {
        ("/raw-playlists/videos/1/v0/index.m3u8", 403),
        ("/raw-playlists/videos/1/v1/index.m3u8", 403),
    }
    assert len(seen) > 1
