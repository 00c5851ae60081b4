"""Session dictionary: compressed sizes, compress-call cost and estimated format-2 cookie lengths.

    python -m example_project.bench.dictionary_sizes [--quick] [--dictionary-id 1 | --dictionary PATH]

Every session here comes from scripts/session_corpus.py's *evaluation* pools with seeds the
training never used, so the dictionary is measured on data it was not tuned to.

1. Median compressed size per payload kind, zstd levels 1, 3, 9, 19, with the dictionary and
   without (magic-less frames, no dictionary id, no checksum, content size written: how
   blake2sign_web writes them), and the median cost of one compress call on the kind's
   median-sized payload (dictionary precomputed for the level, one prebuilt compressor).
2. Cookie value length: real format-2 tokens, as the session adapters write them
   (SerializerSigner with the dictionary, a 16-byte tag; with ``--dictionary PATH`` or an id the
   package does not ship, estimated as 1 marker + base64url(4-byte issue time + dictionary id +
   payload) + 22). Django's value is computed for real with django.core.signing.dumps as
   ``signed_cookies`` calls it; Starlette's with itsdangerous' TimestampSigner over
   base64(json.dumps(session)), as its SessionMiddleware writes it.
3. The cost of dumps for the login session: a model of format 2's dumps (orjson, compress,
   header, base64url, a keyed BLAKE2b-128 tag) with and without the compress call.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import json
import statistics
import struct
import sys
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pybase64
import zstandard

from blake2sign_web import dictionaries

from .timing import Timing, format_time, machine, measure, progress

ROOT = Path(__file__).resolve().parents[2]
SECRET = "benchmark-secret-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJ"
LEVELS = (1, 3, 9, 19)
KINDS = ("django_login", "django_login_messages", "django_login_csrf", "starlette_typical", "cart")
#: Seeds of the measured sessions: none is the training seed (1) or the search's (1_000_003).
SEED = 2_026_112_2
FORMAT = zstandard.FORMAT_ZSTD1_MAGICLESS
FRAME = {"format": FORMAT, "write_content_size": True, "write_checksum": False, "write_dict_id": False}
_ISSUED = struct.Struct(">I")


def corpus() -> Any:
    """scripts/session_corpus.py, which is a script, not part of the package."""
    spec = importlib.util.spec_from_file_location("session_corpus", ROOT / "scripts" / "session_corpus.py")
    if spec is None or spec.loader is None:
        raise RuntimeError("scripts/session_corpus.py not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules["session_corpus"] = module
    spec.loader.exec_module(module)
    return module


def compressor(dictionary: bytes | None, level: int) -> zstandard.ZstdCompressor:
    """A prebuilt compressor; with a dictionary, its tables precomputed for the level."""
    if dictionary is None:
        return zstandard.ZstdCompressor(
            compression_params=zstandard.ZstdCompressionParameters.from_level(level, **FRAME)
        )
    params = zstandard.ZstdCompressionParameters.from_level(level, source_size=512, dict_size=len(dictionary), **FRAME)
    compiled = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_FULLDICT)
    compiled.precompute_compress(compression_params=params)
    return zstandard.ZstdCompressor(dict_data=compiled, compression_params=params)


def check_round_trip(dictionary: bytes, samples: list[bytes], compress: Callable[[bytes], bytes]) -> None:
    decompressor = zstandard.ZstdDecompressor(
        dict_data=zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_FULLDICT), format=FORMAT
    )
    for sample in samples:
        if decompressor.decompress(compress(sample)) != sample:
            raise RuntimeError("round trip failed")


def sizes_and_times(dictionary: bytes, sets: dict[str, list[bytes]], repeat: int) -> str:
    lines = [
        "### Median compressed payload per kind (bytes) and one compress call (median time)",
        "",
        "| kind | JSON | "
        + " | ".join(f"L{level} dict" for level in LEVELS)
        + " | "
        + " | ".join(f"L{level} none" for level in LEVELS)
        + " |",
        "|---|---:|" + "---:|" * (2 * len(LEVELS)),
    ]
    for kind, samples in sets.items():
        median_sample = sorted(samples, key=len)[len(samples) // 2]
        cells = []
        for use in (dictionary, None):
            for level in LEVELS:
                comp = compressor(use, level)
                if use is not None:
                    check_round_trip(use, samples[:50], comp.compress)
                size = statistics.median(len(comp.compress(sample)) for sample in samples)
                timing = measure(
                    f"{kind} L{level} {'dict' if use else 'none'}",
                    partial(comp.compress, median_sample),
                    repeat=repeat,
                    target=0.1,
                )
                cells.append(f"{size:.0f} B, {format_time(timing.median)}")
        lines.append(f"| {kind} | {statistics.median(map(len, samples)):.0f} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "L = zstd level; dict = with the session dictionary; none = without. Each timed compress is one",
        "call on the kind's median-sized payload.",
        "",
    ]
    return "\n".join(lines)


def format2_length(payload: bytes, comp: zstandard.ZstdCompressor) -> int:
    """Estimate: 1 marker + base64url(issue time + dictionary id + frame, or issue time + payload) + 22."""
    body = min(4 + 1 + len(comp.compress(payload)), 4 + len(payload))
    return 1 + (body * 8 + 5) // 6 + 22


def token_length(session: dict[str, Any], dictionary_id: int | None) -> int:
    """A real format-2 token's length, written as the session adapters write it."""
    from blake2sign_web import SerializerSigner

    signer = _signers.get(dictionary_id)
    if signer is None:
        signer = _signers[dictionary_id] = SerializerSigner(
            SECRET, purpose="benchmark", dictionary=dictionary_id, compression_threshold=128
        )
    return len(signer.dumps(session))


