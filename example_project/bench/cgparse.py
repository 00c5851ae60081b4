"""Read callgrind's output files: totals, each function's own cost and calls, grouped into kinds of work.

Only what the benchmark needs of the format (``--dump-instr=no``, positions are lines):
``events:`` and ``summary:`` give the dump's totals; a cost line after ``calls=`` is the inclusive
cost of that call, any other cost line belongs to the current function itself. Names may be
compressed as ``(id) name`` on first use and ``(id)`` after.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


@dataclass
class Dump:
    events: list[str]
    summary: list[int]
    #: (object file, function) -> its own cost, one value per event
    own: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    #: function -> how many times it was called within the dump
    calls: dict[str, int] = field(default_factory=dict)

    def total(self, event: str = "Ir") -> int:
        return self.summary[self.events.index(event)] if event in self.events else 0


def _name(value: str, table: dict[str, str]) -> str:
    match = _NAMED.match(value)
    if not match:
        return value
    key, name = match.groups()
    if name is not None:
        table[key] = name
    return table.get(key, f"({key})")


def parse(path: Path, names: dict[str, dict[str, str]] | None = None) -> Dump:
    """One callgrind.out file. ``names`` carries compressed names from file to file of one process."""
    tables = names if names is not None else {}
    for kind in ("ob", "fl", "fn"):
        tables.setdefault(kind, {})
    events: list[str] = []
    summary: list[int] = []
    own: dict[tuple[str, str], list[int]] = defaultdict(list)
    calls: dict[str, int] = defaultdict(int)
    ob = fn = cfn = ""
    pending_call = False
    with open(path) as stream:
        for raw in stream:
            line = raw.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if not events:
                    continue
                values = [int(v) for v in line.split()[1:]]
                if pending_call:
                    pending_call = False
                    continue  # inclusive cost of a call: not this function's own
                row = own[ob, fn]
                if len(row) < len(values):
                    row.extend([0] * (len(values) - len(row)))
                for i, v in enumerate(values):
                    row[i] += v
                continue
            key, _, value = line.partition("=")
            if key == "ob":
                ob = _name(value, tables["ob"])
            elif key == "fn":
                fn = _name(value, tables["fn"])
            elif key == "cfn":
                cfn = _name(value, tables["fn"])
            elif key == "cob":
                _name(value, tables["ob"])
            elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                _name(value, tables["fl"])
            elif key == "calls":
                calls[cfn] += int(value.split()[0])
                pending_call = True
            elif line.startswith("events:"):
                events = line.split(":", 1)[1].split()
            elif line.startswith("summary:"):
                summary = [int(v) for v in line.split(":", 1)[1].split()]
    summary += [0] * (len(events) - len(summary))
    return Dump(events, summary, dict(own), dict(calls))


#: Kinds of work, by the object file and C function the instructions ran in: the first that matches.
GROUPS: list[tuple[str, re.Pattern[str]]] = [
    ("hashing (BLAKE2, HMAC, SHA)", re.compile(r"blake2|blake3|hmac|sha1|sha2|sha256|sha512|_hashlib|libcrypto|evp_")),
    ("JSON (orjson, json)", re.compile(r"orjson|_json\.cpython|scanstring|scanner_|encoder_|py_encode_basestring")),
    ("compression (zstd)", re.compile(r"zstd|zstandard")),
    ("base64", re.compile(r"binascii|base64")),
    ("regular expressions", re.compile(r"\bsre_|_sre|sre_ucs|pattern_")),
    (
        "memory allocation",
        re.compile(r"malloc|\bfree\b|cfree|realloc|calloc|pymalloc|pyobject_free|obmalloc|_int_free|arena"),
    ),
    (
        "garbage collector",
        re.compile(r"gc_collect|\bgc_|visit_reachable|visit_decref|subtract_refs|update_refs|move_unreachable"),
    ),
    (
        "sockets, event loop, HTTP parser",
        re.compile(r"sock_|socket|epoll|select|uvloop|httptools|llhttp|\brecv|\bsend|__libc_write|__libc_read|_ssl"),
    ),
    ("libc string and memory copies", re.compile(r"libc\.so.*(mem|str)|__mem|__str")),
    ("interpreter (Python code)", re.compile(r"libpython|/bin/python|python3")),
]
OTHER = "other"


def group_of(ob: str, fn: str) -> str:
    text = f"{ob} {fn}".lower()
    for name, pattern in GROUPS:
        if pattern.search(text):
            return name
    return OTHER


def grouped(dump: Dump, event: str = "Ir") -> dict[str, int]:
    """Own cost per kind of work (they add up to the dump's total)."""
    index = dump.events.index(event)
    out: dict[str, int] = defaultdict(int)
    for (ob, fn), row in dump.own.items():
        if index < len(row):
            out[group_of(ob, fn)] += row[index]
    return dict(out)


#: C functions whose call means a session token was verified or decoded.
DECODING = re.compile(
    r"blake2b?_(?:update|final|compress|digest)|blake2b_impl|hmac|orjson.*loads|loads|ZSTD_decompress|binascii_a2b|b64decode|a2b_base64",
    re.I,
)


def decoding_calls(dump: Dump) -> dict[str, int]:
    """Calls within the dump of functions that only verifying or decoding a token needs."""
    return {fn: n for fn, n in dump.calls.items() if n and DECODING.search(fn)}
