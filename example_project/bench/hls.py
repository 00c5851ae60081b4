"""HLS through the signed file views: the server CPU a playlist and its segments cost, signed against not.

A media playlist of ``SEGMENTS`` segments of 64 KiB (random bytes, in a temporary directory) is served by one
server in two ways at once: by a folder link through the signed view (Django's ``SignedFileView`` under gunicorn,
one sync worker; Starlette's ``SignedFiles`` under uvicorn), which passes the link on to the playlist's URIs, and
with no signature check (``django.views.static.serve``; Starlette's ``StaticFiles``). A client in this process
fetches the playlist, then every URI in it, as a player does (``passes`` times per measurement), each response
checked. The serving process's CPU time (the time its threads ran, ``/proc/PID/task/*/schedstat``) is read before
and after each measurement; signed and plain alternate, round after round, so that both see the same machine.
Target: the signed workload costs at most 10% more server CPU than the plain one.

    python -m example_project.bench.hls                      # 7 rounds of 3 passes, both servers
    python -m example_project.bench.hls --rounds 3 --passes 1 --json out.json
    python -m example_project.bench hls                      # as a part of the whole benchmark
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from example_project.bench.downloads import SECRET, SERVED_ROOT_ENV, django_files_app, server
from example_project.bench.timing import machine, progress

SEGMENTS = 200
SEGMENT_SIZE = 64 * 1024
#: The most the signed workload may cost over the plain one, in server CPU time.
TARGET = 1.10
KINDS = ("Django", "Starlette")
TICKS = os.sysconf("SC_CLK_TCK")


# --- the two applications (imported by the servers) ---------------------------------


def wsgi_app() -> Any:
    """gunicorn 'example_project.bench.hls:wsgi_app()'."""
    return django_files_app("example_project.bench.hls_urls")


def asgi_app() -> Any:
    """uvicorn --factory example_project.bench.hls:asgi_app."""
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SignedFiles

    signer = URLSigner(SECRET, purpose="blake2sign_web.signed_urls")
    root = os.environ[SERVED_ROOT_ENV]
    files = SignedFiles(signer, root, as_attachment=False)
    return Starlette(routes=[Route("/signed/{name:path}", files), Mount("/plain", StaticFiles(directory=root))])


# --- the stream and its client ------------------------------------------------------


def make_stream(root: Path) -> None:
    """``videos/1/index.m3u8`` and its ``SEGMENTS`` segments of ``SEGMENT_SIZE`` random bytes."""
    folder = root / "videos" / "1"
    folder.mkdir(parents=True)
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", "#EXT-X-PLAYLIST-TYPE:VOD"]
    for number in range(SEGMENTS):
        (folder / f"seg{number:03d}.ts").write_bytes(os.urandom(SEGMENT_SIZE))
        lines += ["#EXTINF:2.0,", f"seg{number:03d}.ts"]
    (folder / "index.m3u8").write_text("\n".join([*lines, "#EXT-X-ENDLIST", ""]))


def play(port: int, url: str, signed: bool) -> int:
    """Fetch the playlist at ``url`` then every URI in it, as a player does; the number of requests.
    RuntimeError for any answer but a whole file (and, signed, for a URI without the link's query)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        playlist = _get(connection, url).decode()
        uris = [line for line in playlist.splitlines() if line and not line.startswith("#")]
        if len(uris) != SEGMENTS:
            raise RuntimeError(f"the playlist lists {len(uris)} segments, not {SEGMENTS}")
        query = urlsplit(url).query
        for uri in uris:
            target = urljoin(url, uri)
            if signed and urlsplit(target).query != query:
                raise RuntimeError(f"a segment URI without the link's query: {uri[:40]!r}")
            if len(_get(connection, target)) != SEGMENT_SIZE:
                raise RuntimeError(f"{target[:60]!r}: not the whole segment")
    finally:
        connection.close()
    return 1 + len(uris)


def _get(connection: http.client.HTTPConnection, target: str) -> bytes:
    connection.request("GET", target)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"{target[:60]!r}: {response.status}")
    return body


