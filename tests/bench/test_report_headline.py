"""The performance page leads with its answer, and rebuilding it only reads results.json.

Run on a copy of the committed docs/benchmarks/results.json: the headline table and chart must come from its
targets, before the commands and the method, and the JSON must come out of a rebuild byte for byte the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.servers import ROOT

RESULTS = ROOT / "docs" / "benchmarks" / "results.json"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A rebuild of the page from a copy of the committed results: (the output directory, the JSON before)."""
    tmp_path = tmp_path_factory.mktemp("docs")
    pytest.importorskip("matplotlib", reason="the page's other charts need matplotlib (the bench extra)")
    from example_project.bench import report

    copy = tmp_path / "benchmarks" / "results.json"
    copy.parent.mkdir()
    shutil.copy(RESULTS, copy)
    before = copy.read_bytes()
    written = report.rebuild(copy)
    assert tmp_path / "img" / "headline.svg" in written
    return tmp_path, before


def test_rebuilding_the_page_only_reads_the_results(rebuilt: tuple[Path, bytes]) -> None:
    out, before = rebuilt
    assert (out / "benchmarks" / "results.json").read_bytes() == before


def test_the_page_opens_with_the_headline_table_and_chart(rebuilt: tuple[Path, bytes]) -> None:
    from example_project.bench.targets import DJANGO_OURS, DJANGO_THEIRS

    out, _ = rebuilt
    page = (out / "performance.md").read_text()
    data = json.loads(RESULTS.read_text())
    heading = page.index("| framework | request | in process: instructions |")
    assert heading < page.index("![Ours / the incumbent") < page.index("## Targets")
    assert page.index("## Targets") < page.index("## How to run it") < page.index("## Method")
    assert "```" not in page[:heading]  # no command before the answer
    # The Django read row quotes the targets' in-process median and range, as the full table below does.
    (target,) = [
        t
        for t in data["targets"]
        if (t["where"], t["framework"], t["workload"], t["ours"], t["theirs"])
        == ("callgrind, in process", "django", "read", DJANGO_OURS, DJANGO_THEIRS)
    ]
    row = next(line for line in page.splitlines() if line.startswith("| Django | read-only |"))
    assert f"**{target['median']:.2f}** ({target['low']:.2f}-{target['high']:.2f})" in row
    part = data["parts"]["callgrind"]
    assert f"Measured on {part['machine'].removesuffix(', ' + part['date'])}, {part['date']}" in page


def test_the_headline_chart_is_an_accessible_svg_with_its_numbers(rebuilt: tuple[Path, bytes]) -> None:
    out, _ = rebuilt
    root = ElementTree.parse(out / "img" / "headline.svg").getroot()
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None
    assert desc is not None
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    page = (out / "performance.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| Starlette | read+write |"))
    in_process = row.split("|")[3].strip().split("**")[1]
    assert any(text.startswith(in_process) for text in texts)  # the number beside its bar
    assert "Starlette, read+write" in texts
    assert "1 = as much as the incumbent" in texts


def test_no_headline_without_the_rows_it_quotes() -> None:
    from example_project.bench import headline

    assert headline.section({"parts": {}, "targets": []}) == []
    assert headline.write_chart({"parts": {}, "targets": []}, Path("/nonexistent")) is None
