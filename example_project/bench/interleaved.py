"""Interleaved rounds: every configuration timed once per round, in rotating order, many rounds.

A shared machine drifts (frequency, caches, a neighbour's load) on the scale of
seconds; timing one configuration after another lets that drift land on one of
them. Here each round times every configuration back to back, so a drift hits all
of them alike, and a configuration's cost *added* over the baseline is taken per
round (paired), then summarised by its median and interquartile range. Ratios
between two configurations are taken per round too, and a ratio whose quartiles
straddle its target, or whose spread is too wide, gets no verdict. As ``timeit`` does, the
garbage collector is run before each block and kept off during it, so that a collection
triggered by one configuration's garbage is not billed to whichever runs next.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .timing import format_time, progress

#: A ratio whose interquartile range exceeds this fraction of its target is too noisy to judge.
NOISE_LIMIT = 0.25


@dataclass(frozen=True)
class Quartiles:
    q1: float
    median: float
    q3: float

    @classmethod
    def of(cls, values: list[float]) -> Quartiles:
        q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return cls(q1, median, q3)


def calibrate(func: Callable[[], object], block: float) -> int:
    """Calls of ``func`` that fill about ``block`` seconds (at least 10)."""
    number = 10
    while True:
        start = time.perf_counter()
        for _ in range(number):
            func()
        elapsed = time.perf_counter() - start
        if elapsed >= block / 4:
            return max(10, int(number * block / elapsed))
        number *= 4


def run_rounds(
    configs: Mapping[str, Callable[[], object]],
    *,
    rounds: int,
    block: float,
    tick: Callable[[], object] | None = None,
    gc_off: bool = True,
) -> dict[str, list[float]]:
    """Seconds per call of each configuration, one value per round; ``tick()`` after each block.

    ``gc_off=False`` leaves the garbage collector running, as it does in a server.
    """
    numbers = {name: calibrate(func, block) for name, func in configs.items()}
    names = list(configs)
    results: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            func, number = configs[name], numbers[name]
            if gc_off:
                gc.collect()
                gc.disable()
            try:
                start = time.perf_counter()
                for _ in range(number):
                    func()
                elapsed = time.perf_counter() - start
            finally:
                if gc_off:
                    gc.enable()
            results[name].append(elapsed / number)
            if tick is not None:
                tick()
        if tick is None:
            progress(f"  round {round_index + 1}/{rounds}")
    return results


def added(results: Mapping[str, list[float]], name: str, baseline: str) -> list[float]:
    """Per-round cost ``name`` adds over ``baseline``."""
    return [t - b for t, b in zip(results[name], results[baseline], strict=True)]


def ratio(results: Mapping[str, list[float]], ours: str, theirs: str, baseline: str) -> Quartiles:
    """Per-round ratio of the costs ``ours`` and ``theirs`` add over ``baseline``."""
    mine, other = added(results, ours, baseline), added(results, theirs, baseline)
    return Quartiles.of([m / o for m, o in zip(mine, other, strict=True) if o > 0])


def verdict(quartiles: Quartiles, target: float) -> str:
    """'met' only when even the upper quartile is within the target; no verdict when noisy.

    Noise is judged on the scale of the target: quartiles 0.05-0.07 decide a 0.10 target
    as surely as 0.40-0.42 decide a 0.45 one.
    """
    if quartiles.q3 - quartiles.q1 > NOISE_LIMIT * target:
        return "noisy: no verdict"
    if quartiles.q3 <= target:
        return "met"
    if quartiles.q1 > target:
        return "MISSED"
    return "not met (within noise of the target)"


def cost_table(results: Mapping[str, list[float]], baseline: str, sizes: Mapping[str, int | None]) -> str:
    """Markdown: per request, added over the baseline (median and quartiles), cookie value size."""
    lines = [
        "| | per request (median) | added (median) | added (q1-q3) | cookie value |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, times in results.items():
        per_request = format_time(statistics.median(times))
        size = sizes.get(name)
        size_text = f"{size} B" if size is not None else ""
        if name == baseline:
            lines.append(f"| {name} | {per_request} | baseline | | {size_text} |")
            continue
        q = Quartiles.of(added(results, name, baseline))
        lines.append(
            f"| {name} | {per_request} | {format_time(q.median)} | "
            f"{format_time(q.q1)} - {format_time(q.q3)} | {size_text} |"
        )
    return "\n".join(lines)
