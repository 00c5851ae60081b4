"""Signed downloads: time to first byte, total time and the server's peak memory growth by file size.

Serves files of 1 B up to 1 GiB (sparse, in a temporary directory, deleted after)
through the Django ``SignedFileView`` under gunicorn and Starlette's ``SignedFiles``
under uvicorn, each a real server on 127.0.0.1, and reads each with a client in
another process. Targets: a 1 GiB download grows the serving process's peak RSS
by less than 32 MiB, and the time to first byte does not grow with the size.

    python -m example_project.bench.downloads                  # up to 1 GiB
    python -m example_project.bench.downloads --max-size 16M   # quick run

Peak RSS growth is the worker's VmHWM after the download minus its VmRSS before,
with the high-water mark reset between downloads (``/proc/PID/clear_refs``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from example_project.bench.timing import machine, progress

SECRET = "benchmark-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
KiB, MiB, GiB = 1024, 1024**2, 1024**3
SIZES = [1, KiB, 64 * KiB, MiB, 16 * MiB, 256 * MiB, GiB]
SERVED_ROOT_ENV = "BLAKE2SIGN_BENCH_ROOT"

# --- the two applications (imported by the servers) ---------------------------------


def wsgi_app() -> Any:
    """gunicorn 'example_project.bench.downloads:wsgi_app()'."""
    return django_files_app("example_project.bench.download_urls")


def django_files_app(urlconf: str) -> Any:
    """Django serving the ``bench`` storage (the served folder) by ``urlconf``'s signed file views, no middleware."""
    import django
    from django.conf import settings

    settings.configure(
        SECRET_KEY=SECRET,
        DEBUG=False,
        ALLOWED_HOSTS=["127.0.0.1"],
        ROOT_URLCONF=urlconf,
        INSTALLED_APPS=["blake2sign_web.django"],
        MIDDLEWARE=[],
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "bench": {
                "BACKEND": "django.core.files.storage.FileSystemStorage",
                "OPTIONS": {"location": os.environ[SERVED_ROOT_ENV]},
            },
        },
    )
    django.setup()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


def asgi_app() -> Any:
    """uvicorn --factory example_project.bench.downloads:asgi_app."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SignedFiles

    signer = URLSigner(SECRET, purpose="blake2sign_web.signed_urls")
    return Starlette(routes=[Route("/files/{name:path}", SignedFiles(signer, os.environ[SERVED_ROOT_ENV]))])


# --- measuring ----------------------------------------------------------------------

CLIENT = r"""
import http.client, json, sys, time
port, url = int(sys.argv[1]), sys.argv[2]
conn = http.client.HTTPConnection("127.0.0.1", port)
start = time.perf_counter()
conn.request("GET", url)
response = conn.getresponse()
first = response.read(1)
ttfb = time.perf_counter() - start
received = len(first)
while chunk := response.read(1 << 20):
    received += len(chunk)
