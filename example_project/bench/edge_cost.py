"""What HMAC-SHA-256 costs against BLAKE2b in Python: instructions and time per link verification and per session
read and write, so that a site choosing the edge-checkable hasher knows its price at the origin.

Each operation runs under ``valgrind --tool=callgrind`` (``callgrind.count``: blocks of ``OPERATIONS`` calls after a
warm-up, ``callgrind.REPEATS`` blocks) and under the clock (``timing.measure``: best and median of 7 repeats). The
links are verified by ``URLSigner.verify_link`` with one fallback secret configured (a site mid-rotation: the key id
spares HMAC-SHA-256 and BLAKE2b links alike a second MAC), the session is a Django login session of about 190 bytes
read and written by ``SerializerSigner`` with the shipped dictionary, as the session engines do, and read once more
as a cookie of the retired key (its key id picks that key: one MAC, as for the current key's).

    python -m example_project.bench edge
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import callgrind
from .timing import measure

SECRET = "bench-edge-secret-0123456789abcdefghijklmnop"
HASHERS = ("blake2b", "hmac-sha256")
OPERATIONS = 200
WARMUP = 50
SESSION = {
    "_auth_user_id": "42",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f6c1e0b9a4d5e7f8a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081",
    "cart": [17, 23],
}
#: The operations, in the page's order.
NAMES = ("one file's link", "folder link", "session read", "session read, retired key", "session write")
RETIRED = SECRET + " retired"


def operations(hasher: str) -> dict[str, Callable[[], object]]:
    from blake2sign_web.links.signer import URLSigner
    from blake2sign_web.signing.serializer import SerializerSigner

    links = URLSigner(SECRET, purpose="downloads", hasher=hasher, fallbacks=[RETIRED])
    one = links.sign("/files/videos/123/seg-001.ts", expires_in=3600)
    folder = links.sign_prefix("/files/videos/123/", expires_in=3600).link("seg-001.ts")
    sessions = SerializerSigner(SECRET, purpose="sessions", hasher=hasher, dictionary=1, fallbacks=[RETIRED])
    token = sessions.dumps(SESSION)
    retired = SerializerSigner(RETIRED, purpose="sessions", hasher=hasher, dictionary=1).dumps(SESSION)
    return {
        "one file's link": lambda: links.verify_link(one),
        "folder link": lambda: links.verify_link(folder),
        "session read": lambda: sessions.loads(token, max_age=3600),
        "session read, retired key": lambda: sessions.loads(retired, max_age=3600),
        "session write": lambda: sessions.dumps(SESSION),
    }


def child(requests: int, warmup: int, labels_path: str) -> None:
    """Runs under valgrind: every hasher's operations, counted in turn."""
    built = {hasher: operations(hasher) for hasher in HASHERS}
    labels: list[dict[str, Any]] = []
    callgrind.begin()
    for hasher, ops in built.items():
        for name, run in ops.items():
            callgrind.count({"hasher": hasher, "operation": name}, run, requests, warmup, labels)
    Path(labels_path).write_text(json.dumps(labels))


def run(tick: Callable[[], object] = lambda: None, requests: int = OPERATIONS, warmup: int = WARMUP,
        timeout: float = 900, quick: bool = False) -> dict[str, Any]:  # fmt: skip
    """{"settings", "results": {hasher: {operation: {"Ir": [...], "Ir_median", "best_s", "median_s"}}}}."""
    results: dict[str, Any] = {hasher: {} for hasher in HASHERS}
    why = callgrind.supported()
    if why is None:
        argv = ["example_project.bench.edge_cost", "--child", str(requests), str(warmup)]
        found = callgrind.run_children({"python": (argv, {})}, timeout, tick)["python"]
        if isinstance(found, dict):
            return {"error": found["error"]}
        for dump, label in zip(*found, strict=True):
            row = results[label["hasher"]].setdefault(label["operation"], {"Ir": []})
            row["Ir"].append(dump.total("Ir") / label["requests"])
        for rows in results.values():
            for row in rows.values():
                row["Ir_median"] = sorted(row["Ir"])[len(row["Ir"]) // 2]
    for hasher in HASHERS:
        for name, op in operations(hasher).items():
            timing = measure(f"{hasher} {name}", op, repeat=3 if quick else 7, target=0.05 if quick else 0.2)
            results[hasher].setdefault(name, {}).update(best_s=timing.best, median_s=timing.median)
    tick()
    settings = {"operations": requests, "warmup": warmup, "repeats": callgrind.REPEATS, "counted": why is None}
    return {"settings": settings, "results": results}


def table(part: dict[str, Any]) -> list[str]:
    """Per operation: instructions and time under each hasher, and HMAC-SHA-256's ratio to BLAKE2b."""
    results = part["results"]
    lines = [
        "| operation | BLAKE2b: instructions | HMAC-SHA-256: instructions | ratio | BLAKE2b: time (best, median) "
        "| HMAC-SHA-256: time | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in NAMES:
        blake, hmac = results["blake2b"].get(name, {}), results["hmac-sha256"].get(name, {})
        if "best_s" not in blake or "best_s" not in hmac:  # results of a run before this operation was measured
            continue
        cells = [name]
        if "Ir_median" in blake and "Ir_median" in hmac:
            cells += [_count(blake), _count(hmac), f"{hmac['Ir_median'] / blake['Ir_median']:.2f}"]
        else:
            cells += ["", "", ""]
        cells += [_time(blake), _time(hmac), f"{hmac['best_s'] / blake['best_s']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _count(row: dict[str, Any]) -> str:
    return f"{row['Ir_median'] / 1000:,.1f}k ({min(row['Ir']) / 1000:,.1f}k-{max(row['Ir']) / 1000:,.1f}k)"


def _time(row: dict[str, Any]) -> str:
    return f"{row['best_s'] * 1e6:.2f} us, {row['median_s'] * 1e6:.2f} us"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        print("\n".join(table(run())))
