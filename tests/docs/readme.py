"""README.md read as a newcomer meets it: its sections, code blocks and links; and where a docs address leads.

Shared by tests/docs/test_readme.py (what the README says) and tests/docs/test_quick_start.py (that its quick
starts run, from the built wheel in a fresh virtual environment).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import pytest

    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS_DIR = ROOT / "docs"


@dataclass(frozen=True)
class Block:
    language: str
    text: str


def sections(text: str | None = None) -> dict[str, list[Block]]:
    """The README's code blocks under each ``## `` heading ("" for those before the first one), in order."""
    text = README.read_text(encoding="utf-8") if text is None else text
    found: dict[str, list[Block]] = {"": []}
    current = ""
    in_block: Block | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if in_block is None and line.startswith("## "):
            current = line[3:].strip()
            found[current] = []
        elif in_block is None and line.startswith("```"):
            in_block = Block(line[3:].strip(), "")
            lines = []
        elif in_block is not None and line.startswith("```"):
            found[current].append(Block(in_block.language, "\n".join(lines) + "\n"))
            in_block = None
        elif in_block is not None:
            lines.append(line)
    return found


def commands(block: Block) -> list[str]:
    """A shell block's commands, comments dropped."""
    return [line.split("#", 1)[0].strip() for line in block.text.splitlines() if line.split("#", 1)[0].strip()]


def file_name(block: Block) -> str | None:
    """``settings.py`` for a Python block that starts with ``# settings.py``: a file the reader writes."""
    match = re.fullmatch(r"# ([\w/]+\.py)", block.text.splitlines()[0]) if block.language == "python" else None
    return match.group(1) if match else None


def links(text: str) -> list[str]:
    """Every link target: ``[text](target)`` and ``<https://...>``."""
    return re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"<(https?://[^>\s]+)>", text)


def site_url() -> str:
    """mkdocs.yml's site_url, where the docs are published."""
    match = re.search(r"^site_url:\s*(\S+)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    assert match, "mkdocs.yml has no site_url"
    return match.group(1)


def project_urls() -> dict[str, str]:
    urls: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    return urls


def slugify(heading: str) -> str:
    """The anchor mkdocs' toc extension gives a heading (its default slugify), or the heading's ``{ #id }``."""
    explicit = re.search(r"\{\s*#([\w-]+)\s*\}\s*$", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    """The heading anchors of a docs page (headings inside code blocks are not headings)."""
    found = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and re.match(r"#{1,6} ", line):
            found.add(slugify(line.lstrip("#").strip()))
    return found


def docs_page(url: str) -> tuple[Path, str]:
    """The Markdown page and anchor a docs address leads to; fails when either does not exist."""
    base = site_url()
    assert url.startswith(base), f"{url} is not under the docs' address {base}"
    parts = urlsplit(url)
    path = parts.path[len(urlsplit(base).path) :].strip("/")
    page = DOCS_DIR / (f"{path}.md" if path else "index.md")
    if not page.is_file():
        page = DOCS_DIR / path / "index.md"
    assert page.is_file(), f"{url} names no page: neither docs/{path}.md nor docs/{path}/index.md exists"
    if parts.fragment:
        assert parts.fragment in anchors(page), f"{url}: {page.relative_to(ROOT)} has no section #{parts.fragment}"
    return page, parts.fragment
