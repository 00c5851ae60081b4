"""The performance page's answer first: one table and one chart of the headline ratios, ours / the incumbent.

Read-only over ``results.json``'s targets (computed by :mod:`.targets` from the parts): what our session adds to
a read and to a read+write, as a fraction of what Django's ``signed_cookies`` and Starlette's
``SessionMiddleware`` add, counted in process and on a server worker (callgrind's instructions) and timed over
HTTP (the worker's CPU), each with its spread and the date and machine of the part that measured it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .formatting import fmt
from .svg import Bar, Panel, chart
from .targets import DJANGO_OURS, DJANGO_THEIRS, LABELS, STARLETTE_OURS, STARLETTE_THEIRS, TITLES

CHART = "img/headline.svg"
#: (framework, ours, theirs, how the row names the pair).
PAIRS = [
    ("django", DJANGO_OURS, DJANGO_THEIRS, "our engine and middleware against `signed_cookies`"),
    ("starlette", STARLETTE_OURS, STARLETTE_THEIRS, "our `SessionMiddleware` against Starlette's"),
]
#: (target row's "where", the part that measured it, column heading, the chart's panel title).
INSTRUMENTS = [
    ("callgrind, in process", "callgrind", "in process: instructions", "In process: instructions (callgrind)"),
    (
        "callgrind, server worker",
        "callgrind",
        "on a server worker: instructions",
        "On a server worker (gunicorn, uvicorn): instructions (callgrind)",
    ),
    ("clock, HTTP (1 connection)", "requests", "over HTTP: the worker's CPU", "Over HTTP: the worker's CPU (clock)"),
]
WORKLOADS = ("read", "write")


def _found(data: dict[str, Any], where: str, framework: str, ours: str, theirs: str, workload: str) -> dict[str, Any]:
    for t in data.get("targets", []):
        if (t["where"], t["framework"], t["ours"], t["theirs"], t["workload"]) == (
            where,
            framework,
            ours,
            theirs,
            workload,
        ):
            return dict(t)
    return {}


def _noisy(t: dict[str, Any]) -> bool:
    return str(t.get("verdict", "")).startswith("noisy")


def _cell(t: dict[str, Any]) -> str:
    if t.get("median") is None:
        return "not measured"
    spread = "" if t.get("low") is None else f" ({fmt(t['low'])}-{fmt(t['high'])})"
    return f"**{fmt(t['median'])}**{spread}" + (" noisy" if _noisy(t) else "")


def measured_on(data: dict[str, Any]) -> str:
    """The machine and date of each instrument's part (once when they agree)."""
    seen: dict[tuple[str, str], list[str]] = {}
    for part, name in (("callgrind", "instructions"), ("requests", "the HTTP run")):
        p = data.get("parts", {}).get(part)
        if p:
            date = str(p.get("date", "?"))
            mach = str(p.get("machine", "?")).removesuffix(f", {date}")  # timing.machine() ends with the date
            seen.setdefault((mach, date), []).append(name)
    return "; ".join(f"{mach}, {date} ({' and '.join(names)})" for (mach, date), names in seen.items())


def section(data: dict[str, Any]) -> list[str]:
    """The table and the chart, for the top of the page (nothing when the run has none of these rows)."""
    rows = []
    for framework, ours, theirs, _ in PAIRS:
        for workload in WORKLOADS:
            cells = [_cell(_found(data, where, framework, ours, theirs, workload)) for where, *_ in INSTRUMENTS]
            rows.append(f"| {TITLES[framework]} | {LABELS[workload]} | " + " | ".join(cells) + " |")
    if all("not measured" in row for row in rows):
        return []
    quick = any(data.get("parts", {}).get(p, {}).get("settings", {}).get("quick") for p in ("callgrind", "requests"))
    return [
        "What a session adds to one request, **ours as a fraction of the incumbent's** (lower is better): 0.40 "
        "means our session adds 40% of the instructions, or CPU time, that the incumbent adds to the same request. "
        + "; ".join(f"{TITLES[f]}: {pair}" for f, _, _, pair in PAIRS)
        + ". A login-sized session; *read-only* reads it, *read+write* also writes it, so the cookie is signed and "
        "sent again. Medians, with the range of callgrind's repeats (min-max) or the quartiles of the HTTP rounds "
        "(q1-q3).",
        "",
        "| framework | request | " + " | ".join(col for _, _, col, _ in INSTRUMENTS) + " |",
        "|---|---|" + "---:|" * len(INSTRUMENTS),
        *rows,
        "",
        f"Measured on {measured_on(data)}."
        + (" **Quick smoke run: no figure here is to be quoted.**" if quick else "")
        + " Instructions repeat to a fraction of a percent whatever else the machine runs; the clock on this shared "
        "machine does not, which is why the HTTP column's spread is wide and a row marked *noisy* settles nothing.",
        "",
        f"![Ours / the incumbent, by instrument: {measured_on(data)}]({CHART})",
        "",
    ]


def svg(data: dict[str, Any]) -> str:
    panels = []
    for where, _, _, title in INSTRUMENTS:
        bars = []
        for framework, ours, theirs, _ in PAIRS:
            for workload in WORKLOADS:
                t = _found(data, where, framework, ours, theirs, workload)
                if t.get("median") is None:
                    continue
                text = fmt(t["median"]) + ("" if t.get("low") is None else f" ({fmt(t['low'])}-{fmt(t['high'])})")
                bars.append(
                    Bar(
                        f"{TITLES[framework]}, {LABELS[workload]}",
                        float(t["median"]),
                        t.get("low"),
                        t.get("high"),
                        text + (" noisy" if _noisy(t) else ""),
                        ours=True,
                    )
                )
        if bars:
            panels.append(Panel(title, bars, reference=1.0, reference_label="1 = as much as the incumbent"))
    return chart(
        "headline",
        "What our sessions add to a request, as a fraction of what the incumbent's add",
        "Ratios of added cost, ours over Django signed_cookies and Starlette SessionMiddleware, read and read+write, "
        f"by instrument; lower is better. {measured_on(data)}.",
        panels,
        same_scale=True,
    )


def write_chart(data: dict[str, Any], out: Path) -> Path | None:
    """``<out>/img/headline.svg``, or None when there is nothing to draw."""
    if not section(data):
        return None
    path = out / CHART
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg(data) + "\n")
    return path
