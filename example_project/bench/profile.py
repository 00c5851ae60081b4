"""Where a real server's time goes: py-spy samples the worker under load, the samples are sorted into kinds of work.

Each engine's server (gunicorn with one sync worker, uvicorn with one worker) serves one kind of
request from ``wrk`` over one connection while ``py-spy record`` samples the worker (``--format raw``:
one folded stack a line with its count; samples of a thread waiting for a request are left out, as
py-spy leaves idle threads out). A sample with a frame in a signing or serialization module
(``SIGNING``) is signing work, writing or reading by the outermost such frame's function; any other
goes to the kind of work of its innermost frame that matches a rule (``CATEGORIES``, then
``FRAMEWORK`` for the server, framework and view), so a sample in the session middleware's own lines
counts as its layering, and one in the router under it does not. A kind's share of the samples
times the worker's CPU time per request over the same seconds gives its microseconds per request;
*added* is that less the session-less baseline's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import http_load, request_cost

ENGINES = request_cost.SERVER_ENGINES

KINDS = request_cost.SERVER_KINDS

#: Modules whose frames are the token's signing and serialization (ours and the incumbents').
SIGNING = re.compile(
    r"\((.*blake2sign_web/signing/(signer|serializer|encoding|compression|keys|cache)\.py|.*django/core/signing\.py|"
    r".*itsdangerous/|.*/base64\.py|.*/json/|.*/hmac\.py|.*/hashlib\.py|.*django/utils/crypto\.py|.*zstandard)"
)
#: The outermost signing frame's function says which way: these write a token, the others read one.
WRITING = re.compile(
    r"^(?:\S*\.)?(dumps|_dumps\w*|sign|_seal|seal|encode|compress|b64encode|urlsafe_b64encode|signature) "
)
ENCODE, DECODE = "encoding and signing the cookie", "verifying and decoding the cookie"
#: (kind of work, pattern on "function (path)"): the innermost frame that matches one of these decides.
CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    (
        "socket write (send syscall)",
        re.compile(
            r"^(?:\S*\.)?(sendall|send|write|_write_ready|_write_send|writelines) \((.*/socket\.py|"
            r".*asyncio/selector_events\.py|.*gunicorn/util\.py|.*uvicorn/protocols/)"
        ),
    ),
    (
        "response headers (Set-Cookie, Vary)",
        re.compile(
            r"^(?:\S*\.)?(set_cookie|_set_cookie|set_cookies|_cookie_header|response_headers|usual_headers|_?with_vary_cookie|patch_vary_headers|OutputString|"
            r"output|js_output|cookie_date|http_date|_cookie_attributes|server_timing_header) \("
        ),
    ),
    (
        "the server parsing and validating headers",
        re.compile(
            r"\(.*(h11/_headers\.py|h11/_util\.py|h11/_readers\.py|h11/_writers\.py|gunicorn/http/message\.py)|"
            r"^(?:\S*\.)?(_decode_header_lines|_obsolete_line_fold|parse_headers|on_header|on_headers_complete) \("
        ),
    ),
    (
        "finding the cookie",
        re.compile(
            r"(\(.*http/cookies\.py|\(.*django/http/cookie\.py|"
            r"^(?:\S*\.)?(COOKIES|cookies|cookie_parser|_read_cookie|parse_cookie) \()"
        ),
    ),
    (
        "building the session",
        re.compile(
            r"\((.*django/contrib/sessions/backends/|.*blake2sign_web/django/sessions\.py)|"
            r"^(?!\S*(__call__|send_wrapper|process_request|process_response|__acall__) )\S+ "
            r"\(.*blake2sign_web/starlette/sessions\.py"
        ),
    ),
    (
        "the session middleware's own code",
        re.compile(
            r"\(.*(django/contrib/sessions/middleware\.py|blake2sign_web/django/middleware\.py|"
            r"starlette/middleware/sessions\.py|blake2sign_web/starlette/sessions\.py)"
        ),
    ),
]
OTHER = "server, framework and view"
#: Frames of these decide for OTHER; frames of anything else (re, typing, functools...) pass to their caller.
FRAMEWORK = re.compile(r"\(.*(starlette/|django/|uvicorn/|gunicorn/|h11/|asyncio/|example_project/|wsgiref/|anyio/)")
ORDER = [ENCODE, DECODE] + [name for name, _ in CATEGORIES] + [OTHER]


def category(stack: list[str]) -> str:
    """The kind of work of one sample (frames outermost first)."""
    signing = [frame for frame in stack if SIGNING.search(frame)]
    if signing:
        return ENCODE if WRITING.search(signing[0]) else DECODE
    for frame in reversed(stack):
        for name, pattern in CATEGORIES:
            if pattern.search(frame):
                return name
        if FRAMEWORK.search(frame):
            return OTHER
    return OTHER


def read_raw(path: Path) -> dict[str, int]:
    """Samples per kind of work, from py-spy's raw (folded) output."""
    counts: dict[str, int] = defaultdict(int)
    for line in path.read_text().splitlines():
        stack_text, _, count = line.rpartition(" ")
        if not stack_text or not count.isdigit():
            continue
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack_text.split(";")]
        counts[category(frames)] += int(count)
    return dict(counts)


