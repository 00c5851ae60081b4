"""docs/install.md's extras table names every extra of pyproject.toml, and only those.

An extra added to pyproject.toml without a row (``encrypted`` was one) leaves users to find it in the
pyproject file; a row for an extra that no longer exists sends them to a ``pip install`` that warns and
installs nothing.
"""

from __future__ import annotations

import re

from .readme import DOCS_DIR, ROOT, tomllib

INSTALL = DOCS_DIR / "install.md"


def table_extras() -> list[str]:
    """The first column of install.md's ``| extra | adds | for |`` table, in order."""
    lines = INSTALL.read_text(encoding="utf-8").splitlines()
    start = lines.index("| extra | adds | for |")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        match = re.fullmatch(r"\| `([\w-]+)` \|.*\|", line)
        assert match, f"install.md's extras table has a row without an extra in backticks: {line!r}"
        rows.append(match.group(1))
    return rows


def test_the_extras_table_lists_every_extra_of_pyproject_once() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    rows = table_extras()
    assert len(rows) == len(set(rows)), f"install.md lists an extra twice: {rows}"
    missing, unknown = sorted(set(extras) - set(rows)), sorted(set(rows) - set(extras))
    assert (missing, unknown) == ([], []), f"missing from install.md: {missing}; not in pyproject.toml: {unknown}"