def cpu_seconds(pid: int) -> float:
    """The process's CPU time, all its threads: the nanoseconds each has run (``/proc/PID/task/TID/schedstat``),
    or, where the kernel keeps no schedstat, user + system in clock ticks (``/proc/PID/stat``: 10 ms steps, too
    coarse for one workload of about 80 ms)."""
    try:
        return (
            sum(int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9
        )
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / TICKS


# --- measuring ----------------------------------------------------------------------


def measure_server(kind: str, root: Path, rounds: int, passes: int, tick: Callable[[], None]) -> dict[str, Any]:
    """Server CPU per workload (a playlist and its segments), signed and plain, ``rounds`` interleaved rounds."""
    from blake2sign_web import URLSigner

    signer = URLSigner(SECRET, purpose="blake2sign_web.signed_urls")
    signed_url = signer.sign_prefix("/signed/videos/1/", expires_in=24 * 3600).link("index.m3u8")
    plain_url = "/plain/videos/1/index.m3u8"
    cpu: dict[str, list[float]] = {"signed": [], "plain": []}
    with server(kind, root, app="example_project.bench.hls") as (port, pid):
        for url, signed in ((signed_url, True), (plain_url, False)):  # warm up: imports, first requests
            play(port, url, signed)
        for number in range(rounds):
            order = [("signed", signed_url), ("plain", plain_url)]
            for name, url in order if number % 2 == 0 else order[::-1]:
                before = cpu_seconds(pid)
                for _ in range(passes):
                    play(port, url, name == "signed")
                cpu[name].append((cpu_seconds(pid) - before) / passes)
            tick()
            progress(
                f"  {kind} round {number + 1}/{rounds}: signed {cpu['signed'][-1] * 1e3:.0f} ms, "
                f"plain {cpu['plain'][-1] * 1e3:.0f} ms of server CPU per workload"
            )
    ratios = [s / p for s, p in zip(cpu["signed"], cpu["plain"], strict=True) if p > 0] or [float("nan")]
    return {
        "cpu_s": cpu,
        "signed_median_s": statistics.median(cpu["signed"]),
        "plain_median_s": statistics.median(cpu["plain"]),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "requests_per_workload": 1 + SEGMENTS,
    }


def run(rounds: int, passes: int, tick: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Both servers: the benchmark part's results."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="blake2sign-hls-") as directory:
        root = Path(directory)
        make_stream(root)
        for kind in KINDS:
            progress(f"{kind} ({'gunicorn, 1 sync worker' if kind == 'Django' else 'uvicorn'}):")
            results[kind] = measure_server(kind, root, rounds, passes, tick)
    settings = {"rounds": rounds, "passes": passes, "segments": SEGMENTS, "segment_size": SEGMENT_SIZE}
    return {"settings": settings, "target": TARGET, "results": results}


def report(data: dict[str, Any]) -> str:
    lines = [
        "| Server | signed: server CPU per workload | plain | signed / plain (median, min-max of rounds) |",
        "|---|---:|---:|---:|",
    ]
    for kind, found in data["results"].items():
        verdict = "meets" if found["ratio_median"] <= data["target"] else "MISSES"
        lines.append(
            f"| {kind} | {found['signed_median_s'] * 1e3:.0f} ms | {found['plain_median_s'] * 1e3:.0f} ms | "
            f"{found['ratio_median']:.3f} ({found['ratio_min']:.3f}-{found['ratio_max']:.3f}): {verdict} "
            f"the target (at most {data['target']:.2f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--passes", type=int, default=3, help="workloads per measurement (default 3)")
    parser.add_argument("--json", type=Path, help="write the results there")
    args = parser.parse_args()
    started = time.time()
    data = run(args.rounds, args.passes)
    data["settings"]["elapsed_s"] = round(time.time() - started, 1)
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), **data}, indent=1) + "\n")
    print(f"## HLS: a playlist and {SEGMENTS} segments of 64 KiB, signed against plain\n\n{machine()}\n")
    print(report(data))
    print(
        f"\nServer CPU (user + system of the serving process) per workload of {1 + SEGMENTS} requests; medians of "
        f"{args.rounds} interleaved rounds of {args.passes} workloads each."
    )


if __name__ == "__main__":
    main()
