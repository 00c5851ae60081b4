"""Links checked at the edge: the server CPU of an HLS workload through nginx + njs against nginx alone and against
our Python view, and the time one verification takes inside each JavaScript runtime.

**Servers.** The HLS workload of ``hls.py`` (a media playlist and ``hls.SEGMENTS`` segments of 64 KiB, random
bytes in a temporary directory) is fetched by a client in this process, the playlist then every segment by URL as a
player does, each answer checked (200 and the whole file; a refusal stops the run). Four configurations serve it:

- **(a) nginx, unsigned**: a plain ``location`` with ``root``;
- **(b) nginx + njs, folder link**: the shipped snippet (``blake2sign_web/edge/verifiers/nginx/nginx.conf``:
  ``js_set $linkcheck_verdict linkcheck.verdict`` read by the location's ``set``, then ``if``, the keyring a
  ``js_preload_object``) with the keyring of the signer; the client appends the folder link's query to each segment
  URI (or follows the playlist as served, when nginx rewrites it);
- **(c) nginx + njs, grant cookie**: the same location, the folder's grant cookie on every request, plain URIs;
- **(d) Django's SignedFileView under gunicorn, one sync worker, folder link** (``hls.py``'s app, signing with
  HMAC-SHA-256: ``BLAKE2SIGN_WEB["SIGNED_URLS"]["HASHER"]``), which rewrites the playlist.
- **(x) a diagnostic**: the same ``js_set`` + ``if`` pattern with a njs check that allows everything
  (``edge_js/noop_njs.js``), in the nginx of (b): the part of (b)'s cost that is njs's per-request VM (in which
  njs 0.7.9 runs the loaded modules' top level again), not the check; (y) the same in an nginx without the snippet.

Links are signed by ``URLSigner(SECRET, purpose=..., hasher="hmac-sha256")``; the keyring is
``blake2sign_web.edge.keyring.make(SECRET, purpose=...)``. nginx runs as one process (``master_process off``,
``daemon off``, access log off, ``sendfile`` as ``SENDFILE``), gunicorn as one worker; each one's CPU time is
the nanoseconds its threads ran (``/proc/PID/task/*/schedstat``), read before and after ``passes`` workloads. The
configurations alternate round after round (the order rotating), so all see the same machine. Reported: the median
CPU per workload and per request (min-max of the rounds) and the ratios (b)/(a) (target: at most 1.10), (c)/(a),
(d)/(b).

**Verification.** The shipped core (``blake2sign_web/edge/verifiers/js/linkcheck.js``) decides ``VERIFICATIONS``
folder-link requests (one per segment, cycling) in a loop inside each runtime (scripts in ``edge_js/``): Node with
``node:crypto``'s ``createHmac`` and with WebCrypto; njs (the CLI, the engine of nginx's module) with ``createHmac``,
alone and as the nginx handler runs it per request (prepare the keyring object, then decide); workerd (the Workers
runtime, from ``tests/edge/workerd``'s ``npm ci``) with WebCrypto and ``node:crypto`` in a Worker's fetch handler,
timed from outside (a Worker's clock stands still while it computes). Beside them, the cost per request inside nginx
from the servers' part: ((b) - (a)) / requests.

    python -m example_project.bench.edge_servers              # 9 rounds of 10 passes; prints the tables
    python -m example_project.bench.edge_servers --quick      # a smoke test
    python -m example_project.bench.edge_servers --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from example_project.bench.http_load import free_port, stop
from example_project.bench.timing import progress

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
JS = HERE / "edge_js"
VERIFIERS = ROOT / "blake2sign_web" / "edge" / "verifiers"
CORE = VERIFIERS / "js" / "linkcheck.js"
SNIPPET = VERIFIERS / "nginx" / "nginx.conf"
MODULE = Path("/usr/lib/nginx/modules/ngx_http_js_module.so")
WORKERD = ROOT / "tests" / "edge" / "workerd" / "node_modules" / "@cloudflare" / "workerd-linux-64" / "bin" / "workerd"
#: Another workerd binary to use when tests/edge/workerd has none (the path of an executable).
WORKERD_ENV = "BLAKE2SIGN_WORKERD"

SECRET = "benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"  # downloads.SECRET: gunicorn's app signs so
PURPOSE = "blake2sign_web.signed_urls"  # Django's default SIGNED_URLS purpose
HASHER = "hmac-sha256"
FOLDER = "/signed/videos/1/"
PLAIN = "/plain/videos/1/index.m3u8"
#: nginx's sendfile, for every configuration (the snippet's playlist location turns it off for itself: with it on,
#: njs 0.7.9's js_body_filter sends an empty body under the file's Content-Length). Off, as in the first runs.
SENDFILE = "off"
#: The most (b) may cost over (a), in server CPU per workload.
TARGET = 1.10
CONFIGS = {
    "a": "nginx, unsigned (root)",
    "b": "nginx + njs, folder link",
    "c": "nginx + njs, grant cookie",
    "d": "Django SignedFileView, gunicorn 1 sync worker, folder link",
    "x": "diagnostic: nginx + njs check allowing all (js_set + if, as the snippet; linkcheck.js loaded beside it)",
    "y": "diagnostic: as (x), in an nginx without the snippet (linkcheck.js not loaded)",
    "z": "diagnostic: that nginx, unsigned (root): (a) again",
}
RATIOS = (("b", "a"), ("c", "a"), ("d", "b"))
ROUNDS, PASSES = 9, 10
QUICK_ROUNDS, QUICK_PASSES = 1, 1
VERIFICATIONS_REPEATS, MIN_MS = 7, 300
QUICK_REPEATS, QUICK_MIN_MS = 2, 30
WORKERD_N, QUICK_WORKERD_N = 20_000, 500
NJS_COUNT, QUICK_NJS_COUNT = 400, 50
#: The verification rows, in the table's order: key -> (runtime, how).
RUNTIMES = {
    "node hmac": ("Node", "node:crypto createHmac"),
    "node webcrypto": ("Node", "WebCrypto (crypto.subtle)"),
    "workerd webcrypto": ("workerd", "WebCrypto (crypto.subtle), in a fetch handler"),
    "workerd hmac": ("workerd", "node:crypto createHmac (nodejs_compat), in a fetch handler"),
    "njs decide": ("njs (CLI)", "crypto.createHmac, keyring prepared once"),
    "njs handler": ("njs (CLI)", "as linkcheck_njs.js per request: prepare the keyring object, decide"),
}


# --- Django's app (gunicorn imports this module: keep the imports above light) -------------------------------


def wsgi_app() -> Any:
    """gunicorn 'example_project.bench.edge_servers:wsgi_app()': hls.py's app, its links signed with HMAC-SHA-256."""
    from example_project.bench import hls

    application = hls.wsgi_app()
    from django.conf import settings

    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"HASHER": HASHER}}  # read when the first link is checked
    return application


