"""The JavaScript verifier under njs (0.7.9, the engine of nginx's js module): the vectors, the differential fuzz and
the corner cases decide as the reference does; nginx with the shipped snippet serves files only by valid links."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.edge.conftest import VECTORS, compare, program
from tests.edge.test_node import (
    MASTER,
    SECRET_E2E,
    VERIFIERS,
    compare_playlists,
    corner_cases_file,
    get,
    playlist_uris,
    run,
    signed_links,
    write_site,
)

__all__ = ["corner_cases_file"]  # the fixture, shared with the Node tests

RUNNER = Path(__file__).with_name("runners") / "njs_runner.js"
MODULE = Path("/usr/lib/nginx/modules/ngx_http_js_module.so")


def njs() -> str:
    return program("njs", "njs")


def test_njs_decides_the_vectors_as_the_reference() -> None:
    assert compare(json.loads(VECTORS.read_text()), run([njs(), str(RUNNER)], VECTORS)) >= 217


def test_njs_decides_the_fuzz_cases_as_the_reference(fuzz_cases: Path) -> None:
    assert compare(fuzz_cases, run([njs(), str(RUNNER)], fuzz_cases)) >= 500


def test_njs_rewrites_the_playlists_as_the_reference() -> None:
    assert compare_playlists(run([njs(), str(RUNNER), "--playlists"], VECTORS)) >= 21


def test_njs_decides_the_corner_cases_as_the_reference(corner_cases_file: Path) -> None:
    compare(corner_cases_file, run([njs(), str(RUNNER)], corner_cases_file))


# ---- nginx + njs, configured by the shipped snippet ----


class Origin(http.server.ThreadingHTTPServer):
    """The application behind nginx: answers "origin <target>" and remembers the targets it got."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                origin.targets.append(self.path)
                body = f"origin {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture
def origin() -> Iterator[Origin]:
    server = Origin()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def nginx_conf(tmp: Path, root: Path, keyring: Path, origin_port: int, ports: dict[str, int]) -> str:
    """A whole nginx.conf around the shipped snippet: its http lines, and its server lines once per
    ``$linkcheck_unverifiable`` value (one server each, on ``ports``). ``sendfile on`` at http level, as Debian's
    nginx.conf has it: the snippet's playlist location turns it off, which its body filter needs."""
    snippet = (VERIFIERS / "nginx" / "nginx.conf").read_text()
    replacements = {
        "/etc/nginx/blake2sign/nginx": str(VERIFIERS / "nginx"),
        "/etc/nginx/blake2sign/keyring.json": str(keyring),
        "127.0.0.1:8000": f"127.0.0.1:{origin_port}",
        "root /srv;": f"root {root};",
    }
    for old, new in replacements.items():
        assert old in snippet, old
        snippet = snippet.replace(old, new)
    http_part, _, server_part = snippet.partition("# --- server {} ---")
    setting = "set $linkcheck_unverifiable refuse;"
    assert setting in server_part
    servers = "".join(
        f"server {{ listen 127.0.0.1:{port};\n{server_part.replace(setting, setting.replace('refuse', value))}\n}}\n"
        for value, port in ports.items()
    )
    temp = "".join(
        f"{kind}_temp_path {tmp}/temp/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"load_module {MODULE};\ndaemon off;\nmaster_process off;\npid {tmp}/nginx.pid;\n"
        f"error_log {tmp}/error.log info;\nevents {{ worker_connections 64; }}\n"
        f"http {{\naccess_log {tmp}/access.log;\nsendfile on;\n{temp}{http_part}\n{servers}}}\n"
    )


