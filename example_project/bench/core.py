"""Core benchmark: one dumps+loads round trip, ours against the signers people use today.

    python -m example_project.bench.core [--quick] [--chart docs/img/core.png]

In one run, at three payload sizes (~20 B, a ~330 B session, ~20 KB): SerializerSigner
with its defaults, without compression and with compression forced; django.core.signing;
itsdangerous' URLSafeTimedSerializer; blake2signer's Blake2SerializerSigner (cached, with
a max_age so it timestamps like the others); PyJWT HS256; and the primitive floor (orjson
dumps+loads, two keyed BLAKE2b digests, base64 both ways). Then the three hashers, and
cached against constructed-per-call. Each library runs with its own defaults. Last, the
cost of dumps for the Django login session (175 B of JSON) compressed against the session
dictionary vs uncompressed, as medians of interleaved rounds (the target: at most 1.5x).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import sys
from collections.abc import Callable
from typing import Any

import orjson

from blake2sign_web import SerializerSigner, get_signer

from .interleaved import Quartiles, run_rounds
from .timing import Timing, format_time, machine, measure, progress, table

SECRET = "benchmark-secret-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ"
PURPOSE = "benchmark"

PAYLOADS: dict[str, Any] = {
    "small (~20 B)": {"user_id": 12345},
    "session (~330 B)": {
        "_auth_user_id": "12345",
        "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
        "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
        "cart": {"items": [{"sku": "A-100", "qty": 2}, {"sku": "B-220", "qty": 1}]},
        "theme": "dark",
        "csrf": "abcdefghijklmnopqrstuvwxyz012345",
        "flash": "hello world" * 3,
    },
    "large (~20 KB)": {
        "items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "price": i * 1.5} for i in range(400)]
    },
}


def round_trip(dumps: Callable[[Any], Any], loads: Callable[[Any], Any], value: Any) -> Callable[[], object]:
    def run() -> object:
        return loads(dumps(value))

    return run


def anchors() -> dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]:
    """Each anchor's dumps and loads, built once (cached) with the library's defaults."""
    from django.conf import settings

    if not settings.configured:
        settings.configure(SECRET_KEY=SECRET)
    import blake2signer
    import itsdangerous
    import jwt
    from django.core import signing

    its = itsdangerous.URLSafeTimedSerializer(SECRET, salt=PURPOSE)
    b2s = blake2signer.Blake2SerializerSigner(SECRET, max_age=3600, personalisation=PURPOSE)
    key = hashlib.blake2b(SECRET.encode(), digest_size=64).digest()

    def floor_dumps(value: Any) -> bytes:
        encoded = base64.urlsafe_b64encode(orjson.dumps(value))
        hashlib.blake2b(encoded, key=key, digest_size=32).digest()
        return encoded

    def floor_loads(encoded: bytes) -> Any:
        hashlib.blake2b(encoded, key=key, digest_size=32).digest()
        return orjson.loads(base64.urlsafe_b64decode(encoded))

    return {
        "django.core.signing": (signing.dumps, signing.loads),
        "itsdangerous URLSafeTimedSerializer": (its.dumps, lambda t: its.loads(t, max_age=3600)),
        "blake2signer (cached)": (b2s.dumps, b2s.loads),
        "PyJWT HS256": (
            lambda v: jwt.encode(v, SECRET, algorithm="HS256"),
            lambda t: jwt.decode(t, SECRET, algorithms=["HS256"]),
        ),
        "primitive floor": (floor_dumps, floor_loads),
    }


def size_of(dumps: Callable[[Any], Any], value: Any) -> int:
    token = dumps(value)
    return len(token)


def compare_libraries(quick: bool) -> dict[str, list[Timing]]:
    # The ~20 KB payload needs a larger token limit than the cookie-sized default.
    limit = {"max_token_length": 1 << 17}
    ours = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600, **limit)
    plain = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600, compression=None, **limit)
    packed = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600, compression_threshold=0, **limit)
    session = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600, dictionary=1, **limit)
    contenders = {
        "blake2sign_web (defaults)": (ours.dumps, ours.loads),
        "blake2sign_web (no compression)": (plain.dumps, plain.loads),
        "blake2sign_web (compression forced)": (packed.dumps, packed.loads),
        "blake2sign_web (session dictionary)": (session.dumps, session.loads),
        **anchors(),
    }
    results: dict[str, list[Timing]] = {}
    payloads = {"session (~330 B)": PAYLOADS["session (~330 B)"]} if quick else PAYLOADS
    for label, value in payloads.items():
        progress(f"{label}:")
        results[label] = [
            measure(
                name,
                round_trip(dumps, loads, value),
                repeat=3 if quick else 9,
                target=0.02 if quick else 0.2,
                size=size_of(dumps, value),
            )
            for name, (dumps, loads) in contenders.items()
        ]
    return results


def compare_hashers(quick: bool) -> list[Timing]:
    value = PAYLOADS["session (~330 B)"]
    progress("hashers (session payload, defaults):")
    rows = []
    for hasher in ("blake2b", "blake2s", "blake3"):
        signer = SerializerSigner(SECRET, purpose=PURPOSE, hasher=hasher)
        rows.append(
            measure(
                hasher,
                round_trip(signer.dumps, signer.loads, value),
                repeat=5 if quick else 9,
                target=0.05 if quick else 0.2,
            )
        )
    return rows


def compare_caching(quick: bool) -> list[Timing]:
    value = PAYLOADS["session (~330 B)"]
    progress("cached against constructed per call (session payload):")

    def cached() -> object:
        signer = get_signer(SECRET, purpose=PURPOSE, max_age=3600)
        return signer.loads(signer.dumps(value))

    def constructed() -> object:
        signer = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600)
        return signer.loads(signer.dumps(value))

    def constructed_with_fallback() -> object:
        signer = SerializerSigner(SECRET, purpose=PURPOSE, max_age=3600, fallbacks=[SECRET[::-1]])
        return signer.loads(signer.dumps(value))

    options = {"repeat": 5 if quick else 9, "target": 0.05 if quick else 0.2}
    return [
        measure("get_signer() each call (cached)", cached, **options),
        measure("SerializerSigner() each call", constructed, **options),
        measure("SerializerSigner() each call, 1 fallback", constructed_with_fallback, **options),
    ]


LOGIN = {
    "_auth_user_id": "12345",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "3f1c1a6e0b5a8b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c",
}


def login_dumps_rounds(quick: bool) -> dict[str, Any]:
    """dumps and loads of the login session, with the session dictionary and without: interleaved rounds."""
    progress("dumps of the login session, compressed vs not (interleaved rounds):")
    packed = SerializerSigner(SECRET, purpose=PURPOSE, dictionary=1)  # as the session adapters write
    plain = SerializerSigner(SECRET, purpose=PURPOSE, compression=None)
    configs = {
        "dumps, session dictionary": lambda: packed.dumps(LOGIN),
        "dumps, no compression": lambda: plain.dumps(LOGIN),
        "loads, session dictionary": (lambda token: lambda: packed.loads(token))(packed.dumps(LOGIN)),
        "loads, no compression": (lambda token: lambda: plain.loads(token))(plain.dumps(LOGIN)),
    }
    rounds = run_rounds(configs, rounds=7 if quick else 21, block=0.02 if quick else 0.05)
    sizes = {name: len((packed if "dictionary" in name else plain).dumps(LOGIN)) for name in configs}
    per_round = [
        a / b for a, b in zip(rounds["dumps, session dictionary"], rounds["dumps, no compression"], strict=True)
    ]
    return {"rounds_s": rounds, "sizes": sizes, "dumps_ratio_rounds": per_round}


def login_markdown(data: dict[str, Any]) -> str:
    lines = [
        "### dumps and loads of the Django login session (175 B of JSON), medians of interleaved rounds",
        "",
        "| | median | q1-q3 | token |",
        "|---|---:|---:|---:|",
    ]
    for name, values in data["rounds_s"].items():
        q = Quartiles.of(values)
        lines.append(
            f"| {name} | {format_time(q.median)} | {format_time(q.q1)} - {format_time(q.q3)} | {data['sizes'][name]} |"
        )
    q = Quartiles.of(data["dumps_ratio_rounds"])
    lines += [
        "",
        f"dumps compressed / uncompressed, per round: median {q.median:.2f}x "
        f"(q1-q3 {q.q1:.2f}-{q.q3:.2f}); target <= 1.5x",
        "",
    ]
    return "\n".join(lines)


def login_dumps_cost(quick: bool) -> str:
    return login_markdown(login_dumps_rounds(quick))


def run(quick: bool, tick: Callable[[], object] = lambda: None) -> dict[str, Any]:
    """Everything this benchmark measures, as JSON-ready data (``markdown`` turns it into the tables)."""
    from dataclasses import asdict

    results = compare_libraries(quick)
    tick()
    hashers = compare_hashers(quick)
    caching = compare_caching(quick)
    tick()
    login = login_dumps_rounds(quick)
    tick()
    return {
        "payloads": {label: [asdict(r) for r in rows] for label, rows in results.items()},
        "hashers": [asdict(r) for r in hashers],
        "caching": [asdict(r) for r in caching],
        "login": login,
        "targets_markdown": targets(results, caching),
    }


def markdown(data: dict[str, Any]) -> str:
    """The core tables of a ``run``."""
    out = []
    for label, rows in data["payloads"].items():
        out.append(table(f"dumps + loads, {label}", [Timing(**r) for r in rows], "django.core.signing"))
    out.append(table("Hashers", [Timing(**r) for r in data["hashers"]], "blake2b"))
    out.append(table("Signer construction", [Timing(**r) for r in data["caching"]], "SerializerSigner() each call"))
    out.append(data["targets_markdown"])
    out.append(login_markdown(data["login"]))
    return "\n".join(out)


def chart_data(data: dict[str, Any], path: str) -> None:
    chart({label: [Timing(**r) for r in rows] for label, rows in data["payloads"].items()}, path)


def targets(results: dict[str, list[Timing]], caching: list[Timing]) -> str:
    session = {r.name: r for r in results["session (~330 B)"]}
    ours = session["blake2sign_web (defaults)"].best
    plain = session["blake2sign_web (no compression)"].best
    lines = [
        "### Targets (session payload, best times, same run)",
        "",
        "| target | measured |",
        "|---|---:|",
        f"| >= 4x faster than django.core.signing | {session['django.core.signing'].best / ours:.2f}x |",
        f"| >= 3x faster than cached blake2signer | {session['blake2signer (cached)'].best / ours:.2f}x |",
        f"| <= 2x the primitive floor (no compression) | {plain / session['primitive floor'].best:.2f}x |",
        f"| cached >= 2x cheaper than constructed per call | {caching[1].best / caching[0].best:.2f}x |",
        "",
    ]
    return "\n".join(lines)


def chart(results: dict[str, list[Timing]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["session (~330 B)"]
    fig, ax = plt.subplots(figsize=(8, 4))
    names = [r.name for r in rows][::-1]
    times = [r.best * 1e6 for r in rows][::-1]
    colors = ["tab:blue" if n.startswith("blake2sign_web") else "tab:gray" for n in names]
    ax.barh(names, times, color=colors)
    for y, t in enumerate(times):
        ax.text(t, y, f" {t:.1f}", va="center", fontsize=8)
    ax.set_xlabel("microseconds per dumps+loads (best of repeats; lower is better)")
    ax.set_title("Session-like payload (~330 B)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    progress(f"chart written to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats (a smoke run)")
    parser.add_argument("--chart", help="write a PNG bar chart of the session payload here")
    args = parser.parse_args(argv)
    results = compare_libraries(args.quick)
    hashers = compare_hashers(args.quick)
    caching = compare_caching(args.quick)
    login = login_dumps_cost(args.quick)
    out = [f"Machine: {machine()}", ""]
    for label, rows in results.items():
        out.append(table(f"dumps + loads, {label}", rows, "django.core.signing"))
    out.append(table("Hashers", hashers, "blake2b"))
    out.append(table("Signer construction", caching, "SerializerSigner() each call"))
    out.append(targets(results, caching))
    out.append(login)
    sys.stdout.write("\n".join(out))
    if args.chart:
        chart(results, args.chart)


if __name__ == "__main__":
    main()
