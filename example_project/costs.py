"""What the benchmark measured, for the pages: ``docs/benchmarks/results.json`` if it exists.

The panel at the foot of every page shows a visitor the figures that hold: the instructions each engine adds
to a request (callgrind: they repeat to a fraction of a percent) and the server CPU it adds over HTTP (the
clock: with its quartiles, so that its noise shows), ours highlighted, as a chart drawn here (inline SVG, no
JavaScript) with the numbers in a table beside it. One clock run in process, a median without its spread, is
not shown: on a shared machine it can rank engines in any order.

Everything is read tolerantly: a missing or unreadable file, or a shape this does not know, gives no figures
and a hint to run the benchmark. The file is parsed once per change, not once per page.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from example_project.bench.request_cost import DJANGO_BASELINE, STARLETTE_BASELINE
from example_project.bench.svg import Bar, Panel, chart

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "results.json"
HINT = "No benchmark results yet: run python -m example_project.bench"
BASELINES = {"django": DJANGO_BASELINE, "starlette": STARLETTE_BASELINE}
WORKLOADS = {"read": "read-only", "write": "read+write"}


def _version() -> tuple[Path, int, int] | None:
    """What tells one version of the results file from another: its path, modification time and size."""
    try:
        stat = RESULTS.stat()
    except OSError:
        return None
    return RESULTS, stat.st_mtime_ns, stat.st_size


def _results() -> dict[str, Any]:
    version = _version()
    return {} if version is None else _parsed(*version)


@functools.lru_cache(maxsize=4)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    """The JSON, once per version of the file (the key holds its time and size)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _median(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        for key in ("added_us_median", "median_us", "median", "added_us", "added"):
            if key in value:
                return _median(value[key])
    return None


def measured(framework: str) -> dict[str, dict[str, float]]:
    """{workload: {engine: median added microseconds}} for ``framework`` ("django" or "starlette"); {} if none."""
    data: Any = _results()
    if isinstance(data, dict) and isinstance(data.get("parts"), dict):  # schema 2: one JSON for every part
        data = data["parts"].get("requests")
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        data = data["results"]
    section = data.get(framework) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return {}
    table: dict[str, dict[str, float]] = {}
    for workload, engines in section.items():
        if not isinstance(engines, dict):
            continue
        row = {engine: m for engine, value in engines.items() if (m := _median(value)) is not None}
        if row:
            table[str(workload)] = row
    return table


def is_ours(engine: str) -> bool:
    return engine.startswith(("ours", "blake2sign_web"))


def instructions(framework: str, workload: str) -> dict[str, tuple[float, float, float]]:
    """{engine: (median, min, max) instructions added per request over the session-less one}, in process."""
    try:
        rows = _results()["parts"]["callgrind"]["in_process"][framework][workload]
        base = rows[BASELINES[framework]]["Ir"]
        added = {e: [a - b for a, b in zip(r["Ir"], base, strict=False)] for e, r in rows.items()}
    except (KeyError, TypeError, AttributeError):  # a shape this does not know: no figures
        return {}
    return {e: (statistics.median(v), min(v), max(v)) for e, v in added.items() if v and e != BASELINES[framework]}


def server_cpu(framework: str, workload: str) -> dict[str, tuple[float, float, float]]:
    """{engine: (median, q1, q3) microseconds of server CPU added per request over HTTP}."""
    try:
        rows = _results()["parts"]["requests"]["http"][framework][workload]
        return {
            e: (float(r["added_us_median"]), float(r["added_us_q1"]), float(r["added_us_q3"]))
            for e, r in rows.items()
            if e != r["baseline"]
        }
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}


#: How each kind of figure is printed: (divided by, unit).
UNITS = {"instructions": (1000.0, " k"), "cpu": (1.0, " µs")}


#: Said of a clock figure whose lower quartile is at or below zero.
NOISY = "noisy: its quartiles reach zero, so this run cannot tell that cost from none."


def _noisy(kind: str, low: float) -> bool:
    return kind == "cpu" and low <= 0


