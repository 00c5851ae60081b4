"""The JavaScript verifier under workerd, the Cloudflare Workers runtime: tests/edge/runners/workerd_runner.js runs
the vectors, the playlist vectors and the differential fuzz through linkcheck.js with WebCrypto's HMAC, as the
Worker (blake2sign_web/edge/verifiers/cloudflare/worker.js) does, and decides as the reference.

workerd is the npm package pinned in tests/edge/workerd (``cd tests/edge/workerd && npm ci``)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser import missing
from tests.edge.conftest import VECTORS, compare

HERE = Path(__file__).resolve().parent
WORKERD_DIR = HERE / "workerd"
PLATFORM = "workerd-linux-arm64" if platform.machine() in ("aarch64", "arm64") else "workerd-linux-64"
#: The native binary of the npm package, run directly: its node shim would put a process between the test and it.
WORKERD = WORKERD_DIR / "node_modules" / "@cloudflare" / PLATFORM / "bin" / "workerd"
NPM_CI = "cd tests/edge/workerd && npm ci"

#: How long the last workerd took from start to listening, in seconds (printed by the tests with -s).
startup: list[float] = []


def workerd() -> Path:
    """The native workerd binary of the pinned npm package; skipped without it (failed in CI)."""
    if not WORKERD.exists():
        if shutil.which("npm") is None:
            missing(f"Node's npm (Debian's npm package: apt-get install npm), then the pinned workerd: {NPM_CI}")
        missing(f"workerd, the npm package pinned in tests/edge/workerd: {NPM_CI}")
    return WORKERD


@contextmanager
def serve(config: str, env: dict[str, str] | None = None, external: dict[str, int] | None = None) -> Iterator[int]:
    """Run ``workerd serve`` with tests/edge/workerd/``config`` on a port it picks; yield the port, stop it after."""
    binary = workerd()
    read, write = os.pipe()
    command = [str(binary), "serve", str(WORKERD_DIR / config), "--socket-addr", "http=127.0.0.1:0",
               "--control-fd", str(write)]  # fmt: skip
    for name, address in (external or {}).items():
        command += ["--external-addr", f"{name}=127.0.0.1:{address}"]
    started = time.monotonic()
    process = subprocess.Popen(command, pass_fds=[write], env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    os.close(write)
    try:
        with os.fdopen(read) as control:
            port: int | None = None
            while port is None:
                line = control.readline()
                if not line:
                    process.kill()
                    _, errors = process.communicate(timeout=10)
                    pytest.fail(f"workerd exited before listening:\n{errors[-3000:]}")
                message = json.loads(line)
                if message.get("event") == "listen" and message.get("socket") == "http":
                    port = int(message["port"])
        startup.append(time.monotonic() - started)
        yield port
    finally:
        process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=10)


def post(port: int, path: str, cases: dict[str, Any] | Path) -> str:
    body = cases.read_bytes() if isinstance(cases, Path) else json.dumps(cases).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError as error:
        pytest.fail(f"the runner answered {error.code}: {error.read().decode()[-3000:]}")


@pytest.fixture(scope="module")
def runner() -> Iterator[int]:
    with serve("runner.capnp") as port:
        yield port


def test_workerd_decides_the_vectors_as_the_reference(runner: int) -> None:
    assert compare(json.loads(VECTORS.read_text()), post(runner, "/", VECTORS)) >= 217


def test_workerd_decides_the_fuzz_cases_as_the_reference(runner: int, fuzz_cases: Path) -> None:
    assert compare(fuzz_cases, post(runner, "/", fuzz_cases)) >= 500


def test_workerd_rewrites_the_playlist_vectors_as_the_reference(runner: int) -> None:
    cases = json.loads(VECTORS.read_text())
    lines = [json.loads(line) for line in post(runner, "/playlists", VECTORS).splitlines()]
    expected = [{"query": c["expect"]} for c in cases["playlist_queries"]]
    expected += [{"text": c["expect"]} for c in cases["playlists"]]
    assert len(expected) >= 8 + 13
    assert len(lines) == len(expected)
    wrong = [(c, got) for c, got, want in zip(cases["playlist_queries"] + cases["playlists"], lines, expected,
                                              strict=True) if got != want]  # fmt: skip
    assert not wrong, f"{len(wrong)} disagree; the first: {json.dumps(wrong[0])}"


def test_workerd_starts_quickly(runner: int) -> None:
    assert startup
    assert startup[0] < 5, startup