_signers: dict[int | None, Any] = {}
#: The shipped id being measured, or None for a dictionary file the package does not ship (estimated).
REAL_TOKENS: dict[str, int | None] = {"id": None}


def django_value(session: dict[str, Any]) -> int:
    from django.contrib.sessions.serializers import JSONSerializer
    from django.core import signing

    salt = "django.contrib.sessions.backends.signed_cookies"
    return len(signing.dumps(session, salt=salt, compress=True, serializer=JSONSerializer))


def starlette_value(session: dict[str, Any]) -> int:
    import itsdangerous

    signer = itsdangerous.TimestampSigner(SECRET)
    return len(signer.sign(base64.b64encode(json.dumps(session).encode("utf-8"))))


def cookie_table(
    title: str,
    sessions: list[dict[str, Any]],
    comp: zstandard.ZstdCompressor,
    theirs: Callable[[dict[str, Any]], int],
    name: str,
) -> tuple[str, float, float]:
    real = REAL_TOKENS["id"]
    if real is not None:
        ours = [token_length(session, None if real == 0 else real) for session in sessions]
    else:
        ours = [format2_length(orjson.dumps(session), comp) for session in sessions]
    other = [theirs(session) for session in sessions]
    ratios = [a / b for a, b in zip(ours, other, strict=True)]
    mean, worst = statistics.mean(ratios), max(ratios)
    text = (
        f"| {title} | {len(sessions)} | {statistics.mean(ours):.1f} | {statistics.mean(other):.1f} | "
        f"{mean:.1%} | {statistics.median(ratios):.1%} | {worst:.1%} | {sum(r > 0.60 for r in ratios)} |"
    )
    progress(f"  {title} vs {name}: mean ratio {mean:.3f}, max {worst:.3f}")
    return text, mean, worst


def cookies(module: Any, dictionary: bytes, level: int, count: int) -> str:
    comp = compressor(dictionary, level)
    plain = compressor(None, level)
    lines = [
        f"### Cookie value length: format 2 with the dictionary (level {level} if estimated) against the others",
        "",
        "| sessions | n | ours (chars) | theirs (chars) | mean ratio | median | max | over 60% |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = (
        ("logged-in Django (mix) vs signed_cookies", "django_session", django_value),
        ("Django login (3 keys) vs signed_cookies", "django_login", django_value),
        ("Django login + messages vs signed_cookies", "django_login_messages", django_value),
        ("Django login + CSRF vs signed_cookies", "django_login_csrf", django_value),
        ("typical Starlette vs SessionMiddleware", "starlette_typical", starlette_value),
        ("Starlette (mix) vs SessionMiddleware", "starlette_session", starlette_value),
    )
    for n, (title, kind, theirs) in enumerate(rows):
        sessions = module.sessions(kind, seed=SEED + 100 + n, count=count, pools="evaluation")
        lines.append(cookie_table(title, sessions, comp, theirs, kind)[0])
    sessions = module.sessions("django_session", seed=SEED + 100, count=count, pools="evaluation")
    shipped, REAL_TOKENS["id"] = REAL_TOKENS["id"], 0 if REAL_TOKENS["id"] is not None else None
    lines.append(cookie_table("logged-in Django, no dictionary", sessions, plain, django_value, "django")[0])
    REAL_TOKENS["id"] = shipped
    how = (
        "ours = real format-2 tokens (SerializerSigner, 16-byte tag, as the session adapters write them)."
        if shipped is not None
        else "ours = 1 + base64url(4 + 1 + frame, or 4 + payload) + 22 (estimated: not a shipped dictionary)."
    )
    lines += ["", how, ""]
    return "\n".join(lines)


