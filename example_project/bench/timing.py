"""Shared measuring and reporting: best-of and median timings, ratios, spread marks.

Machines here are shared and noisy, so every figure is the best (and the median) of
several repeats of many calls, and a row whose repeats spread too widely is marked
rather than trusted.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: A row whose median exceeds its best by more than this fraction is marked "~".
SPREAD_LIMIT = 0.15


@dataclass(frozen=True)
class Timing:
    name: str
    best: float  # seconds per call
    median: float
    size: int | None = None  # bytes on the wire, where that means something

    @property
    def spread(self) -> float:
        return self.median / self.best - 1


#: False while ``python -m example_project.bench`` draws its progress bar: the parts then print nothing.
VERBOSE = True


def progress(message: str) -> None:
    if VERBOSE:
        print(message, file=sys.stderr, flush=True)


def measure(
    name: str, func: Callable[[], object], *, repeat: int = 7, target: float = 0.2, size: int | None = None
) -> Timing:
    """Time ``func``: calibrate a call count filling ``target`` seconds, then repeat."""
    timer = timeit.Timer(func)
    number, _ = timer.autorange()
    number = max(1, int(number * target / 0.2))
    runs = [t / number for t in timer.repeat(repeat=repeat, number=number)]
    result = Timing(name, min(runs), statistics.median(runs), size)
    progress(f"  {name}: best {format_time(result.best)}, median {format_time(result.median)}")
    return result


def format_time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} us"


def machine() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )


def table(title: str, rows: Sequence[Timing], baseline: str) -> str:
    """A Markdown table: best, median, ratio against ``baseline`` (by best), spread mark."""
    base = next(r for r in rows if r.name == baseline)
    with_size = any(r.size is not None for r in rows)
    head = "| | best | median | vs " + baseline + " |" + (" size |" if with_size else "")
    lines = [f"### {title}", "", head, "|---|---:|---:|---:|" + ("---:|" if with_size else "")]
    for r in rows:
        mark = " ~" if r.spread > SPREAD_LIMIT else ""
        ratio = base.best / r.best
        cell = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
        if r is base:
            cell = "baseline"
        size = f" {r.size} B |" if with_size and r.size is not None else (" |" if with_size else "")
        lines.append(f"| {r.name} | {format_time(r.best)}{mark} | {format_time(r.median)} | {cell} |{size}")
    lines += ["", f"~ marks a row whose median is more than {SPREAD_LIMIT:.0%} above its best (noisy).", ""]
    return "\n".join(lines)
