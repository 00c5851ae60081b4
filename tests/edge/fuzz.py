"""Differential fuzz cases for the edge verifiers: requests made by mutating valid links, with the reference
verifier's decision on each, in the vectors file's schema so that every runner reads them alike.

``python -m tests.edge.fuzz --count 100000 --out cases.json`` writes a long run's file; the tests use a few
thousand (``conftest.fuzz_cases``). A mutation keeps the request plausible for a front server (an ASCII target
starting with "/"), so most cases reach the MAC, the times and the folder rules rather than the first check.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from blake2sign_web.edge.reference import KeyringSigner, Request, decide
from blake2sign_web.edge.vectors import HOUR, NOW, cases, keyrings_made, vector

_HEX = "0123456789ABCDEF"
_TIMES = (0, 1, -1, 59, -59, 61, -61, 600, -600, HOUR - 1, HOUR, HOUR + 1, 2 * HOUR, -HOUR)
_PIECES = (
    "/./",
    "/../",
    "/%2E%2E/",
    "/%2e/",
    "//",
    "%2F",
    "%2f",
    "%5C",
    "\\",
    "%00",
    "%FF",
    "%C3%A9",
    "%252E",
    ";",
    "%",
    "%G1",
    "+",
    "%20",
    "~",
    "%7E",
    "%7e",
    "é",
    "/x",
    "a",
    ".",
    "..",
)
_PARAMS = (
    "expires",
    "starts",
    "kid",
    "signature",
    "prefix",
    "once",
    "group",
    "issued",
    "disposition",
    "filename",
    "consume",
    "utm_source",
    "fbclid",
    "v1",
    "v12",
    "sig",
    "exp",
    "dir",
    "k",
    "x",
    "%65xpires",
    "sign%61ture",
)


def _mutate_target(rng: random.Random, target: str) -> str:
    path, question, query = target.partition("?")
    choice = rng.randrange(14)
    if choice == 0 and len(path) > 1:  # percent-encode a character of the path
        i = rng.randrange(1, len(path))
        char = path[i]
        code = f"%{ord(char):02X}" if ord(char) < 128 else char
        return path[:i] + (code.lower() if rng.random() < 0.3 else code) + path[i + 1 :] + question + query
    slashes = [i for i, c in enumerate(path) if c == "/"]
    if choice == 1 and slashes:  # put a piece in place of a slash of the path
        i = rng.choice(slashes)
        return path[:i] + rng.choice(_PIECES) + path[i + 1 :] + question + query
    if choice == 2:  # insert a piece anywhere in the path
        i = rng.randrange(1, len(path) + 1)
        return path[:i] + rng.choice(_PIECES) + path[i:] + question + query
    pairs = query.split("&") if query else []
    if choice == 3 and pairs:  # duplicate a pair
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(pairs))
    elif choice == 4 and pairs:  # reorder
        rng.shuffle(pairs)
    elif choice == 5 and pairs:  # drop a pair
        pairs.pop(rng.randrange(len(pairs)))
    elif choice == 6:  # add a pair
        name = rng.choice(_PARAMS)
        value = rng.choice(["", "1", str(NOW + HOUR), "AAAAAA", "%2Fvideos%2F", "a+b", "%C3%A9", "x" * 43])
        pairs.insert(rng.randrange(len(pairs) + 1), f"{name}={value}")
    elif choice == 7 and pairs:  # change one character of a value
        i = rng.randrange(len(pairs))
        name, _, value = pairs[i].partition("=")
        if value:
            j = rng.randrange(len(value))
            value = value[:j] + rng.choice("A0_-%+z") + value[j + 1 :]
        pairs[i] = f"{name}={value}"
    elif choice == 8 and pairs:  # respell a name or value with escapes
        i = rng.randrange(len(pairs))
        text = pairs[i]
        j = rng.randrange(len(text)) if text else 0
        if text and text[j].isalnum():
            text = text[:j] + f"%{ord(text[j]):02X}" + text[j + 1 :]
        pairs[i] = text
    elif choice == 9 and pairs:  # decode the escapes of a value
        i = rng.randrange(len(pairs))
        pairs[i] = pairs[i].replace("%2F", "/").replace("%2f", "/").replace("%20", "+")
    elif choice == 10:  # an empty field, a field without "="
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(["", "x", "=", "=y"]))
    elif choice == 11:  # a fragment
        return target + "#" + rng.choice(["", "t=5", "a&signature=x"])
    elif choice == 12 and pairs:  # change case of a path letter
        letters = [i for i, c in enumerate(path) if c.isalpha()]
        if letters:
            i = rng.choice(letters)
            path = path[:i] + path[i].swapcase() + path[i + 1 :]
    elif choice == 13:  # move the whole query to another file or folder
        path = rng.choice(["/videos/12/x.ts", "/videos/13/x.ts", "/files/report.pdf", "/", "/videos/12/", "/media/v/a"])
    return path + ("?" + "&".join(pairs) if pairs or question else "")


def _mutate_cookie(rng: random.Random, cookie: str | None, pool: list[str]) -> str | None:
    choice = rng.randrange(8)
    if choice == 0:
        return None
    if choice == 1 and pool:  # another request's cookies instead, or beside
        other = rng.choice(pool)
        return other if rng.random() < 0.5 or not cookie else f"{cookie}; {other}"
    if cookie is None:
        return cookie
    if choice == 2:
        return cookie.replace("__Secure-", "", 1)
    if choice == 3 and len(cookie) > 1:
        i = rng.randrange(len(cookie))
        return cookie[:i] + rng.choice("A0:=;% ") + cookie[i + 1 :]
    if choice == 4:
        return f"a=1; {cookie} ; b"
    if choice == 5:
        name, _, value = cookie.partition("=")
        return f"{name}={value}; {name}=x" if rng.random() < 0.5 else f"{name}=x; {name}={value}"
    return cookie


def _mutate_host(rng: random.Random, host: str) -> str:
    return rng.choice(
        [
            host,
            host.upper(),
            host + ":443",
            host + ":80",
            host + ":8443",
            "other.example",
            "",
            host.rstrip("0123456789:") if ":" in host else host + ":8080",
        ]
    )


def generate(seed: int, count: int, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """``count`` mutated requests (seeded), each with the reference verifier's verdict."""
    rng = random.Random(seed)
    rings = keyrings_made()
    signers = {name: KeyringSigner(ring) for name, ring in rings.items()}
    seeds = list(cases())
    cookies = [r.cookie for _, _, r, _ in seeds if r.cookie]
    vectors = []
    for index in range(count):
        name, ring, request, now = rng.choice(seeds)
        target, cookie, host, method = request.target, request.cookie, request.host, request.method
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            part = rng.randrange(10)
            if part < 6:
                target = _mutate_target(rng, target)
            elif part < 8:
                cookie = _mutate_cookie(rng, cookie, cookies)
            elif part == 8 and request.host:
                host = _mutate_host(rng, host)
            else:
                method = rng.choice(("GET", "GET", "HEAD", "POST"))
        if not target.isascii():  # a front server sees the bytes percent-encoded or refuses them
            target = target.encode().decode("ascii", "replace") if rng.random() < 0.1 else target.replace("é", "%C3%A9")
        now += rng.choice(_TIMES)
        mutated = Request(method, target, host, request.scheme, cookie)
        signer = signers[ring]
        signer._clock = lambda now=now: now
        vectors.append(vector(f"fuzz {seed}-{index} from {name}", ring, now, mutated, decide(signer, mutated)))
        if progress is not None and index % 10000 == 9999:
            progress(index + 1)
    return {
        "about": f"differential fuzz cases, seed {seed}",
        "keyrings": {n: r.to_json() for n, r in rings.items()},
        "vectors": vectors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    data = generate(args.seed, args.count, lambda n: print(f"{n} cases", file=sys.stderr))
    args.out.write_text(json.dumps(data))
    decisions = Counter(v["expect"]["decision"] for v in data["vectors"])
    print(f"{args.count} cases to {args.out}: {dict(decisions)}", file=sys.stderr)


if __name__ == "__main__":
    main()
