"""Train the session dictionary that ships as blake2sign_web/dictionaries/session-<id>.zdict.

python3 scripts/train_dictionary.py                    # rebuild session-1.zdict byte for byte
python3 scripts/train_dictionary.py --output /tmp/x.zdict
python3 scripts/train_dictionary.py --search           # sweep sizes and parameters, print a table

The corpus is scripts/session_corpus.py's training mix with ``--seed``. Training is zstd's
fastCover (python-zstandard's ``train_dictionary``) with fixed parameters and one thread, which
is deterministic: the same seed, parameters and libzstd give the same bytes. ``--search`` chose
those parameters: it trains each candidate on the training seed and measures it on sessions made
with another seed from the evaluation pools (names, domains, hosts, messages and backends the
training corpus never holds), compressing each payload alone as the signer does.

A shipped dictionary never changes. To ship a better one, train it to a new file with a new id
and add it to blake2sign_web.dictionaries.FILES (docs/dictionaries.md).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path

import zstandard
from session_corpus import payloads

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "blake2sign_web" / "dictionaries" / "session-1.zdict"

#: What session-1.zdict was trained with; --search's winner (docs/dictionaries.md has the table).
SEED = 1
COUNT = 20_000
SIZE = 8192
K = 400
D = 6
#: The seed of the evaluation corpus; never the training seed.
EVALUATION_SEED = 1_000_003
#: Frames as blake2sign_web writes them: no magic number, dictionary id or checksum.
FRAME = {"write_content_size": True, "write_checksum": False, "write_dict_id": False}


def train(seed: int = SEED, count: int = COUNT, size: int = SIZE, k: int = K, d: int = D) -> bytes:
    """The dictionary's bytes: fastCover on ``count`` training sessions made with ``seed``."""
    samples = payloads("mix", seed=seed, count=count)
    return zstandard.train_dictionary(size, samples, k=k, d=d, threads=1).as_bytes()


def compressed_sizes(dictionary: bytes | None, samples: list[bytes], level: int = 3) -> list[int]:
    """Each sample's size compressed alone, as a magic-less frame."""
    params = {"format": zstandard.FORMAT_ZSTD1_MAGICLESS, **FRAME}
    if dictionary is None:
        compressor = zstandard.ZstdCompressor(
            compression_params=zstandard.ZstdCompressionParameters.from_level(level, **params)
        )
    else:
        compiled = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_FULLDICT)
        compiled.precompute_compress(level=level)
        compressor = zstandard.ZstdCompressor(
            dict_data=compiled,
            compression_params=zstandard.ZstdCompressionParameters.from_level(level, **params),
        )
    return [len(compressor.compress(sample)) for sample in samples]


def evaluation_sets(seed: int = EVALUATION_SEED, count: int = 1000) -> dict[str, list[bytes]]:
    """Held-out sessions: another seed and the evaluation pools."""
    kinds = ("django_login", "django_session", "starlette_typical", "starlette_session", "cart")
    return {kind: payloads(kind, seed=seed + n, count=count, pools="evaluation") for n, kind in enumerate(kinds)}


def search(seed: int, count: int) -> None:
    held_out = evaluation_sets()
    kinds = list(held_out)
    print(f"training: {count} sessions, seed {seed}; evaluation: {len(kinds)} x 1000 sessions, other seed and pools")
    print("mean compressed bytes per payload at level 3 (lower is better); 'all' is the mean over the five sets\n")
    print("| size | k | d | " + " | ".join(kinds) + " | all | train s |")
    print("|---:|---:|---:|" + "---:|" * (len(kinds) + 2))
    base = {kind: statistics.mean(compressed_sizes(None, samples)) for kind, samples in held_out.items()}
    print(
        "| none | | | "
        + " | ".join(f"{base[kind]:.1f}" for kind in kinds)
        + f" | {statistics.mean(base.values()):.1f} | |"
    )
    samples = payloads("mix", seed=seed, count=count)
    for size in (1024, 2048, 4096, 8192, 16384):
        candidates = [{"k": k, "d": d} for k in (50, 100, 200, 400, 800, 1500) for d in (6, 8) if k <= size]
        candidates.append({"steps": 40, "threads": 2})  # zstd's own optimisation, on its own split
        for params in candidates:
            started = time.perf_counter()
            trained = zstandard.train_dictionary(size, samples, **params)
            elapsed = time.perf_counter() - started
            means = {kind: statistics.mean(compressed_sizes(trained.as_bytes(), held_out[kind])) for kind in kinds}
            cells = " | ".join(f"{means[kind]:.1f}" for kind in kinds)
            label = f"{trained.k} | {trained.d}" + (" (optimised)" if "steps" in params else "")
            print(f"| {size} | {label} | {cells} | {statistics.mean(means.values()):.1f} | {elapsed:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SEED, help=f"training corpus seed (default {SEED})")
    parser.add_argument("--count", type=int, default=COUNT, help=f"training sessions (default {COUNT})")
    parser.add_argument("--size", type=int, default=SIZE, help=f"dictionary size in bytes (default {SIZE})")
    parser.add_argument("-k", type=int, default=K, help=f"fastCover segment size (default {K})")
    parser.add_argument("-d", type=int, default=D, help=f"fastCover dmer size (default {D})")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the dictionary")
    parser.add_argument("--search", action="store_true", help="sweep sizes and parameters on held-out data")
    args = parser.parse_args()
    if args.search:
        search(args.seed, args.count)
        return
    dictionary = train(args.seed, args.count, args.size, args.k, args.d)
    args.output.write_bytes(dictionary)
    digest = hashlib.sha256(dictionary).hexdigest()
    print(f"{args.output}: {len(dictionary)} bytes, sha256 {digest}", file=sys.stderr)


if __name__ == "__main__":
    main()
