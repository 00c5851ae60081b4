"""The JavaScript verifier (blake2sign_web/edge/verifiers/js/linkcheck.js) under Node: the vectors, the differential
fuzz and hand-made corner cases decide as the reference does; the Node middleware guards a real HTTP server."""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web.edge import keyring as keyrings
from blake2sign_web.edge.reference import KeyringSigner, Request, decide
from blake2sign_web.edge.vectors import HOUR, KEYRINGS, NOW, SECRET
from blake2sign_web.links import grants
from blake2sign_web.links.signer import URLSigner
from blake2sign_web.links.text import canonical_path, encode
from tests.edge.conftest import VECTORS, compare, program

ROOT = Path(__file__).resolve().parents[2]
VERIFIERS = ROOT / "blake2sign_web" / "edge" / "verifiers"
RUNNER = Path(__file__).with_name("runners") / "node_runner.mjs"


def node() -> str:
    return program("node", "nodejs")


def run(command: list[str], cases: Path, *options: str) -> str:
    done = subprocess.run([*command, str(cases), *options], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


# ---- Corner cases the vectors and the fuzz reach rarely: decided by the reference, run by every JS runtime ----

#: Download names: the front server does not judge them (the origin does), so each goes to the origin.
FILENAMES = ["ok.txt", "\u200eevil.txt", "a\u2028b", "\u0378x", "\udcff.txt", " . ", "a/b", "x" * 256, ""]
#: Query names whose code-point order differs from UTF-16's and from their bytes'.
NAMES = ["\U0001f600", "\uffff", "\udc80", "\ue000", "z", "\u00e9", "\udcff", "\U00010000", "A"]
#: Host headers, for a keyring that binds the host: those the Host rule refuses, and brackets urlsplit refuses.
HOSTS = ["[::1]:8443", "[::1]", "[::1", "::1]", "[v1.x]", "[v1.]", "[1.2.3.4]", "[fe80::1%eth0]", "[fe80::1%]",
         "[::ffff:1.2.3.4]", "[::ffff:1.2.3.04]", "[1::2::3]", "[:1::2]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7::]",
         "[::1:2:3:4:5:6:7]", "[1:2:3:4:5:6:7:8:9]", "[::]", "[12345::]", "[g::]", "user@media.example.com",
         "a:b@MEDIA.example.com:443", "m\u00e9dia.example.com", "M\u00c9DIA.example.com", "a/b", "a?b", "a#b",
         "h\tost", "", "media.example.com:80", "[::1]:443", "[zz]", "[1.2.3]", "[::1]x", "host:123456",
         "host:", "a_b.example"]  # fmt: skip


def _crafted(signer: URLSigner, path: str, pairs: list[tuple[str, str]]) -> str:
    """A link with a valid MAC over any pairs, even ones ``sign`` refuses to write (as the vectors' legacy links)."""
    pairs = [*pairs, (signer.key_id_param, signer.key_id)]
    tag = signer._seal(signer._canonical("", canonical_path(path), pairs, None))[-43:]
    query = "&".join(f"{encode(k)}={encode(v)}" for k, v in pairs)
    return f"{path}?{query}&{signer.signature_param}={tag}"


def corner_cases() -> dict[str, Any]:
    rings = {
        name: keyrings.make(SECRET, **{k: v for k, v in KEYRINGS[name].items() if k != "fallbacks"})
        for name in ("plain", "host", "names")
    }
    signers = {name: KeyringSigner(ring, clock=lambda: NOW) for name, ring in rings.items()}
    plain, host, names = signers["plain"], signers["host"], signers["names"]
    expires = str(NOW + HOUR)
    cases: list[tuple[str, str, Request]] = []
    for name in FILENAMES:
        pairs = [("expires", expires), ("disposition", "attachment"), ("filename", name)]
        cases.append((f"filename {name[:20]!r}", "plain", Request("GET", _crafted(plain, "/files/f", pairs))))
    shuffled = [(n, str(i)) for i, n in enumerate(NAMES)]
    cases.append(
        ("names sorted", "plain", Request("GET", _crafted(plain, "/files/n", [("expires", expires), *shuffled])))
    )
    link = _crafted(names, "/media/a", [("exp", expires)])
    for extra in [
        "v%F0%9F%98%80=1",
        "v%FF=1",
        "v%C3=1",
        "v%C3%A9=1",
        "vv1=1",
        "v=1",
        "utm_%F0%9F%98%80x=1",
        "fbclid=2",
    ]:
        cases.append((f"ignored {extra}", "names", Request("GET", f"{link}&{extra}")))
    for text in ["%F0%9F%98%80" * 9000, "a" * 8100]:
        cases.append((f"long {len(text)}", "plain", Request("GET", f"/files/{text}?expires={expires}&signature=x")))
    for name in HOSTS:
        try:
            signed = host.sign(f"https://{name}/files/x.txt", expires_in=HOUR)
        except ValueError:
            signed = host.sign("https://media.example.com/files/x.txt", expires_in=HOUR)
        target = "/" + signed.split("/", 3)[3]
        for scheme in ("https", "http"):
            cases.append((f"host {name!r} {scheme}", "host", Request("GET", target, name, scheme)))
    cases.append(("method PUT", "plain", Request("PUT", "/files/x")))
    cases.append(("nfkc host \u2100", "host", Request("GET", target, "a\u2100b.example")))
    cases.append(("scheme ftp", "host", Request("GET", target, "media.example.com", "ftp")))
    vectors = []
    for name, ring, request in cases:
        verdict = decide(signers[ring], request)
        expect = {"decision": verdict.decision, "prefix": verdict.prefix, "below": verdict.below,
                  "granted": verdict.granted}  # fmt: skip
        vectors.append({"name": name, "keyring": ring, "now": NOW, "request": request._asdict(), "expect": expect,
                        "why": verdict.why})  # fmt: skip
    return {"about": "corner cases", "keyrings": {n: r.to_json() for n, r in rings.items()}, "vectors": vectors}


@pytest.fixture(scope="session")
def corner_cases_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edge-corners") / "corners.json"
    path.write_text(json.dumps(corner_cases()))
    return path


def test_the_corner_cases_reach_every_answer() -> None:
    decisions = {v["expect"]["decision"] for v in corner_cases()["vectors"]}
    assert decisions == {"allow", "refuse", "origin"}


def compare_playlists(output: str) -> int:
    """Assert a runner's ``--playlists`` lines are the vectors' playlist queries and rewritten playlists."""
    cases = json.loads(VECTORS.read_text())
    expected = [{"query": c["expect"]} for c in cases["playlist_queries"]]
    expected += [{"text": c["expect"]} for c in cases["playlists"]]
    got = [json.loads(line) for line in output.splitlines() if line.strip()]
    assert len(got) == len(expected), f"{len(got)} answers for {len(expected)} cases"
    names = [c["target"] for c in cases["playlist_queries"]] + [c["name"] for c in cases["playlists"]]
    wrong = [(name, g, e) for name, g, e in zip(names, got, expected, strict=True) if g != e]
    assert not wrong, f"{len(wrong)} disagree with the reference; the first: {wrong[0]}"
    return len(expected)


# ---- Node ----


def test_node_decides_the_vectors_as_the_reference() -> None:
    assert compare(json.loads(VECTORS.read_text()), run([node(), str(RUNNER)], VECTORS)) >= 217


def test_node_rewrites_the_playlists_as_the_reference() -> None:
    assert compare_playlists(run([node(), str(RUNNER)], VECTORS, "--playlists")) >= 21


#: Cache-Control and Vary of responses to granted requests, before links/grants.py ``private`` makes them private.
PRIVATE_CASES = [(None, None), ("public, max-age=60", None), ("no-store", "Accept-Encoding"), ("s-maxage=5, Public",
                 "*"), ("private", "cookie"), (" , max-age=0,", "Origin, Accept")]  # fmt: skip


def test_private_headers_are_the_references(tmp_path: Path) -> None:
    script = tmp_path / "private.mjs"
    core = (VERIFIERS / "js" / "linkcheck.js").as_uri()
    script.write_text(
        f"import core from {json.dumps(core)};\n"
        f"for (const [c, v] of {json.dumps(PRIVATE_CASES)}) console.log(JSON.stringify(core.privateHeaders(c, v)));\n"
    )
    done = subprocess.run([node(), str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert got == [dict(zip(("Cache-Control", "Vary"), grants.private(c, v), strict=True)) for c, v in PRIVATE_CASES]


def test_node_decides_the_fuzz_cases_as_the_reference(fuzz_cases: Path) -> None:
    assert compare(fuzz_cases, run([node(), str(RUNNER)], fuzz_cases)) >= 500


def test_node_decides_the_corner_cases_as_the_reference(corner_cases_file: Path) -> None:
    compare(corner_cases_file, run([node(), str(RUNNER)], corner_cases_file))


def test_an_async_mac_decides_alike(corner_cases_file: Path) -> None:
    """WebCrypto's HMAC (a Promise, as in Cloudflare Workers) through the same ``decide``."""
    assert compare(json.loads(VECTORS.read_text()), run([node(), str(RUNNER)], VECTORS, "--webcrypto")) >= 217
    compare(corner_cases_file, run([node(), str(RUNNER)], corner_cases_file, "--webcrypto"))


SERVER = """
import http from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createLinkcheck } from %(module)s;

const [root, keyring, unverifiable] = process.argv.slice(2);
const check = createLinkcheck({ keyring, unverifiable });

// A file server as serve-static answers: public caching, validators, ranges, the body in two writes.
function serveStatic(req, res) {
    const file = join(root, decodeURIComponent(req.url.split('?')[0]));
    let stat;
    try { stat = statSync(file); } catch (e) { stat = null; }
    if (!stat || !stat.isFile()) { res.statusCode = 404; res.end(); return; }
    let body = readFileSync(file), status = 200;
    res.setHeader('Cache-Control', 'public, max-age=60');
    res.setHeader('ETag', '"' + stat.size + '-' + stat.mtimeMs + '"');
    res.setHeader('Last-Modified', stat.mtime.toUTCString());
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', file.endsWith('.m3u8') ? 'application/x-mpegurl' : 'text/plain');
    const range = /^bytes=([0-9]+)-([0-9]+)$/.exec(req.headers.range || '');
    if (range) {
        status = 206;
        res.setHeader('Content-Range', 'bytes ' + range[1] + '-' + range[2] + '/' + body.length);
        body = body.subarray(Number(range[1]), Number(range[2]) + 1);
    }
    res.writeHead(status, { 'Content-Length': body.length });
    if (req.method === 'HEAD') { res.end(); return; }
    res.write(body.subarray(0, body.length >> 1));
    res.end(body.subarray(body.length >> 1));
}

const server = http.createServer((req, res) => {
    check.middleware(req, res, () => {
        if (req.linkcheck.decision !== 'allow') {  // the application's own handler
            res.setHeader('X-Handler', 'origin');
            res.end('origin ' + req.url);
            return;
        }
        res.setHeader('X-Below', String(req.linkcheck.below));
        serveStatic(req, res);
    });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
"""


def get(url: str, headers: dict[str, str] | None = None, method: str = "GET") -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def signed_links(secret: str, now: float) -> dict[str, Any]:
    """The links and cookie the end-to-end tests request, signed for ``/files/``, and what each should get."""
    signer = URLSigner(secret, purpose="downloads", hasher="hmac-sha256")
    folder = signer.sign_prefix("/files/folder/", expires_in=HOUR)
    cookie = grants.grant(signer, "/files/folder/", secure=False, expires_in=HOUR)
    good = signer.sign("/files/report.txt", expires_in=HOUR)
    return {
        "file": good,
        "folder": folder.link("a.txt"),
        "grant": ("/files/folder/b.txt", f"{cookie.name}={cookie.value}"),
        "tampered": good.replace("report", "rEport"),
        "expired": signer.sign("/files/report.txt", expires_at=int(now) - 10),
        "not yet valid": signer.sign("/files/report.txt", expires_at=int(now) + 2 * HOUR, starts=int(now) + HOUR),
        "other folder": f"/files/other/a.txt?{folder.query}",
        "unsigned": "/files/report.txt",
        "single use": signer.sign("/files/report.txt", expires_in=HOUR, single_use=True),
        "grouped": signer.sign("/files/report.txt", expires_in=HOUR, group="course-42"),
        "playlist": folder.link("video/master.m3u8"),
        "tampered playlist": folder.link("video/master.m3u8").replace("expires=", "expires=1"),
    }


def write_site(tmp: Path, secret: str) -> tuple[Path, Path]:
    root = tmp / "root"
    (root / "files" / "folder").mkdir(parents=True)
    (root / "files" / "other").mkdir()
    (root / "files" / "report.txt").write_text("report\n")
    (root / "files" / "folder" / "a.txt").write_text("folder a\n")
    (root / "files" / "folder" / "b.txt").write_text("folder b\n")
    (root / "files" / "other" / "a.txt").write_text("other a\n")
    video = root / "files" / "folder" / "video"
    (video / "v0").mkdir(parents=True)
    (video / "master.m3u8").write_text(MASTER)
    (video / "v0" / "index.m3u8").write_text(MEDIA)
    for name in ("seg0.ts", "seg1.ts", "init.mp4"):
        (video / "v0" / name).write_text(f"segment {name}\n")
    (video / "big.m3u8").write_text("#EXTM3U\n" + "#EXTINF:1,\nseg.ts\n" * 70_000)  # over 1 MiB
    keyring = tmp / "keyring.json"
    keyring.write_text(keyrings.make(secret, purpose="downloads").dumps())
    return root, keyring


SECRET_E2E = "an end-to-end test secret, never used elsewhere"
#: The playlists of write_site: a master one naming a media one, which names its segments and an init section.
MASTER = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nv0/index.m3u8\nhttps://cdn.example/other.m3u8\n"
MEDIA = '#EXTM3U\r\n#EXT-X-MAP:URI="init.mp4"\r\n#EXTINF:1,\r\nseg0.ts\r\n#EXTINF:1,\r\nseg1.ts\r\n#EXT-X-ENDLIST\r\n'


def playlist_uris(text: str) -> list[str]:
    """The URIs a player fetches from a playlist: its URI lines and URI attributes."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")] + re.findall(r'URI="([^"]*)"', text)


def check_playlists(base: str, links: dict[str, Any], cookie: str) -> None:
    """A folder link's playlists come back rewritten, every URI inside the folder carrying the link's query (and
    fetching those gets the files); a grant cookie's come as they are, private."""
    query = links["playlist"].split("?", 1)[1]
    status, body, headers = get(base + links["playlist"], {"Range": "bytes=0-9"})  # the whole playlist: 200
    assert status == 200, body
    assert body.decode() == MASTER.replace("v0/index.m3u8", f"v0/index.m3u8?{query}")
    assert headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert headers["Cache-Control"] == "private, no-store"
    assert int(headers["Content-Length"]) == len(body)
    assert not {"ETag", "Last-Modified", "Accept-Ranges", "Content-Range"} & set(headers)
    media_link = f"{base}/files/folder/video/v0/index.m3u8?{query}"
    status, media, _ = get(media_link)
    assert status == 200
    assert media.decode() == MEDIA.replace(".ts\r", f".ts?{query}\r").replace("init.mp4", f"init.mp4?{query}")
    uris = playlist_uris(media.decode())
    assert [uri.endswith(f"?{query}") for uri in uris] == [True] * 3
    for uri in uris:
        status, data, _ = get(f"{base}/files/folder/video/v0/{uri}")
        assert (status, data) == (200, f"segment {uri.split('?')[0]}\n".encode()), uri
    assert get(base + links["playlist"].replace("master.m3u8", "big.m3u8"))[0] == 500
    status, body, headers = get(f"{base}/files/folder/video/master.m3u8", {"Cookie": cookie})
    assert (status, body.decode()) == (200, MASTER)  # a cookie covers the URIs by itself
    assert (headers["Cache-Control"], headers["Vary"]) == ("max-age=60, private", "Cookie")


@pytest.mark.parametrize("unverifiable", ["origin", "refuse"])
def test_node_middleware_guards_a_real_server(tmp_path: Path, unverifiable: str) -> None:
    binary = node()
    root, keyring = write_site(tmp_path, SECRET_E2E)
    script = tmp_path / "server.mjs"
    module = (VERIFIERS / "node" / "linkcheck-node.mjs").as_uri()
    script.write_text(SERVER % {"module": json.dumps(module)})
    server = subprocess.Popen([binary, str(script), str(root), str(keyring), unverifiable], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        links = signed_links(SECRET_E2E, time.time())
        assert get(base + links["file"])[:2] == (200, b"report\n")
        status, body, headers = get(base + links["folder"])
        assert (status, body, headers["X-Below"]) == (200, b"folder a\n", "a.txt")
        assert (headers["Cache-Control"], headers.get("Vary")) == ("public, max-age=60", None)
        path, cookie = links["grant"]
        status, body, headers = get(base + path, {"Cookie": f"session=1; {cookie}"})
        assert (status, body) == (200, b"folder b\n")
        assert (headers["Cache-Control"], headers["Vary"]) == ("max-age=60, private", "Cookie")
        assert get(base + links["file"], method="HEAD")[0] == 200
        check_playlists(base, links, cookie)
        for name in ("expired", "not yet valid", "other folder", "unsigned"):
            assert get(base + links[name])[0] == 403, name
        assert get(base + "/files/other/a.txt", {"Cookie": cookie})[0] == 403  # the cookie's folder only
        for name in ("tampered", "single use", "grouped"):  # a MAC of no key here, a nonce to consume, a group
            status, body, headers = get(base + links[name])
            if unverifiable == "origin":
                assert (status, body) == (200, f"origin {links[name]}".encode()), name
            else:
                assert status == 403, name
        status, body, _ = get(base + links["file"], method="POST")
        assert status == (200 if unverifiable == "origin" else 403)
    finally:
        server.terminate()
        server.wait(timeout=10)
