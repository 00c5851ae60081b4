"""Horizontal bar charts with spread whiskers, as SVG text: the performance page's headline and the shops' panel.

Written by hand, not by matplotlib, so that the example sites can draw one per page without it and the page's
headline chart is small, sharp and diffable. Each bar carries its number as text beside the plot; the chart has
a ``<title>`` and a ``<desc>`` so that a screen reader says what it shows (the pages give the numbers in a table
too, since ``role="img"`` hides the SVG's own text from assistive technology).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

#: The colour of the bars that are ours, of the others, of their whiskers and of the reference line.
OURS, THEIRS, WHISKER, REFERENCE = "#1a7f37", "#9aa4b2", "#24292f", "#cf222e"
FONT = 12
ROW = 20
#: Width of one character at FONT px, regular and bold, wide enough for system-ui: labels are measured with it.
CHAR, BOLD = 6.6, 7.6


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None  #: the spread's ends; None: no whisker
    high: float | None = None
    text: str = ""  #: the number as printed beside the plot
    ours: bool = False


@dataclass(frozen=True)
class Panel:
    title: str
    bars: list[Bar]
    reference: float | None = None  #: a vertical line, e.g. 1.0 for "as much as the incumbent"
    reference_label: str = ""
    note: str = ""  #: one line under the bars, e.g. what was not measured


def _x(value: float, lo: float, hi: float, left: float, width: float) -> float:
    return left + (value - lo) / (hi - lo) * width


def _domain(panel: Panel) -> tuple[float, float]:
    values = [0.0]
    for bar in panel.bars:
        values += [bar.value, *(v for v in (bar.low, bar.high) if v is not None)]
    if panel.reference is not None:
        values.append(panel.reference)
    lo, hi = min(values), max(values)
    return lo, hi * 1.05 if hi > 0 else 1.0


def chart(
    chart_id: str, title: str, description: str, panels: list[Panel], plot_width: int = 320, same_scale: bool = False
) -> str:
    """An ``<svg>`` element: the panels stacked, each bar labelled on the left and numbered on the right.

    ``same_scale``: every panel on one axis, for panels of the same unit (the headline's ratios).
    """
    bars = [bar for panel in panels for bar in panel.bars]
    left = int(max((len(bar.label) * (BOLD if bar.ours else CHAR) for bar in bars), default=60)) + 16
    domains = [_domain(panel) for panel in panels]
    shared = (min(d[0] for d in domains), max(d[1] for d in domains)) if domains else (0.0, 1.0)
    right = int(max((len(bar.text) * (BOLD if bar.ours else CHAR) for bar in bars), default=30)) + 16
    texts = [panel.title for panel in panels] + [panel.note for panel in panels]
    width = max(left + plot_width + right, int(max((len(s) for s in texts), default=0) * BOLD) + 8)
    out: list[str] = []
    y = 0.0
    for panel in panels:
        y += FONT + 6
        out.append(f'<text x="4" y="{y:.0f}" font-weight="bold">{escape(panel.title)}</text>')
        y += 6
        lo, hi = shared if same_scale else _domain(panel)
        top = y
        for bar in panel.bars:
            centre = y + ROW / 2
            x0, x1 = sorted((_x(0.0, lo, hi, left, plot_width), _x(bar.value, lo, hi, left, plot_width)))
            colour = OURS if bar.ours else THEIRS
            weight = ' font-weight="bold"' if bar.ours else ""
            out.append(
                f'<text x="{left - 6}" y="{centre + 4:.1f}" text-anchor="end"{weight}>{escape(bar.label)}</text>'
            )
            out.append(
                f'<rect x="{x0:.1f}" y="{y + 3:.1f}" width="{max(x1 - x0, 1):.1f}" height="{ROW - 6}" fill="{colour}"/>'
            )
            if bar.low is not None and bar.high is not None:
                a, b = _x(bar.low, lo, hi, left, plot_width), _x(bar.high, lo, hi, left, plot_width)
                out.append(
                    f'<path d="M{a:.1f} {centre:.1f}H{b:.1f}M{a:.1f} {centre - 4:.1f}V{centre + 4:.1f}'
                    f'M{b:.1f} {centre - 4:.1f}V{centre + 4:.1f}" stroke="{WHISKER}" fill="none"/>'
                )
            out.append(f'<text x="{left + plot_width + 8}" y="{centre + 4:.1f}"{weight}>{escape(bar.text)}</text>')
            y += ROW
        zero = _x(0.0, lo, hi, left, plot_width)
        out.append(f'<path d="M{zero:.1f} {top:.1f}V{y:.1f}" stroke="{WHISKER}"/>')
        if panel.reference is not None:
            ref = _x(panel.reference, lo, hi, left, plot_width)
            out.append(f'<path d="M{ref:.1f} {top - 2:.1f}V{y + 2:.1f}" stroke="{REFERENCE}" stroke-dasharray="4 3"/>')
            y += FONT + 4
            out.append(
                f'<text x="{ref:.1f}" y="{y:.0f}" text-anchor="middle" fill="{REFERENCE}">'
                f"{escape(panel.reference_label)}</text>"
            )
        if panel.note:
            y += FONT + 6
            out.append(f'<text x="4" y="{y:.0f}" font-style="italic">{escape(panel.note)}</text>')
        y += 12
    height = int(y) + 4
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{chart_id}-title {chart_id}-desc" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="system-ui, sans-serif" font-size="{FONT}" fill="#24292f">'
        f'<title id="{chart_id}-title">{escape(title)}</title><desc id="{chart_id}-desc">{escape(description)}</desc>'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>' + "\n".join(out) + "</svg>"
    )