# --- the site ------------------------------------------------------------------------------------------------


def signer() -> Any:
    from blake2sign_web import URLSigner

    return URLSigner(SECRET, purpose=PURPOSE, hasher=HASHER)


def links(now: float) -> dict[str, Any]:
    """The folder link to the playlist, its query, the grant cookie ("name=value") of the folder, a tampered link."""
    from blake2sign_web.links import grants

    sign = signer()
    link = sign.sign_prefix(FOLDER, expires_in=24 * 3600).link("index.m3u8")
    cookie = grants.grant(sign, FOLDER, secure=False, expires_in=24 * 3600)
    query = urllib.parse.urlsplit(link).query
    signature = re.search(r"signature=([A-Za-z0-9_-]{43})", link)
    assert signature is not None
    good = signature.group(1)
    bad = ("B" if good[0] == "A" else "A") + good[1:]
    tampered = FOLDER + "seg000.ts?" + query.replace(good, bad)
    return {"link": link, "query": query, "cookie": f"{cookie.name}={cookie.value}", "tampered": tampered}


def nginx_conf(tmp: Path, www: Path, keyring: Path, port: int) -> str:
    """A whole nginx.conf around the shipped snippet: its http lines, and a server with ``/plain/`` (root, no check)
    and the snippet's location on ``/signed/`` (unverifiable links refused: no origin behind it)."""
    snippet = SNIPPET.read_text()
    replacements = {
        "/etc/nginx/blake2sign/nginx": str(VERIFIERS / "nginx"),
        "/etc/nginx/blake2sign/keyring.json": str(keyring),
        "127.0.0.1:8000": f"127.0.0.1:{free_port()}",  # nothing listens: every link here is checkable
        "location /files/": "location /signed/",
        "root /srv;": f"root {www};",
        "set $linkcheck_unverifiable refuse;": "set $linkcheck_unverifiable refuse;",  # (the default: kept)
    }
    for old, new in replacements.items():
        if old not in snippet:
            raise RuntimeError(f"{SNIPPET.relative_to(ROOT)} changed: no {old!r} to replace")
        snippet = snippet.replace(old, new)
    http_part, separator, server_part = snippet.partition("# --- server {} ---")
    if not separator:
        raise RuntimeError(f"{SNIPPET.relative_to(ROOT)} changed: no '# --- server {{}} ---' line")
    return (
        f"load_module {MODULE};\ndaemon off;\nmaster_process off;\npid {tmp}/nginx.pid;\n"
        f"error_log {tmp}/error.log warn;\nevents {{ worker_connections 256; }}\n"
        f"http {{\naccess_log off;\nsendfile {SENDFILE};\ntcp_nopush on;\nkeepalive_requests 100000;\n"
        f"types {{ application/vnd.apple.mpegurl m3u8; video/mp2t ts; }}\ndefault_type application/octet-stream;\n"
        f"{_temp_paths(tmp)}{http_part}\n{_noop_import()}"
        f"server {{\nlisten 127.0.0.1:{port};\nlocation /plain/ {{ root {www}; }}\n"
        f"{server_part}{_noop_location(www)}\n}}\n}}\n"
    )