def py_spy() -> str | None:
    found = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    return found if Path(found).exists() else None


def run(
    frameworks: list[str],
    database: Path,
    services: set[str],
    *,
    seconds: float,
    rate: int,
    kinds: tuple[str, ...] = KINDS,
    tick: Callable[[], object],
    describe: Callable[[str], object],
) -> dict[str, Any]:
    spy = py_spy()
    if spy is None:
        return {"error": "py-spy is not installed (pip install py-spy)"}
    if shutil.which("wrk") is None:
        return {"error": "wrk is not installed (Debian: apt-get install wrk)"}
    env = {"BENCH_DB": str(database), "BENCH_SERVICES": ",".join(sorted(services))}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for framework in frameworks:
            servers = {e: http_load.Server(framework, e, env, None) for e in ENGINES[framework]}
            try:
                for server in servers.values():
                    server.wait()
                cookies = {e: None if e == ENGINES[framework][0] else s.login_cookie() for e, s in servers.items()}
                for kind in kinds:
                    for engine, server in servers.items():
                        describe(f"profile: {framework}, {kind}")
                        raw = Path(tmp) / f"{framework}-{kind}-{len(out)}-{engine[:8]}.txt"
                        path = request_cost.server_path(framework, engine, kind)
                        spy_command = [spy, "record", "--pid", str(server.worker), "--rate", str(rate)]
                        spy_command += [
                            "--duration",
                            str(max(1, round(seconds))),
                            "--format",
                            "raw",
                            "--output",
                            str(raw),
                        ]
                        before = server.cpu_seconds()
                        recorder = subprocess.Popen(spy_command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                        time.sleep(0.3)  # py-spy attaches
                        sample = http_load.measure(server, path, cookies[engine], seconds, 10**7, None)
                        spent = server.cpu_seconds() - before
                        _, error = recorder.communicate(timeout=60)
                        counts = read_raw(raw) if raw.exists() else {}
                        total = sum(counts.values())
                        # py-spy ran a little longer than the load: scale by the load's share of the CPU
                        per_request = sample.cpu_per_request
                        row = {
                            "cpu_us_per_request": per_request * 1e6,
                            "cpu_s_while_recorded": spent,
                            "requests": sample.requests,
                            "samples": counts,
                            "us_per_request": {k: per_request * 1e6 * v / total for k, v in counts.items()}
                            if total
                            else {},
                        }
                        if not total:
                            row["error"] = error.decode(errors="replace")[-500:]
                        out.setdefault(framework, {}).setdefault(kind, {})[engine] = row
                        tick()
            finally:
                for server in servers.values():
                    server.stop()
    for framework, kinds in out.items():
        base = ENGINES[framework][0]
        for rows in kinds.values():
            base_row = rows[base]["us_per_request"]
            for row in rows.values():
                row["added_us_per_request"] = {
                    k: row["us_per_request"].get(k, 0.0) - base_row.get(k, 0.0) for k in ORDER
                }
    return out
