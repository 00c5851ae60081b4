"""The pages' HTML: one layout, escaped with html.escape (the example needs no template engine)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from example_project import costs

from .engines import ENGINES

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem; color: #222; }
nav a { margin-right: 1rem; }
.messages li { background: #e8f4e8; border: 1px solid #9c9; padding: .3rem .6rem; list-style: none; margin: .3rem 0; }
.facts { background: #f4f4f8; border: 1px solid #ccd; padding: .5rem 1rem; margin: 1rem 0; font-size: 14px; }
.facts table { border-collapse: collapse; } .facts td, .facts th { padding: 0 .8rem 0 0; text-align: left; }
.current { font-weight: bold; } code { background: #eee; padding: 0 .2rem; }
.cost-chart { margin: .5rem 0; } .cost-chart svg { max-width: 100%; height: auto; }
.cost-chart figcaption { font-size: 13px; color: #444; }
"""

#: The script that shows this response's Server-Timing on the page; the Django site includes the same file.
TIMING_SCRIPT = (Path(__file__).parents[1] / "django_site" / "templates" / "timing_script.html").read_text(
    encoding="utf-8"
)


def layout(
    *,
    title: str,
    body: str,
    user: str | None,
    flashes: list[str],
    engine: str,
    cookie_size: int,
    path: str,
    csrf_input: str,
    scripts: str = "",
) -> str:
    login = (
        f'<form method="post" action="/accounts/logout" style="display:inline">{csrf_input}'
        f'<button type="submit" id="logout">Log out {escape(user)}</button></form>'
        if user
        else '<a href="/accounts/login" id="login-link">Log in</a>'
    )
    messages = "".join(f'<li class="flash">{escape(m)}</li>' for m in flashes)
    options = "".join(
        f'<option value="{key}"{" selected" if key == engine else ""}>{escape(e.label)}</option>'
        for key, e in ENGINES.items()
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · blake2sign_web FastAPI example</title>
<style>{STYLE}</style></head><body>
<nav><strong>Tea shop (FastAPI)</strong> · <a href="/">Shop</a> <a href="/cart">Cart</a>
<a href="/downloads">Downloads</a> {login}</nav>
{f'<ul class="messages">{messages}</ul>' if messages else ""}
<main>{body}</main>
<section class="facts">
  <form method="post" action="/engine">{csrf_input}<input type="hidden" name="next" value="{escape(path)}">
  Session middleware: <select name="engine" id="engine">{options}</select> <button type="submit">Switch</button></form>
  <p>In use: <strong id="engine-label">{escape(ENGINES[engine].label)}</strong>.
  Session cookie (<code>session</code>) this request carried: <strong id="cookie-size">{cookie_size}</strong> bytes.</p>
  <p>This request's session work, one sample (<code>Server-Timing</code>; one request on a shared machine is noisy,
  the chart below is what holds): <strong id="timing">reading…</strong></p>
  {benchmark_table(ENGINES[engine].bench_key)}
</section>
{TIMING_SCRIPT}{scripts}
</body></html>"""


def benchmark_table(current: str) -> str:
    """The benchmark's chart of what each engine adds, as the Django site draws it (example_project/costs.py)."""
    return costs.panel("starlette", [e.bench_key for e in ENGINES.values()], current)


def render_rows(rows: list[Any]) -> str:
    return "".join(f"<tr>{''.join(f'<td>{escape(str(cell))}</td>' for cell in row)}</tr>" for row in rows)