total = time.perf_counter() - start
print(json.dumps({"status": response.status, "ttfb": ttfb, "total": total, "bytes": received}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proc_status(pid: int, field: str) -> int:
    """A memory figure from /proc/PID/status, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@contextmanager
def server(kind: str, served_root: Path, app: str = "example_project.bench.downloads") -> Iterator[tuple[int, int]]:
    """Start gunicorn (Django) or uvicorn (Starlette) with ``app``'s ``wsgi_app()`` or ``asgi_app``; yield (port,
    pid of the process serving requests)."""
    port = free_port()
    if kind == "Django":
        command = [
            str(BIN / "gunicorn"),
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--timeout",
            "600",
            "--log-level",
            "warning",
        ]
        command.append(f"{app}:wsgi_app()")
    else:
        command = [str(BIN / "uvicorn"), "--factory", f"{app}:asgi_app"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), SERVED_ROOT_ENV: str(served_root)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{kind} server did not start")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        serving = process.pid
        if kind == "Django":
            while not children(process.pid):
                time.sleep(0.05)
            serving = children(process.pid)[0]
        yield port, serving
    finally:
        process.terminate()
        process.wait(timeout=30)


def download(port: int, url: str) -> dict[str, Any]:
    output = subprocess.run(
        [sys.executable, "-c", CLIENT, str(port), url], check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def measure_server(kind: str, served_root: Path, sizes: list[int], repeat: int) -> dict[int, dict[str, float]]:
    from blake2sign_web import URLSigner

    signer = URLSigner(SECRET, purpose="blake2sign_web.signed_urls")
    results: dict[int, dict[str, float]] = {}
    with server(kind, served_root) as (port, pid):
        download(port, signer.sign(f"/files/{sizes[0]}.bin"))  # warm up: imports, first request
        for size in sizes:
            url = signer.sign(f"/files/{size}.bin", expires_in=3600)
            ttfbs, totals, growths = [], [], []
            for _ in range(repeat if size < 256 * MiB else 1):
                before = proc_status(pid, "VmRSS")
                exact = reset_peak(pid)
                result = download(port, url)
                if result["status"] != 200 or result["bytes"] != size:
                    raise RuntimeError(f"{kind}: got {result} for a file of {size} bytes")
                peak = proc_status(pid, "VmHWM")
                ttfbs.append(result["ttfb"])
                totals.append(result["total"])
                growths.append(max(peak - before, 0) if exact else float("nan"))
            results[size] = {"ttfb": min(ttfbs), "total": min(totals), "growth": max(growths)}
            progress(
                f"  {kind} {human(size)}: first byte {ms(min(ttfbs))}, total {ms(min(totals))}, "
                f"peak RSS +{human(int(max(growths)))}"
            )
    return results


# --- reporting ----------------------------------------------------------------------


def human(size: float) -> str:
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= factor:
            value = size / factor
            return f"{value:.3g}{unit}"
    return f"{int(size)}B"


def ms(seconds: float) -> str:
    return f"{seconds:.3g}s" if seconds >= 1 else f"{seconds * 1e3:.3g}ms"


def report(sizes: list[int], results: dict[str, dict[int, dict[str, float]]]) -> str:
    head = "| File size | " + " | ".join(human(s) for s in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    for kind, by_size in results.items():
        lines.append(f"| {kind} first byte | " + " | ".join(ms(by_size[s]["ttfb"]) for s in sizes) + " |")
        lines.append(f"| {kind} total | " + " | ".join(ms(by_size[s]["total"]) for s in sizes) + " |")
        lines.append(
            f"| {kind} peak RSS growth | " + " | ".join(human(int(by_size[s]["growth"])) for s in sizes) + " |"
        )
    return "\n".join(lines)


def parse_size(text: str) -> int:
    units = {"K": KiB, "M": MiB, "G": GiB}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    return int(float(text[:-1]) * units[text[-1]]) if text and text[-1] in units else int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-size", type=parse_size, default=GiB, help="largest file, e.g. 16M or 1G (default)")
    parser.add_argument("--repeat", type=int, default=5, help="downloads per size below 256 MiB (best is kept)")
    args = parser.parse_args()
    sizes = [size for size in SIZES if size <= args.max_size]
    with tempfile.TemporaryDirectory(prefix="blake2sign-downloads-") as directory:
        root = Path(directory)
        for size in sizes:
            with open(root / f"{size}.bin", "wb") as handle:  # sparse: no disk or page cache needed up front
                handle.truncate(size)
        results = {}
        for kind in ("Django", "Starlette"):
            progress(f"{kind} ({'gunicorn' if kind == 'Django' else 'uvicorn'}, 1 worker):")
            results[kind] = measure_server(kind, root, sizes, args.repeat)
    print(f"## Signed downloads: Django SignedFileView (gunicorn) and Starlette SignedFiles (uvicorn)\n\n{machine()}\n")
    print(report(sizes, results))
    print(
        "\nBest of the repeats for times (one download from 256 MiB up); the largest peak RSS growth"
        " of the serving process."
    )


if __name__ == "__main__":
    main()
