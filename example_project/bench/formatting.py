"""How the page prints a figure: microseconds, thousands of instructions, ratios, and where a part ran."""

from __future__ import annotations

import math
from typing import Any


def us(value: float) -> str:
    return f"{value / 1000:.2f} ms" if abs(value) >= 1000 else f"{value:.1f} us"


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def kilo(value: float) -> str:
    return f"{value / 1000:,.1f} k"


def where_note(part: dict[str, Any]) -> str:
    return (
        f"{part.get('machine', '?')}; {part.get('date', '?')}, {part.get('settings', {}).get('elapsed_s', 0):.0f} s"
        + ("; **quick smoke run: no figure to quote**" if part.get("settings", {}).get("quick") else "")
    )
