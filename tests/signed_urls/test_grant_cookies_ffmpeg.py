"""A real player by grant cookie: ffmpeg reads an HLS playlist and every segment it names, relative URLs with no
signature, from gunicorn (Django) and uvicorn (Starlette), sending the cookie by its Path (``-cookies``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from blake2sign_web.links.grants import grant_name

pytestmark = pytest.mark.server
NAME = grant_name("/files/sub/")


def find_ffmpeg() -> str:
    """ffmpeg's path: the test is skipped without it, and fails under CI."""
    found = shutil.which("ffmpeg")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("ffmpeg is not installed (apt-get install ffmpeg): CI must run the player test", pytrace=False)
        pytest.skip("ffmpeg is not installed")
    return found


def hls(ffmpeg: str, folder: Path) -> list[str]:
    """A 3-second HLS stream of 1-second segments in ``folder``: the segments' names."""
    folder.mkdir(parents=True)
    subprocess.run(
        [
            ffmpeg, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=3:size=64x48:rate=10",
            "-c:v", "mpeg2video", "-g", "10", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
            "-hls_segment_filename", str(folder / "seg-%d.ts"), str(folder / "index.m3u8"),
        ],
        check=True,
        timeout=60,
    )  # fmt: skip
    return sorted(path.name for path in folder.glob("*.ts"))


def play(ffmpeg: str, url: str, cookies: str | None) -> subprocess.CompletedProcess[str]:
    """ffmpeg reading the playlist at ``url`` and the segments it names to the end (``-cookies``: Set-Cookie lines)."""
    options = [] if cookies is None else ["-cookies", cookies]
    command = [ffmpeg, "-nostdin", "-loglevel", "error", *options, "-i", url, "-c", "copy", "-f", "framecrc", "-"]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("server", ["gunicorn", "uvicorn"])
def test_ffmpeg_plays_a_granted_hls_folder_by_cookie(server: str, served_root: Path, request: Any) -> None:
    ffmpeg = find_ffmpeg()
    segments = hls(ffmpeg, served_root / "sub" / "hls")
    assert len(segments) >= 3
    (served_root / "other").mkdir()
    shutil.copytree(served_root / "sub" / "hls", served_root / "other" / "hls")
    base = request.getfixturevalue(server)
    with httpx.Client(base_url=base) as client:
        assert client.get("/grant/sub/").status_code == 200
        value = client.cookies[NAME]
    # ffmpeg 5.1 sends no cookie with a Domain to an IP address; without one, it is this host's.
    cookie = f"{NAME}={value}; path=/files/sub/\n"
    played = play(ffmpeg, f"{base}/files/sub/hls/index.m3u8", cookie)
    assert played.returncode == 0, played.stderr
    frames = [line for line in played.stdout.splitlines() if line and not line.startswith("#")]
    assert len(frames) == 30  # 3 seconds at 10 frames a second: every segment was served
    # No cookie, or the cookie outside its folder (sent whatever its Path says): the playlist is refused.
    assert play(ffmpeg, f"{base}/files/sub/hls/index.m3u8", None).returncode != 0
    outside = f"{NAME}={value}; path=/\n"
    assert play(ffmpeg, f"{base}/files/other/hls/index.m3u8", outside).returncode != 0