def wait_for(port: int, process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"nginx exited: {log.read_text() if log.exists() else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    pytest.fail("nginx did not start")


def make_stream(folder: Path) -> None:
    """A real HLS stream (a master playlist, a media playlist, 1-second segments) made by ffmpeg in ``folder``."""
    ffmpeg = program("ffmpeg", "ffmpeg")
    folder.mkdir(parents=True)
    done = subprocess.run(
        [ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=duration=4:size=160x120:rate=10", "-g", "10", "-f", "hls",
         "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename", str(folder / "seg%d.ts"),
         str(folder / "index.m3u8")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "seg3.ts" in (folder / "index.m3u8").read_text()
    (folder / "master.m3u8").write_text("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=200000,RESOLUTION=160x120\nindex.m3u8\n")


def probe(url: str, *options: str) -> float:
    """The duration ffprobe reads from the HLS stream at ``url``."""
    ffprobe = program("ffprobe", "ffmpeg")
    done = subprocess.run(
        [ffprobe, "-v", "error", *options, "-show_entries", "format=duration", "-of", "csv=p=0", url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return float(done.stdout.strip())


def test_nginx_serves_files_by_signed_links_only(tmp_path: Path, origin: Origin) -> None:
    binary = program("nginx", "nginx")
    if not MODULE.exists():
        from tests.browser import missing

        missing(f"{MODULE} (Debian's libnginx-mod-http-js package: apt-get install libnginx-mod-http-js)")
    root, keyring = write_site(tmp_path, SECRET_E2E)
    make_stream(root / "files" / "folder" / "hls")
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / "temp" / kind).mkdir(parents=True)
    ports = {"origin": free_port(), "refuse": free_port()}
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_conf(tmp_path, root, keyring, origin.server_address[1], ports))
    log = tmp_path / "error.log"
    command = [binary, "-p", f"{tmp_path}/", "-c", str(conf), "-e", str(log)]
    checked = subprocess.run([*command, "-t", "-q"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for port in ports.values():
            wait_for(port, server, log)
        links = signed_links(SECRET_E2E, time.time())
        path, cookie = links["grant"]
        query = links["playlist"].split("?", 1)[1]
        for setting, port in ports.items():
            base = f"http://127.0.0.1:{port}"
            status, body, headers = get(base + links["file"])
            assert (status, body) == (200, b"report\n")
            assert not {"Vary", "Cache-Control"} & set(headers)
            assert get(base + links["folder"])[:2] == (200, b"folder a\n")
            status, body, headers = get(base + path, {"Cookie": f"session=1; {cookie}"})
            assert (status, body) == (200, b"folder b\n")
            assert (headers["Cache-Control"], headers["Vary"]) == ("private", "Cookie")
            assert get(base + links["file"], method="HEAD")[0] == 200
            for name in ("expired", "not yet valid", "other folder", "unsigned"):
                assert get(base + links[name])[0] == 403, (setting, name)
            assert get(base + "/files/other/a.txt", {"Cookie": cookie})[0] == 403  # the cookie's folder only
            assert get(base + "/files/folder/b.txt")[0] == 403
            for name in ("tampered", "tampered playlist", "single use", "grouped"):  # the origin decides these
                status, body, _ = get(base + links[name])
                if setting == "origin":  # proxied with the target as sent
                    assert (status, body) == (200, f"origin {links[name]}".encode()), name
                else:
                    assert status == 403, name
            status, body, _ = get(base + links["file"], method="POST")
            assert status == (200 if setting == "origin" else 403), body
            check_nginx_playlists(base, links, cookie)
            hls = f"{base}/files/folder/hls/master.m3u8"
            assert get(hls)[0] == 403
            assert 3.5 < probe(f"{hls}?{query}") < 4.5  # by the folder link: the URIs rewritten
            assert 3.5 < probe(hls, "-headers", f"Cookie: {cookie}\r\n") < 4.5  # by the cookie alone
        fetched = set()  # (path, by the link's query, status) of the stream's requests nginx answered
        for line in (tmp_path / "access.log").read_text().splitlines():
            target, answer = line.split('"')[1].split()[1], line.split('"')[2].split()[0]
            if target.startswith("/files/folder/hls/seg"):
                fetched.add((target.split("?")[0], "?" in target, answer))
        assert {(f"/files/folder/hls/seg{i}.ts", by_link) for i in range(4) for by_link in (True, False)} == {
            (path, by_link) for path, by_link, _ in fetched
        }
        assert {answer for _, _, answer in fetched} <= {"200", "206"}
        proxied = [links[name] for name in ("tampered", "tampered playlist", "single use", "grouped", "file")]
        assert origin.targets == proxied  # and no segment or playlist: nginx served those
    finally:
        server.terminate()
        server.wait(timeout=10)


def check_nginx_playlists(base: str, links: dict[str, str], cookie: str) -> None:
    """As the Node middleware's (check_playlists)."""
    query = links["playlist"].split("?", 1)[1]
    status, body, headers = get(base + links["playlist"], {"Range": "bytes=0-9", "If-Modified-Since": "x"})
    assert status == 200, body
    assert body.decode() == MASTER.replace("v0/index.m3u8", f"v0/index.m3u8?{query}")
    assert headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert headers["Cache-Control"] == "private, no-store"
    assert not {"Content-Length", "ETag", "Last-Modified", "Accept-Ranges", "Content-Range"} & set(headers)
    status, media, _ = get(f"{base}/files/folder/video/v0/index.m3u8?{query}")
    uris = playlist_uris(media.decode())
    assert status == 200
    assert [uri.endswith(f"?{query}") for uri in uris] == [True] * 3, media
    for uri in uris:
        status, data, _ = get(f"{base}/files/folder/video/v0/{uri}")
        assert (status, data) == (200, f"segment {uri.split('?')[0]}\n".encode()), uri
    status, body, headers = get(f"{base}/files/folder/video/master.m3u8", {"Cookie": cookie})
    assert (status, body.decode()) == (200, MASTER)  # a cookie covers the URIs by itself
    assert (headers["Cache-Control"], headers["Vary"]) == ("private", "Cookie")
    assert get(base + links["playlist"], method="HEAD")[0] == 200
    status, body, _ = get(base + links["playlist"].replace("master.m3u8", "big.m3u8"))
    assert (status, body) == (500, b"This playlist is too large to be sent by a folder link.\n")
