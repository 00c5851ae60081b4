"""The documentation site builds without a warning and has the tabs, reference pages and features it promises.

Builds the real site with ``mkdocs build --strict`` (as a reader or CI would) into a temporary directory and
reads the HTML: a broken link, a docstring mkdocstrings cannot render, or a tab dropped from mkdocs.yml fails
here rather than on the published site.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
TABS = [
    "Get started",
    "Django",
    "Starlette & FastAPI",
    "Flask & Quart",
    "Signed links",
    "Security",
    "Performance",
    "Reference",
    "Changelog",
]
# The docs dependency group: mkdocs, Material for MkDocs, mkdocstrings with its Python handler.
DOCS_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def missing_docs_packages() -> list[str]:
    missing = []
    for name in DOCS_PACKAGES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


class TabsParser(HTMLParser):
    """Collects the labels and targets of Material's navigation tabs (``a.md-tabs__link``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tabs: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and "md-tabs__link" in (values.get("class") or "").split():
            self._href = values.get("href") or ""
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.tabs.append((" ".join("".join(self._text).split()), self._href))
            self._href = None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = missing_docs_packages()
    if missing:
        reason = f"the docs group is not installed (missing {', '.join(missing)}): pip install -e . --group docs"
        # A tox environment installs only the test group; CI's main environment has the docs group.
        if os.environ.get("CI") and not os.environ.get("TOX_ENV_NAME"):
            pytest.fail(f"{reason} (CI must build the docs, never skip it)", pytrace=False)
        pytest.skip(reason)
    site_dir = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site_dir)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return site_dir


def tabs_of(page: Path) -> list[tuple[str, str]]:
    parser = TabsParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.tabs


def test_home_page_has_the_tabs_in_order(site: Path) -> None:
    assert [label for label, _ in tabs_of(site / "index.html")] == TABS


def test_every_tab_leads_to_a_built_page(site: Path) -> None:
    for label, href in tabs_of(site / "index.html"):
        target = (site / href.split("#")[0]).resolve()
        if target.is_dir():
            target = target / "index.html"
        assert target.is_file(), f"tab {label!r} links to {href!r}, which the build did not produce"


def test_reference_pages_are_generated_from_docstrings(site: Path) -> None:
    expected = {
        "reference/core/index.html": ["blake2sign_web.SerializerSigner", "blake2sign_web.URLSigner"],
        "reference/django/index.html": [
            "blake2sign_web.django.sessions.SessionStore",
            "blake2sign_web.django.views.SignedFileView",
        ],
        "reference/starlette/index.html": [
            "blake2sign_web.starlette.sessions.SessionMiddleware",
            "blake2sign_web.starlette.signed_urls.SignedFiles",
        ],
    }
    for page, anchors in expected.items():
        html = (site / page).read_text(encoding="utf-8")
        for anchor in anchors:
            assert f'id="{anchor}"' in html, f"{page} has no generated entry for {anchor}"
        # The signature block mkdocstrings writes for each documented class or function.
        assert "doc-signature" in html


def test_search_code_copy_and_dark_mode_are_on(site: Path) -> None:
    html = (site / "index.html").read_text(encoding="utf-8")
    config = json.loads(re.search(r'<script id="__config" type="application/json">(.*?)</script>', html).group(1))
    assert "content.code.copy" in config["features"]
    assert "navigation.tabs" in config["features"]
    assert set(re.findall(r'data-md-color-scheme="(\w+)"', html)) >= {"default", "slate"}
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any("URLSigner" in entry["text"] for entry in index["docs"])
