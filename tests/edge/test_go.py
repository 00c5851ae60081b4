"""The Go verifier (blake2sign_web/edge/verifiers/go/linkcheck): the vectors, the playlist vectors and the fuzz cases
through its runner, its own Go tests, and a Go file server behind its middleware, end to end.

Built offline with Debian's golang-go (Go 1.19, the standard library only): GOPROXY=off, caches in tmp.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from blake2sign_web.edge import keyring as keyrings
from blake2sign_web.edge.reference import KeyringSigner, playlist_query
from blake2sign_web.links import grants
from blake2sign_web.links.playlists import front_server_rewrite
from blake2sign_web.links.signer import URLSigner
from tests.edge.conftest import VECTORS, compare, program

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "blake2sign_web" / "edge" / "verifiers" / "go" / "linkcheck"
RUNNERS = Path(__file__).with_name("runners")
SECRET = "go edge test secret"


class Go(NamedTuple):
    command: str
    env: dict[str, str]
    bin: Path


@pytest.fixture(scope="module")
def go(tmp_path_factory: pytest.TempPathFactory) -> Go:
    """The go command and an offline build environment: no module proxy, no toolchain download, no cgo."""
    home = tmp_path_factory.mktemp("go")
    env = dict(os.environ, GOPROXY="off", GOTOOLCHAIN="local", GOFLAGS="", CGO_ENABLED="0", GO111MODULE="on")
    env.update(GOCACHE=str(home / "cache"), GOPATH=str(home / "path"))
    return Go(program("go", "golang-go"), env, home)


def _run(go: Go, *args: str, cwd: Path) -> str:
    done = subprocess.run([go.command, *args], cwd=cwd, env=go.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"go {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


def _build(go: Go, name: str) -> str:
    out = str(go.bin / name)
    _run(go, "build", "-o", out, ".", cwd=RUNNERS / name)
    return out


@pytest.fixture(scope="module")
def runner(go: Go) -> str:
    return _build(go, "go_runner")


def _decide(runner: str, cases: Path, *flags: str) -> str:
    done = subprocess.run([runner, str(cases), *flags], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _playlists(runner: str, cases: dict[str, Any], tmp_path: Path) -> int:
    """Run ``cases``' playlist_queries and playlists through the runner; assert each answer is the expected one."""
    path = tmp_path / "playlists.json"
    path.write_text(json.dumps(cases))
    # split at LF alone: a playlist's text may hold U+0085 or U+001C, where str.splitlines splits too
    lines = [json.loads(line) for line in _decide(runner, path, "--playlists").split("\n") if line]
    expected = [{"query": c["expect"]} for c in cases["playlist_queries"]]
    expected += [{"text": c["expect"]} for c in cases["playlists"]]
    assert len(lines) == len(expected)
    wrong = [(case, line) for case, line in zip(cases["playlist_queries"] + cases["playlists"], lines, strict=True)
             if line not in ({"query": case["expect"]}, {"text": case["expect"]})]  # fmt: skip
    assert not wrong, f"{len(wrong)} disagree with the reference; the first: {wrong[:4]}"
    return len(lines)


def test_the_vectors(runner: str) -> None:
    assert compare(VECTORS, _decide(runner, VECTORS)) >= 217


def test_the_fuzz_cases(runner: str, fuzz_cases: Path) -> None:
    assert compare(fuzz_cases, _decide(runner, fuzz_cases)) >= 500


def test_the_playlist_vectors(runner: str, tmp_path: Path) -> None:
    assert _playlists(runner, json.loads(VECTORS.read_text()), tmp_path) == 21


#: What fuzzed playlists are made of: URIs simple or not, tags with URI attributes, spaces Python strips, BOMs.
URIS = ("seg0.ts", "a/b.ts", "../x.ts", "./a.ts", "a/./b", ".", "..", "...", "~", "a%20b", "a?b", "/abs.ts", "http://h/a",
        "é.ts", "a b", "")  # fmt: skip
SPACES = ("", "", "", " ", "\t", "\x1c", "\x1f", "\x85", "\xa0", "\u3000", "\u200b", "\ufeff", "\ufeff\ufeff")
TAGS = ("#EXTM3U", "#EXTINF:2,", "#EXT-X-KEY:", "#EXT-X-MAP:", "#EXT-X-MEDIA:", "#EXT-X-FOO:", "#", "EXT-X-MAP:")
ATTRIBUTES = ('URI="{}"', "URI={}", 'uri="{}"', "METHOD=AES-128", "X=1", 'X="a,b"', '"', "", ",")


def _playlist(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(0, 8)):
        body = rng.choice(URIS)
        if rng.random() < 0.5:
            attributes = [rng.choice(ATTRIBUTES).format(rng.choice(URIS)) for _ in range(rng.randint(0, 3))]
            body = rng.choice(TAGS) + rng.choice((",", ",", ", ")).join(attributes)
        lines.append(rng.choice(SPACES) + body + rng.choice(SPACES) + rng.choice(("\n", "\n", "\r\n", "\r", "")))
    return "".join(lines)


