"""``{% cost_panel engines engine %}``: the benchmark's chart of what each engine adds (example_project/costs.py).

The FastAPI app draws the same panel with the same function, so both sites show the same figures.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from example_project import costs

register = template.Library()


@register.simple_tag
def cost_panel(engines: dict[str, Any], current: Any) -> SafeString:
    """``engines``: the site's choices (each with its ``bench_key``); ``current``: the one in use."""
    keys = [choice.bench_key for choice in engines.values()]
    return mark_safe(costs.panel("django", keys, current.bench_key))  # costs.panel escapes every text it writes