def bare_conf(tmp: Path, www: Path, port: int) -> str:
    """The diagnostic nginx: the no-op njs handler alone, nothing else imported."""
    full = nginx_conf(tmp, www, tmp / "unused-keyring.json", port)
    http_start = full.index("http {\n")
    common = full[: full.index("client_body_temp_path", http_start)]
    return (
        f"{common}{_temp_paths(tmp)}{_noop_import()}"
        f"server {{\nlisten 127.0.0.1:{port};\nlocation /plain/ {{ root {www}; }}\n{_noop_location(www)}}}\n}}\n"
    )


def _temp_paths(tmp: Path) -> str:
    """nginx's temporary folders, inside ``tmp`` (its defaults are root's)."""
    return "".join(
        f"{kind}_temp_path {tmp}/temp/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )


def _noop_import() -> str:
    """The diagnostic check that allows everything (``edge_js/noop_njs.js``), run as the snippet runs its own."""
    return f"js_import noop from {JS / 'noop_njs.js'};\njs_set $noop_verdict noop.verdict;\n"


def _noop_location(www: Path) -> str:
    return f"location /noop/ {{ set $noop $noop_verdict; if ($noop != allow) {{ return 403; }} root {www}; }}\n"


@contextmanager
def nginx(tmp: Path, stream: Path, keyring: Path, *, bare: bool = False) -> Iterator[tuple[int, int]]:
    """nginx (one process) serving ``stream`` at /plain/, /signed/ (the snippet) and /noop/ (``noop_njs.js``); or,
    ``bare``, at /plain/ and /noop/ only, without the snippet (linkcheck.js not loaded); yield (port, pid)."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        raise RuntimeError("no nginx (Debian's nginx package)")
    if not MODULE.exists():
        raise RuntimeError(f"no {MODULE} (Debian's libnginx-mod-http-js package)")
    www = tmp / "www"
    www.mkdir(parents=True)
    for name in ("plain", "signed", "noop"):
        (www / name).symlink_to(stream)
    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / "temp" / kind).mkdir(parents=True)
    log = tmp / "error.log"
    for _ in range(5):  # a free port may be taken before nginx binds it
        port = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(bare_conf(tmp, www, port) if bare else nginx_conf(tmp, www, keyring, port))
        command = [binary, "-p", f"{tmp}/", "-c", str(conf), "-e", str(log)]
        checked = subprocess.run([*command, "-t", "-q"], capture_output=True, text=True)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx -t: {checked.stderr.strip()}")
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if _wait_for(port, process):
                yield port, process.pid
                return
        finally:
            stop(process, 30)
    raise RuntimeError(f"nginx did not start: {log.read_text()[-1000:] if log.exists() else ''}")


def _wait_for(port: int, process: subprocess.Popen[Any], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


# --- the client ----------------------------------------------------------------------------------------------


class Refused(RuntimeError):
    """A request of the workload answered otherwise than 200 with the whole file."""


def play(port: int, url: str, *, cookie: str | None = None, query: str | None = None) -> dict[str, Any]:
    """Fetch the playlist at ``url`` then every URI in it, as a player does: with ``cookie`` on every request, or
    with ``query`` appended to each URI that has none (a front server that does not rewrite playlists). Every answer
    must be 200 with the whole file (else ``Refused``). {"requests", "ok", "rewritten": URIs that came signed}."""
    from example_project.bench import hls

    headers = {"Cookie": cookie} if cookie else {}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        playlist = _get(connection, url, headers).decode()
        uris = [line.strip() for line in playlist.splitlines() if line.strip() and not line.startswith("#")]
        if len(uris) != hls.SEGMENTS:
            raise Refused(f"the playlist lists {len(uris)} segments, not {hls.SEGMENTS}")
        rewritten = 0
        for uri in uris:
            target = urllib.parse.urljoin(url, uri)
            if urllib.parse.urlsplit(target).query:
                rewritten += 1
            elif query:
                target += "?" + query
            if len(_get(connection, target, headers)) != hls.SEGMENT_SIZE:
                raise Refused(f"{target[:60]!r}: not the whole segment")
    finally:
        connection.close()
    return {"requests": 1 + len(uris), "ok": 1 + len(uris), "rewritten": rewritten}


def _get(connection: http.client.HTTPConnection, target: str, headers: dict[str, str]) -> bytes:
    try:
        connection.request("GET", target, headers=headers)
        response = connection.getresponse()
        body = response.read()
    except (http.client.HTTPException, OSError) as error:  # a short body, a closed connection
        raise Refused(f"{target[:70]!r}: {type(error).__name__}: {error}") from None
    if response.status != 200:
        raise Refused(f"{target[:70]!r}: {response.status}")
    return body


def status(port: int, target: str, headers: dict[str, str] | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", target, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


# --- part 1: the servers -------------------------------------------------------------------------------------


def measure_servers(rounds: int, passes: int, tick: Callable[[], object]) -> dict[str, Any]:
    from blake2sign_web.edge import keyring as keyrings
    from example_project.bench import downloads, hls

    signed = links(time.time())
    with tempfile.TemporaryDirectory(prefix="blake2sign-edge-servers-") as directory:
        tmp = Path(directory)
        stream = tmp / "stream"
        stream.mkdir()
        hls.make_stream(stream)
        keyring = tmp / "keyring.json"
        keyring.write_text(keyrings.make(SECRET, purpose=PURPOSE).dumps())
        keyring.chmod(0o600)
        progress(f"servers: nginx (1 process) and gunicorn (1 sync worker), {rounds} rounds of {passes} passes")
        with (
            nginx(tmp / "nginx", stream, keyring) as (nginx_port, nginx_pid),
            nginx(tmp / "bare", stream, keyring, bare=True) as (bare_port, bare_pid),
            downloads.server("Django", stream, app="example_project.bench.edge_servers") as (django_port, django_pid),
        ):
            workloads: dict[str, Callable[[], dict[str, Any]]] = {
                "a": lambda: play(nginx_port, PLAIN),
                "b": lambda: play(nginx_port, signed["link"], query=signed["query"]),
                "c": lambda: play(nginx_port, FOLDER + "index.m3u8", cookie=signed["cookie"]),
                "d": lambda: play(django_port, signed["link"]),
                "x": lambda: play(nginx_port, PLAIN.replace("/plain/", "/noop/")),
                "y": lambda: play(bare_port, PLAIN.replace("/plain/", "/noop/")),
                "z": lambda: play(bare_port, PLAIN),
            }
            pids = {"a": nginx_pid, "b": nginx_pid, "c": nginx_pid, "d": django_pid, "x": nginx_pid, "y": bare_pid,
                    "z": bare_pid}  # fmt: skip
            served = {key: {"requests": 0, "ok": 0, "rewritten": 0} for key in CONFIGS}
            first = {}
            for key, work in workloads.items():  # warm up (imports, caches) and check
                try:
                    first[key] = work()
                except Refused as error:
                    raise Refused(f"({key}) {CONFIGS[key]}: {error}") from None
            checks = {
                "tampered link, nginx + njs": status(nginx_port, signed["tampered"]),
                "no link, nginx + njs": status(nginx_port, FOLDER + "seg000.ts"),
                "tampered link, Django": status(django_port, signed["tampered"]),
            }
            cpu: dict[str, list[float]] = {key: [] for key in CONFIGS}
            keys = list(CONFIGS)
            for number in range(rounds):
                for key in keys[number % len(keys) :] + keys[: number % len(keys)]:
                    before = hls.cpu_seconds(pids[key])
                    for _ in range(passes):
                        found = workloads[key]()
                        for field in served[key]:
                            served[key][field] += found[field]
                    cpu[key].append((hls.cpu_seconds(pids[key]) - before) / passes)
                tick()
                spent = ", ".join(f"({key}) {cpu[key][-1] * 1e3:.2f} ms" for key in CONFIGS)
                progress(f"  round {number + 1}/{rounds}: {spent} of server CPU per workload")
    requests = 1 + hls.SEGMENTS
    configs = {}
    for key, label in CONFIGS.items():
        values = cpu[key]
        configs[key] = {
            "label": label,
            "cpu_s": values,
            "median_s": statistics.median(values),
            "min_s": min(values),
            "max_s": max(values),
            "per_request_median_s": statistics.median(values) / requests,
            "per_request_min_s": min(values) / requests,
            "per_request_max_s": max(values) / requests,
            "served": served[key],
            "playlist_rewritten": first[key]["rewritten"] == hls.SEGMENTS,
        }
    ratios = {}
    for top, bottom in RATIOS:
        per_round = [t / b for t, b in zip(cpu[top], cpu[bottom], strict=True) if b > 0] or [float("nan")]
        ratios[f"{top}/{bottom}"] = {
            "median": statistics.median(per_round),
            "min": min(per_round),
            "max": max(per_round),
            "rounds": per_round,
        }
    extra = [(b - a) / requests for b, a in zip(cpu["b"], cpu["a"], strict=True)]
    cookie_extra = [(c - a) / requests for c, a in zip(cpu["c"], cpu["a"], strict=True)]
    machinery = [(x - a) / requests for x, a in zip(cpu["x"], cpu["a"], strict=True)]
    bare = [(y - z) / requests for y, z in zip(cpu["y"], cpu["z"], strict=True)]
    return {
        "configs": configs,
        "ratios": ratios,
        "target": TARGET,
        "requests_per_workload": requests,
        "checks": checks,
        "njs_in_nginx_s": {"median": statistics.median(extra), "min": min(extra), "max": max(extra)},
        "njs_bare_noop_in_nginx_s": {"median": statistics.median(bare), "min": min(bare), "max": max(bare)},
        "njs_noop_in_nginx_s": {"median": statistics.median(machinery), "min": min(machinery), "max": max(machinery)},
        "njs_cookie_in_nginx_s": {
            "median": statistics.median(cookie_extra),
            "min": min(cookie_extra),
            "max": max(cookie_extra),
        },
    }


# --- part 2: one verification inside each runtime ------------------------------------------------------------


def cases(requests: int, keyring_path: Path) -> dict[str, Any]:
    """The micro-benchmark's input: the keyring, and one folder-link request per segment (``requests`` of them)."""
    from blake2sign_web.edge import keyring as keyrings

    now = time.time()
    query = links(now)["query"]
    targets = [f"{FOLDER}seg{number % 1000:03d}.ts?{query}" for number in range(requests)]
    return {
        "keyring": keyrings.make(SECRET, purpose=PURPOSE).to_json(),
        "keyring_path": str(keyring_path),
        "now": int(now),
        "requests": [
            {"method": "GET", "target": t, "host": "127.0.0.1", "scheme": "http", "cookie": None} for t in targets
        ],
    }


def _script(command: list[str], timeout: float = 600) -> dict[str, Any]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[1]).name}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _njs(command: list[str], data: Path, count: int, repeats: int) -> dict[str, Any]:
    """njs has no CPU clock: the process's CPU time (``wait4``) running ``count`` verifications, less its CPU time
    running none, per verification; ``repeats`` pairs of fresh processes (njs frees nothing while it runs)."""
    us: list[float] = []
    wall: list[float] = []
    found: dict[str, Any] = {}
    for _ in range(repeats):
        zero, _ = _cpu_run([*command, "0", str(data)])
        spent, found = _cpu_run([*command, str(count), str(data)])
        us.append((spent - zero) / count * 1e6)
        wall += found["wall_us"]
    return {**found, "us": us, "wall_us": wall, "verifications": count * repeats}