PLAYLIST_PATHS = ("/videos/12/a.m3u8", "/videos/12/v0/x.m3u8", "/videos/12/a%2Fb/x.m3u8", "/videos/1/a.m3u8",
                  "/videos/12/%7E/a.m3u8", "/videos/12//a.m3u8", "/videos/12/%C3%A9/a.m3u8", "/videos/12/%FF/a.m3u8",
                  "/videos/12/../a.m3u8", "/videos/12/.%2E/a.m3u8", "/videos/12/a b/a.m3u8", "/a.m3u8")  # fmt: skip


def test_fuzzed_playlists(runner: str, fuzz_cases: Path, tmp_path: Path) -> None:
    """The fuzz cases' targets as playlist requests, and random playlists, as the reference answers them."""
    fuzzed = json.loads(fuzz_cases.read_text())
    signers = {name: KeyringSigner(keyrings.load(ring)) for name, ring in fuzzed["keyrings"].items()}
    targets = [(v["keyring"], v["request"]["target"]) for v in fuzzed["vectors"]]
    queries = [{"keyring": ring, "target": target, "expect": playlist_query(signers[ring], target)}
               for ring, target in targets]  # fmt: skip
    rng = random.Random(int(os.environ.get("BLAKE2SIGN_FUZZ_SEED", "1")))
    query = "prefix=%2Fvideos%2F12%2F&signature=x"
    playlists = []
    for _ in range(len(queries)):
        text = _playlist(rng)
        path = rng.choice(PLAYLIST_PATHS)
        playlists.append({"text": text, "query": query, "path": path, "prefix": "/videos/12/",
                          "expect": front_server_rewrite(text, query, path, "/videos/12/")})  # fmt: skip
    assert any(case["expect"] != case["text"] for case in playlists)
    cases = {"keyrings": fuzzed["keyrings"], "playlist_queries": queries, "playlists": playlists}
    assert _playlists(runner, cases, tmp_path) == 2 * len(queries)


def test_go_vet_and_its_own_tests(go: Go) -> None:
    _run(go, "vet", ".", cwd=PACKAGE)
    assert "ok" in _run(go, "test", "-count=1", ".", cwd=PACKAGE)


# End to end: a Go file server behind the middleware, on a free port of 127.0.0.1.