def interleaved(candidates: dict[str, Callable[[], object]], rounds: int, number: int = 20_000) -> list[Timing]:
    """Time every candidate once per round, round after round, so load on the machine hits all alike."""
    runs: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, func in candidates.items():
            runs[name].append(timeit.timeit(func, number=number) / number)
    results = [Timing(name, min(times), statistics.median(times)) for name, times in runs.items()]
    for r in results:
        progress(f"  {r.name}: best {format_time(r.best)}, median {format_time(r.median)}")
    return results


def dumps_cost(module: Any, dictionary: bytes, rounds: int) -> str:
    session = module.sessions("django_login", seed=SEED + 200, count=1, pools="evaluation")[0]
    payload = orjson.dumps(session)
    key = hashlib.blake2b(key=b"k" * 64, digest_size=16)
    header = _ISSUED.pack(1_795_000_000)

    def seal(body: bytes, marker: bytes) -> bytes:
        text = marker + pybase64.b64encode(header + body, b"-_").rstrip(b"=")
        state = key.copy()
        state.update(text)
        return text + pybase64.b64encode(state.digest(), b"-_").rstrip(b"=")

    candidates: dict[str, Callable[[], object]] = {
        "orjson.dumps alone": lambda: orjson.dumps(session),
        "model dumps, uncompressed": lambda: seal(orjson.dumps(session), b"0"),
    }
    for level in (1, 2, 3):
        comp = compressor(dictionary, level)
        candidates[f"compress call, dictionary, level {level}"] = partial(comp.compress, payload)
        candidates[f"model dumps, dictionary, level {level}"] = partial(
            lambda c: seal(c.compress(orjson.dumps(session)), b"2"), comp
        )
    today = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters.from_level(15, source_size=256, **FRAME)
    )
    candidates["compress call, no dictionary, level 15 (format 1 today)"] = partial(today.compress, payload)
    candidates["compress call, 1-byte input, dictionary, level 1"] = partial(compressor(dictionary, 1).compress, b"x")
    reader = zstandard.ZstdDecompressor(
        dict_data=zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_FULLDICT), format=FORMAT
    )
    candidates["decompress, dictionary (level 3 frame)"] = partial(
        reader.decompress, compressor(dictionary, 3).compress(payload)
    )
    plain_reader = zstandard.ZstdDecompressor(format=FORMAT)
    candidates["decompress, no dictionary (level 15 frame)"] = partial(plain_reader.decompress, today.compress(payload))
    rows = interleaved(candidates, rounds)
    base = rows[1]
    lines = [
        f"### dumps cost, Django login session ({len(payload)} bytes of JSON), {rounds} interleaved rounds",
        "",
        "| | best | median | median vs model dumps uncompressed |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r.name} | {format_time(r.best)} | {format_time(r.median)} | {r.median / base.median:.2f}x |" for r in rows
    ]
    lines += [
        "",
        "model dumps = orjson.dumps + 4-byte header + pybase64 base64url + keyed BLAKE2b-128 tag + base64url,"
        " as blake2sign_web's signer writes format 1 today, with a 16-byte tag.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer sessions and repeats")
    parser.add_argument("--dictionary-id", type=int, default=dictionaries.SESSION)
    parser.add_argument("--dictionary", type=Path, help="a dictionary file instead of a shipped id")
    parser.add_argument("--level", type=int, default=3, help="level for the cookie-length table (default 3)")
    parser.add_argument("--only", choices=["sizes", "cookies", "dumps"], help="run one section")
    args = parser.parse_args()
    from django.conf import settings

    if not settings.configured:
        settings.configure(SECRET_KEY=SECRET)
    dictionary = args.dictionary.read_bytes() if args.dictionary else dictionaries.data(args.dictionary_id)
    if not args.dictionary:
        REAL_TOKENS["id"] = args.dictionary_id
    count, repeat = (100, 3) if args.quick else (600, 7)
    module = corpus()
    sets = {kind: module.payloads(kind, seed=SEED + n, count=count, pools="evaluation") for n, kind in enumerate(KINDS)}
    print(f"## Session dictionary ({len(dictionary)} bytes, sha256 {hashlib.sha256(dictionary).hexdigest()[:16]}...)\n")
    print(f"Machine: {machine()}; zstandard {zstandard.__version__} (libzstd {zstandard.ZSTD_VERSION}).\n")
    if args.only in (None, "sizes"):
        print(sizes_and_times(dictionary, sets, repeat))
    if args.only in (None, "cookies"):
        print(cookies(module, dictionary, args.level, max(count, 500)))
    if args.only in (None, "dumps"):
        print(dumps_cost(module, dictionary, 5 if args.quick else 15))


if __name__ == "__main__":
    main()