def _cpu_run(command: list[str]) -> tuple[float, dict[str, Any]]:
    """Run ``command``: its CPU seconds (user + system, from the children's rusage) and its JSON line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[1]).name}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    spent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return spent, found


def _summary(found: dict[str, Any]) -> dict[str, Any]:
    us = found["us"]
    return {**found, "median_us": statistics.median(us), "min_us": min(us), "max_us": max(us)}


def workerd_binary() -> Path | None:
    override = os.environ.get(WORKERD_ENV)
    for candidate in ([Path(override)] if override else []) + [WORKERD]:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def measure_workerd(binary: Path, data: Path, n: int, repeats: int) -> dict[str, dict[str, Any]]:
    """Both modes in one workerd: per verification, (time of n - time of 0 verifications) / n, ``repeats`` times."""
    work = data.parent / "workerd"
    work.mkdir()
    for source in (JS / "bench_worker.mjs", CORE, JS / "config.capnp.template"):
        shutil.copy(source, work / source.name.replace(".template", ""))
    shutil.copy(data, work / "cases.json")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True).stdout.strip()
    results: dict[str, dict[str, Any]] = {}
    for _ in range(5):
        port = free_port()
        command = [str(binary), "serve", str(work / "config.capnp"), "--socket-addr", f"http=127.0.0.1:{port}"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            if not _wait_for(port, process, 30):
                continue
            for mode in ("webcrypto", "hmac"):
                _worker_get(port, process.pid, mode, n)  # warm up: the keys, the JIT
                us, wall = [], []
                for _ in range(repeats):
                    zero = _worker_get(port, process.pid, mode, 0)
                    full = _worker_get(port, process.pid, mode, n)
                    us.append((full[0] - zero[0]) / n * 1e6)
                    wall.append((full[1] - zero[1]) / n * 1e6)
                results[f"workerd {mode}"] = _summary(
                    {
                        "mode": mode,
                        "runtime": version,
                        "us": us,
                        "wall_us": wall,
                        "verifications": n * repeats,
                        "allowed": n,
                    }
                )
            return results
        finally:
            stop(process, 30)
    raise RuntimeError("workerd did not start")


def _worker_get(port: int, pid: int, mode: str, n: int) -> tuple[float, float]:
    """The CPU seconds workerd spends on one request of ``n`` verifications (all must be allowed), and the
    seconds the request takes."""
    from example_project.bench.hls import cpu_seconds

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        cpu = cpu_seconds(pid)
        start = time.perf_counter()
        connection.request("GET", f"/?n={n}&mode={mode}")
        response = connection.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - start
        time.sleep(0.01)  # let workerd finish the request's bookkeeping before its CPU time is read
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"workerd: {response.status} {body[:200]!r}")
    answer = json.loads(body)
    if answer["allowed"] != n:
        raise RuntimeError(f"workerd: {answer['allowed']} of {n} verifications allowed")
    return cpu_seconds(pid) - cpu, elapsed


def measure_runtimes(quick: bool, tick: Callable[[], object], errors: list[str]) -> dict[str, Any]:
    repeats, min_ms = (QUICK_REPEATS, QUICK_MIN_MS) if quick else (VERIFICATIONS_REPEATS, MIN_MS)
    results: dict[str, Any] = {}
    not_run: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="blake2sign-edge-js-") as directory:
        tmp = Path(directory)
        keyring = tmp / "keyring.json"
        from blake2sign_web.edge import keyring as keyrings

        keyring.write_text(keyrings.make(SECRET, purpose=PURPOSE).dumps())
        data = tmp / "cases.json"
        data.write_text(json.dumps(cases(200, keyring)))
        node, njs = shutil.which("node"), shutil.which("njs")
        loops = [str(repeats), str(min_ms)]
        commands: dict[str, tuple[list[str] | None, str]] = {
            "node hmac": ([node, str(JS / "bench_node.mjs"), str(data), "hmac", *loops] if node else None, "no node"),
            "node webcrypto": (
                [node, str(JS / "bench_node.mjs"), str(data), "webcrypto", *loops] if node else None,
                "no node",
            ),
            "njs decide": ([njs, str(JS / "bench_njs.js"), "decide"] if njs else None, "no njs"),
            "njs handler": ([njs, str(JS / "bench_njs.js"), "handler"] if njs else None, "no njs"),
        }
        for name, (command, why) in commands.items():
            if command is None:
                not_run[name] = why
                errors.append(f"{name}: {why}")
                continue
            progress(f"verification: {name}")
            try:
                if name.startswith("njs"):
                    count = QUICK_NJS_COUNT if quick else NJS_COUNT
                    results[name] = _summary(_njs(command, data, count, repeats))
                else:
                    results[name] = _summary(_script(command))
                progress(f"  {results[name]['median_us']:.2f} us per verification")
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as error:
                errors.append(f"{name}: {error}")
            tick()
        workerd = workerd_binary()
        if workerd is None:
            for name in ("workerd webcrypto", "workerd hmac"):
                not_run[name] = f"no workerd binary at {WORKERD.relative_to(ROOT)} (npm ci in tests/edge/workerd)"
        else:
            progress(f"verification: workerd ({workerd})")
            try:
                results.update(measure_workerd(workerd, data, QUICK_WORKERD_N if quick else WORKERD_N, repeats))
                for name in ("workerd webcrypto", "workerd hmac"):
                    progress(f"  {name}: {results[name]['median_us']:.2f} us per verification")
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as error:
                errors.append(f"workerd: {error}")
        tick()
    return {"runtimes": results, "not_run": not_run}


# --- the part ------------------------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    found = {}
    for name, command in (("nginx", ["nginx", "-v"]), ("njs", ["njs", "-v"]), ("node", ["node", "--version"])):
        binary = shutil.which(command[0]) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
        if binary:
            done = subprocess.run([binary, *command[1:]], capture_output=True, text=True)
            found[name] = (done.stdout + done.stderr).strip().replace("nginx version: ", "")
    workerd = workerd_binary()
    if workerd:
        found["workerd"] = subprocess.run([str(workerd), "--version"], capture_output=True, text=True).stdout.strip()
    return found


def ticks(quick: bool = False) -> int:
    """How many times ``run`` calls ``tick``."""
    return (QUICK_ROUNDS if quick else ROUNDS) + 5


def run(tick: Callable[[], object] = lambda: None, quick: bool = False, rounds: int | None = None,
        passes: int | None = None) -> dict[str, Any]:  # fmt: skip
    """{"settings", "results": {"servers": ..., "verification": ...}, "errors": [...]}: JSON-able."""
    from example_project.bench import hls
    from example_project.bench.timing import machine

    rounds = rounds or (QUICK_ROUNDS if quick else ROUNDS)
    passes = passes or (QUICK_PASSES if quick else PASSES)
    errors: list[str] = []
    results: dict[str, Any] = {}
    started = time.time()
    try:
        results["servers"] = measure_servers(rounds, passes, tick)
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        errors.append(f"servers: {type(error).__name__}: {error}")
    results["verification"] = measure_runtimes(quick, tick, errors)
    settings = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "quick": quick,
        "rounds": rounds,
        "passes": passes,
        "segments": hls.SEGMENTS,
        "segment_size": hls.SEGMENT_SIZE,
        "hasher": HASHER,
        "nginx_sendfile": SENDFILE,
        "sources": {
            str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()[:12]
            for path in (CORE, SNIPPET, SNIPPET.with_name("linkcheck_njs.js"))
        },
        "verification_requests": 200,
        "verification_repeats": QUICK_REPEATS if quick else VERIFICATIONS_REPEATS,
        "verification_min_ms": QUICK_MIN_MS if quick else MIN_MS,
        "workerd_verifications": QUICK_WORKERD_N if quick else WORKERD_N,
        "versions": versions(),
        "elapsed_s": round(time.time() - started, 1),
    }
    return {"settings": settings, "results": results, "errors": errors}


def table(part: dict[str, Any], which: str | None = None) -> list[str]:
    """Markdown rows: ``which`` "servers" (CPU per configuration, then the ratios), "verification" (µs per
    verification by runtime), or both, a blank line between."""
    if which is None:
        return [*table(part, "servers"), "", *table(part, "verification")]
    results = part.get("results", {})
    if which == "servers":
        servers = results.get("servers")
        if not servers:
            return ["Not run: " + "; ".join(e for e in part.get("errors", []) if e.startswith("servers")) or "Not run."]
        lines = [
            "| configuration | server CPU per workload (median, min-max of rounds) | per request "
            "| requests answered 200 |",
            "|---|---:|---:|---:|",
        ]
        for key, found in servers["configs"].items():
            served = found["served"]
            lines.append(
                f"| ({key}) {found['label']} | {_ms(found['median_s'])} ({_ms(found['min_s'])}-{_ms(found['max_s'])}) "
                f"| {_us(found['per_request_median_s'])} ({_us(found['per_request_min_s'])}-"
                f"{_us(found['per_request_max_s'])}) | {served['ok']} of {served['requests']} |"
            )
        lines += ["", "| ratio | median | min-max of rounds |", "|---|---:|---:|"]
        for name, found in servers["ratios"].items():
            note = ""
            if name == "b/a":
                verdict = "meets" if found["median"] <= servers["target"] else "MISSES"
                note = f" ({verdict} the target: at most {servers['target']:.2f})"
            lines.append(f"| ({name[0]}) / ({name[2]}){note} | {found['median']:.3f} | "
                         f"{found['min']:.3f}-{found['max']:.3f} |")  # fmt: skip
        return lines
    verification = results.get("verification", {})
    lines = ["| runtime | MAC | per verification (median, min-max of repeats) |", "|---|---|---:|"]
    for name, (runtime, how) in RUNTIMES.items():
        found = verification.get("runtimes", {}).get(name)
        if found and found["median_us"] <= 0:  # a difference of two processes' CPU, lost in their noise
            cell = f"not measurable in this run: {found['median_us']:.2f} us, within the noise of the runs without it"
        elif found:
            cell = f"{found['median_us']:.2f} us ({found['min_us']:.2f}-{found['max_us']:.2f})"
        else:
            cell = "not run: " + verification.get("not_run", {}).get(name, "failed (see errors)")
        lines.append(f"| {runtime} ({found['runtime'] if found else ''}) | {how} | {cell} |".replace(" ()", ""))
    servers = results.get("servers")
    if servers:
        rows = (
            ("njs_in_nginx_s", "(b) - (a)", "linkcheck_njs.js, folder link"),
            ("njs_cookie_in_nginx_s", "(c) - (a)", "linkcheck_njs.js, grant cookie"),
            ("njs_noop_in_nginx_s", "(x) - (a)", "a check allowing all, linkcheck.js loaded beside it"),
            ("njs_bare_noop_in_nginx_s", "(y) - (z)", "a check allowing all, nothing else loaded"),
        )
        for key, config, label in rows:
            if key not in servers:
                continue
            found = servers[key]
            lines.append(
                f"| nginx + njs (the servers' run: ({config}) / requests, server CPU) | js_set + if: "
                f"{label} | {_us(found['median'])} ({_us(found['min'])}-{_us(found['max'])}) |"
            )
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke test: 1 round of 1 pass, short loops")
    parser.add_argument("--rounds", type=int, help=f"interleaved rounds (default {ROUNDS})")
    parser.add_argument("--passes", type=int, help=f"workloads per configuration per round (default {PASSES})")
    parser.add_argument("--json", type=Path, help="write the results there")
    args = parser.parse_args()
    data = run(quick=args.quick, rounds=args.rounds, passes=args.passes)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=1) + "\n")
    settings = data["settings"]
    print(f"## Links checked at the edge\n\n{settings['machine']}; {settings['date']}; "
          f"{', '.join(f'{k} {v}' for k, v in settings['versions'].items())}\n")  # fmt: skip
    print(f"### Server CPU: a playlist and {settings['segments']} segments of 64 KiB\n")
    print("\n".join(table(data, "servers")))
    print(f"\n{settings['rounds']} interleaved rounds of {settings['passes']} workloads per configuration.\n")
    print("### One verification inside each runtime (a folder link, linkcheck.js)\n")
    print("\n".join(table(data, "verification")))
    if data["errors"]:
        print("\nErrors:\n" + "\n".join(f"- {e}" for e in data["errors"]))
    sys.exit(1 if data["errors"] else 0)


if __name__ == "__main__":
    main()