def _figure(kind: str, median: float, low: float, high: float, spread: bool = True) -> str:
    scale, unit = UNITS[kind]
    text = f"{median / scale:,.1f}{unit}" + (f" ({low / scale:,.1f} to {high / scale:,.1f})" if spread else "")
    return text + (" noisy" if _noisy(kind, low) else "")


def panel(framework: str, engines: Sequence[str], current: str) -> str:
    """The cost panel's HTML for the site's ``engines`` (benchmark names), ``current`` the one in use."""
    version = _version()
    return _panel(version, framework, tuple(engines), current) if version else f'<p id="bench-hint">{escape(HINT)}</p>'


@functools.lru_cache(maxsize=64)
def _panel(version: tuple[Path, int, int], framework: str, engines: tuple[str, ...], current: str) -> str:
    """Drawn once per version of the results file and engine in use: a page pays a ``stat``, not a chart."""
    figures = [
        ("instructions", w, instructions(framework, w), "Instructions added per {} request (callgrind)")
        for w in WORKLOADS
    ] + [("cpu", w, server_cpu(framework, w), "Server CPU added per {} request over HTTP (µs)") for w in WORKLOADS]
    panels, table = [], []
    for kind, workload, found, title in figures:
        bars = []
        for engine in engines:
            if engine not in found:
                continue
            median, low, high = found[engine]
            text = _figure(kind, median, low, high, spread=kind == "cpu")  # callgrind's range is too narrow to print
            label = engine + (" (in use)" if engine == current else "")
            bars.append(Bar(label, median, low, high, text, ours=is_ours(engine)))
        missing = [e for e in engines if e not in found]
        note = f"Not measured here: {', '.join(missing)}." if missing and bars else ""
        if any(_noisy(kind, found[e][1]) for e in engines if e in found):
            note = " ".join(filter(None, [note, NOISY.capitalize()]))
        if bars:
            panels.append(Panel(title.format(WORKLOADS[workload]), bars, note=note))
            table.append((kind, workload, found))
    if not panels:
        return f'<p id="bench-hint">{escape(HINT)}</p>'
    parts = _results().get("parts")
    parts = parts if isinstance(parts, dict) else {}
    svg = chart(
        f"cost-chart-{framework}",
        "What each session engine adds to a request",
        "Bars: the instructions each engine adds to a read-only and a read+write request (callgrind, in process; "
        "whiskers: the range of its repeats), and the server CPU it adds over HTTP (the median of the rounds; "
        "whiskers: the quartiles). Our engines in green, the others in grey. The table below gives every number.",
        panels,
        plot_width=260,
    )
    rows = "".join(
        f"<tr{' class=current' if engine == current else ''}><th scope=row>{escape(engine)}</th>"
        + "".join(
            f"<td>{_figure(kind, *found[engine])}</td>" if engine in found else "<td>not measured</td>"
            for kind, _, found in table
        )
        + "</tr>"
        for engine in engines
    )
    heads = "".join(
        f"<th scope=col>{'instructions' if kind == 'instructions' else 'server CPU, HTTP'}, {WORKLOADS[w]}</th>"
        for kind, w, _ in table
    )
    when = "; ".join(
        f"{name} {escape(str(parts[p].get('date', '?')))}"
        for p, name in (("callgrind", "instructions"), ("requests", "HTTP run"))
        if isinstance(parts.get(p), dict)
    )
    return (
        f'<figure class="cost-chart" id="cost-chart">{svg}<figcaption>What each engine adds to a request, as '
        f"the benchmark (<code>python -m example_project.bench</code>) measured it ({when}): instructions "
        "counted by callgrind (range of the repeats) and the server's CPU over HTTP (median, quartiles). "
        "Ours in green; lower is better.</figcaption></figure>"
        f'<details id="cost-numbers"><summary>The numbers</summary><table><tr><th scope=col>engine</th>{heads}</tr>'
        f"{rows}</table></details>"
    )