@pytest.fixture(scope="module")
def site(go: Go, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The files, the keyring, and two servers: "refuse" (403 for what the edge cannot check) and "origin"."""
    server = _build(go, "go_server")
    root = tmp_path_factory.mktemp("site")
    for name in ("files/report.pdf", "videos/12/a.ts", "videos/13/a.ts", "videos/12/init.mp4", "videos/12/720p/b.ts"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"contents of {name}\n")
    (root / "videos/12/index.m3u8").write_text(PLAYLIST)
    (root / "videos/12/big.m3u8").write_text("#EXTM3U\n" + "a.ts\n" * (1 << 18))
    ring = root.parent / "keyring.json"
    ring.write_text(keyrings.make(SECRET, purpose="downloads").dumps())
    processes, urls = [], {}
    try:
        for mode in ("refuse", "origin"):
            args = [server, "-keyring", str(ring), "-root", str(root), "-unverifiable", mode]
            process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            processes.append(process)
            line = process.stdout.readline().strip() if process.stdout else ""
            assert line.startswith("http://127.0.0.1:"), (line, process.stderr.read() if process.stderr else "")
            urls[mode] = line.removeprefix("http://")
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


class Response(NamedTuple):
    status: int
    headers: http.client.HTTPMessage
    body: str


def _fetch(address: str, target: str, cookie: str | None = None, method: str = "GET", **headers: str) -> Response:
    """The response to a request for ``target`` sent exactly as written."""
    connection = http.client.HTTPConnection(address, timeout=10)
    try:
        connection.request(method, target, headers={"Cookie": cookie, **headers} if cookie else headers)
        response = connection.getresponse()
        return Response(response.status, response.headers, response.read().decode())
    finally:
        connection.close()


def _get(address: str, target: str, cookie: str | None = None) -> tuple[int, str, str]:
    """(status, X-Edge-Decision, body) of a GET of ``target`` sent exactly as written."""
    response = _fetch(address, target, cookie)
    return response.status, response.headers.get("X-Edge-Decision", ""), response.body


@pytest.mark.server
def test_signed_links_and_grant_cookies_get_the_file(site: dict[str, str]) -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256")
    folder = signer.sign_prefix("/videos/12/", expires_in=3600)
    cookie = grants.grant(signer, "/videos/12/", secure=False, expires_in=3600)
    for mode, address in site.items():
        file = _get(address, signer.sign("/files/report.pdf", expires_in=3600))
        assert file == (200, "allow", "contents of files/report.pdf\n"), mode
        assert _get(address, folder.link("a.ts"))[:2] == (200, "allow"), mode
        assert _get(address, "/videos/12/a.ts", f"{cookie.name}={cookie.value}")[:2] == (200, "allow"), mode


@pytest.mark.server
def test_tampered_expired_and_other_folder_links_are_refused(site: dict[str, str]) -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256")
    link = signer.sign("/files/report.pdf", expires_in=3600)
    expired = signer.sign("/files/report.pdf", expires_at=int(time.time()) - 10)
    folder = signer.sign_prefix("/videos/12/", expires_in=3600)
    cookie = grants.grant(signer, "/videos/12/", secure=False, expires_in=3600)
    for mode, address in site.items():
        assert _get(address, expired)[0] == 403, mode
        assert _get(address, f"/videos/13/a.ts?{folder.query}")[0] == 403, mode
        assert _get(address, "/videos/13/a.ts", f"{cookie.name}={cookie.value}")[0] == 403, mode
        assert _get(address, "/videos/12/../13/a.ts?" + folder.query)[0] == 403, mode
        assert _get(address, "/files/report.pdf")[0] == 403, mode
    # A MAC that does not match may be another key's (or a link bound to a user): the origin's, when it is asked.
    tampered = link.replace("/files/report.pdf", "/videos/13/a.ts")
    assert _get(site["refuse"], tampered)[0] == 403
    assert _get(site["origin"], tampered) == (200, "origin", "origin\n")


@pytest.mark.server
def test_a_single_use_link_goes_to_the_origin_or_is_refused(site: dict[str, str]) -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256")
    once = signer.sign("/files/report.pdf", expires_in=3600, single_use=True)
    assert _get(site["refuse"], once)[0] == 403
    assert _get(site["origin"], once) == (200, "origin", "origin\n")


#: The site's playlist: a segment, an init section, a deeper segment, and a URI outside the folder (not signed).
PLAYLIST = '#EXTM3U\r\n#EXT-X-MAP:URI="init.mp4"\r\n#EXTINF:2,\r\na.ts\r\n#EXTINF:2,\r\n720p/b.ts\r\n../13/a.ts\r\n'


@pytest.mark.server
def test_a_folder_links_playlist_is_signed_and_its_uris_fetch_their_files(site: dict[str, str]) -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256")
    folder = signer.sign_prefix("/videos/12/", expires_in=3600)
    link = folder.link("index.m3u8")
    query = playlist_query(KeyringSigner(keyrings.make(SECRET, purpose="downloads")), link)
    assert query is not None
    expected = front_server_rewrite(PLAYLIST, query, "/videos/12/index.m3u8", "/videos/12/")
    for mode, address in site.items():
        for headers in ({}, {"Range": "bytes=0-9"}, {"If-None-Match": "*"}):
            response = _fetch(address, link, **headers)
            assert (response.status, response.body) == (200, expected), (mode, headers)
            assert response.headers["Content-Type"] == "application/vnd.apple.mpegurl"
            assert response.headers["Cache-Control"] == "private, no-store"
            assert response.headers["Content-Length"] == str(len(expected.encode()))
            for name in ("ETag", "Last-Modified", "Accept-Ranges", "Content-Range"):
                assert name not in response.headers, (mode, headers, name)
        head = _fetch(address, link, method="HEAD")
        assert (head.status, head.headers["Cache-Control"], head.body) == (200, "private, no-store", "")
        uris = [line for line in expected.replace('"', "\n").splitlines() if "?" in line]
        assert len(uris) == 3  # a.ts, 720p/b.ts, init.mp4; not ../13/a.ts
        assert "\r\n../13/a.ts\r\n" in expected
        for uri in uris:
            name = "videos/12/" + uri.partition("?")[0]
            assert _get(address, "/videos/12/" + uri) == (200, "allow", f"contents of {name}\n"), (mode, uri)
        assert _fetch(address, folder.link("big.m3u8")).status == 500


@pytest.mark.server
def test_granted_responses_are_private_and_vary_by_cookie(site: dict[str, str]) -> None:
    signer = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256")
    cookie = grants.grant(signer, "/videos/12/", secure=False, expires_in=3600)
    folder = signer.sign_prefix("/videos/12/", expires_in=3600)
    for mode, address in site.items():
        granted = _fetch(address, "/videos/12/a.ts", f"{cookie.name}={cookie.value}")
        assert (granted.status, granted.body) == (200, "contents of videos/12/a.ts\n"), mode
        assert (granted.headers["Cache-Control"], granted.headers["Vary"]) == ("private", "Cookie"), mode
        # A playlist a cookie admits is sent as it is: the cookie covers its URIs.
        playlist = _fetch(address, "/videos/12/index.m3u8", f"{cookie.name}={cookie.value}")
        assert (playlist.status, playlist.body, playlist.headers["Vary"]) == (200, PLAYLIST, "Cookie"), mode
        by_link = _fetch(address, folder.link("a.ts"))
        assert by_link.status == 200
        assert "Vary" not in by_link.headers
        assert "Cache-Control" not in by_link.headers
