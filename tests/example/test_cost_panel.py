"""The cost panel of both example sites: a chart of what each engine adds, drawn from results.json, ours highlighted.

Through the real clients: Starlette's TestClient against the FastAPI app, Django's test client against the Django
site (in a subprocess: the site has its own settings). The figures the chart must show are worked out here from
the committed docs/benchmarks/results.json, independently of example_project/costs.py.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from starlette.testclient import TestClient

from example_project import costs
from example_project.bench import svg
from tests.servers import ROOT

RESULTS = json.loads((ROOT / "docs" / "benchmarks" / "results.json").read_text())
SVG = "{http://www.w3.org/2000/svg}"
#: (framework, the site's engine choices: {choice: benchmark name}, the session-less baseline's name).
SITES = {
    "fastapi": (
        "starlette",
        {
            "ours": "blake2sign_web SessionMiddleware",
            "starlette": "Starlette SessionMiddleware",
            "starsessions": "starsessions CookieStore",
        },
        "no session middleware",
    ),
    "django": (
        "django",
        {
            "ours": "ours + our middleware",
            "ours-django-middleware": "ours + Django's middleware",
            "signed_cookies": "Django signed_cookies",
            "cache": "Django cache (locmem)",
            "db": "Django db (SQLite file)",
        },
        "no sessions",
    ),
}


def added_instructions(framework: str, workload: str, engine: str, baseline: str) -> float:
    rows = RESULTS["parts"]["callgrind"]["in_process"][framework][workload]
    return float(statistics.median(a - b for a, b in zip(rows[engine]["Ir"], rows[baseline]["Ir"], strict=True)))


def chart_of(html: str) -> ElementTree.Element:
    match = re.search(r"<svg .*?</svg>", html, re.DOTALL)
    assert match is not None, "no chart on the page"
    return ElementTree.fromstring(match.group(0))


def bars(root: ElementTree.Element) -> dict[str, list[str]]:
    """{bar label: [its colour, ...] one per panel}: a label's text is followed by its bar."""
    children = list(root)
    found: dict[str, list[str]] = {}
    for text, rect in itertools.pairwise(children):
        if text.tag == f"{SVG}text" and rect.tag == f"{SVG}rect":
            found.setdefault("".join(text.itertext()), []).append(str(rect.get("fill")))
    return found


def check_panel(html: str, site: str, current: str) -> None:
    framework, choices, baseline = SITES[site]
    assert "Measured by the request benchmark, median microseconds" not in html  # the clock-run table is gone
    assert "This request's session work, one sample" in html  # the live figure, labelled as what it is
    root = chart_of(html)
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None
    assert title.text == "What each session engine adds to a request"
    assert desc is not None
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    drawn = bars(root)
    cpu = RESULTS["parts"]["requests"]["http"][framework]["read"]
    for choice, engine in choices.items():
        label = engine + (" (in use)" if choice == current else "")
        colour = svg.OURS if engine.startswith(("ours", "blake2sign_web")) else svg.THEIRS
        counted = engine in RESULTS["parts"]["callgrind"]["in_process"][framework]["read"]
        assert drawn[label] == [colour] * (4 if counted else 2), label  # instructions (read, write) and HTTP CPU
        if counted:
            figure = f"{added_instructions(framework, 'read', engine, baseline) / 1000:,.1f} k"
            assert f"<td>{figure}" in html  # in the table of numbers
            texts = {"".join(t.itertext()) for t in root.iter(f"{SVG}text")}
            assert figure in texts  # and beside its bar
        row = cpu[engine]
        noisy = " noisy" if row["added_us_q1"] <= 0 else ""  # the run cannot tell it from nothing, and says so
        figure = f"{row['added_us_median']:,.1f} µs ({row['added_us_q1']:,.1f} to {row['added_us_q3']:,.1f})"
        assert f"<td>{figure}{noisy}</td>" in html


@pytest.fixture
def client(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setenv("EXAMPLE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EXAMPLE_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens: no single-use links
    from example_project.fastapi_site import app

    return TestClient(app.app)


@pytest.mark.parametrize("engine", list(SITES["fastapi"][1]))
def test_the_fastapi_panel_charts_every_engine_ours_highlighted(client: TestClient, engine: str) -> None:
    client.cookies.set("example_engine", engine)
    page = client.get("/")
    assert page.status_code == 200
    check_panel(page.text, "fastapi", engine)


def test_the_django_panel_charts_every_engine_ours_highlighted(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "EXAMPLE_DATA_DIR": str(tmp_path),
        "EXAMPLE_REDIS_URL": "redis://127.0.0.1:1/0",
    }
    command = [sys.executable, "-m", "tests.example.django_pages", *SITES["django"][1]]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    pages: dict[str, Any] = json.loads(run.stdout)
    for engine, page in pages.items():
        assert page["status"] == 200
        check_panel(page["html"], "django", engine)


def test_without_results_the_panel_says_how_to_get_them(client: TestClient, tmp_path: Path) -> None:
    original = costs.RESULTS
    costs.RESULTS = tmp_path / "missing.json"
    try:
        page = client.get("/").text
    finally:
        costs.RESULTS = original
    assert f'<p id="bench-hint">{costs.HINT}</p>' in page
    assert "<svg" not in page


BAD_RESULTS = [
    "not JSON",
    "[]",
    '{"parts": []}',
    '{"parts": {"callgrind": {"in_process": {"starlette": {"read": []}}}}}',
    '{"parts": {"callgrind": {"in_process": {"starlette": {"read": {"no session middleware": {"Ir": "x"}}}}}}}',
    '{"parts": {"requests": {"http": {"starlette": {"read": {"x": {"added_us_median": "a", "baseline": "b"}}}}}}}',
    '{"parts": {"requests": {"http": {"starlette": {"read": {"x": {"added_us_median": null, "baseline": "b"}}}}}}}',
]


@pytest.mark.parametrize("text", BAD_RESULTS)
def test_results_of_an_unknown_shape_give_the_hint_not_an_error(client: TestClient, tmp_path: Path, text: str) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(text)
    original = costs.RESULTS
    costs.RESULTS = bad
    try:
        page = client.get("/")
    finally:
        costs.RESULTS = original
    assert page.status_code == 200
    assert f'<p id="bench-hint">{costs.HINT}</p>' in page.text
