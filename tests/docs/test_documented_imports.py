"""Every name the docs' code blocks and the README import still imports from where they show it.

The core moved into packages (issue 39); what a user copies from a page must keep working. The code blocks are
read as the page shows them (``python``, ``py``, ``pycon`` fences, and ``>>>`` lines), each ``from blake2sign_web...
import ...`` and ``import blake2sign_web...`` statement parsed by ``ast``, and each name imported here, in a fresh
interpreter so that no other test's imports can hide a missing module.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
STATEMENT = re.compile(
    r"^[ \t]*(?:>>> )?(from blake2sign_web[\w.]* import (?:\([^)]*\)|[^\n]*)|import blake2sign_web[\w.]*)", re.M
)


def documented_imports(text: str) -> set[tuple[str, str]]:
    """(module, name) for each import of ours in the Python code blocks of a page; name "" for ``import x``."""
    found: set[tuple[str, str]] = set()
    for fence in FENCE.finditer(text):
        if fence["lang"] not in ("python", "py", "pycon", ""):
            continue
        for match in STATEMENT.finditer(fence["body"]):
            source = re.sub(r"#[^\n]*", "", match.group(1)).replace(">>> ", "").replace("... ", "")
            for node in ast.parse(source.strip()).body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.update((node.module, alias.name) for alias in node.names)
                elif isinstance(node, ast.Import):
                    found.update((alias.name, "") for alias in node.names)
    return found


EVERY = sorted({item for page in PAGES for item in documented_imports(page.read_text(encoding="utf-8"))})


def test_the_reader_finds_every_form() -> None:
    page = """
```python
from blake2sign_web import (
    BadSignature,  # a comment
    URLSigner,
)
import blake2sign_web.django.sessions
```

```pycon
>>> from blake2sign_web.chunks import join_chunks
```

```console
$ python -c "from blake2sign_web.nowhere import x"
```
"""
    assert documented_imports(page) == {
        ("blake2sign_web", "BadSignature"),
        ("blake2sign_web", "URLSigner"),
        ("blake2sign_web.django.sessions", ""),
        ("blake2sign_web.chunks", "join_chunks"),
    }


def test_the_pages_show_the_moved_modules_public_paths() -> None:
    """The paths kept at the root for the docs are found here, so the test below covers them."""
    modules = {module for module, _ in EVERY}
    assert {
        "blake2sign_web.chunks",
        "blake2sign_web.cookies",
        "blake2sign_web.files",
        "blake2sign_web.playlists",
    } <= modules
    assert len(EVERY) >= 50


def test_every_documented_name_imports() -> None:
    lines = [f"import {module}" if not name else f"from {module} import {name}" for module, name in EVERY]
    script = "failed = []\n" + "".join(
        f"try:\n    {line}\nexcept ImportError as error:\n    failed.append({line!r} + ': ' + str(error))\n"
        for line in lines
    )
    script += "print('\\n'.join(failed))\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", "documented imports that fail:\n" + result.stdout


@pytest.mark.parametrize(
    "path", ["blake2sign_web.chunks", "blake2sign_web.cookies", "blake2sign_web.files", "blake2sign_web.playlists"]
)
def test_a_public_path_is_the_code_not_a_copy(path: str) -> None:
    """A root module re-exports the objects themselves: ``isinstance`` and ``except`` see one class."""
    import importlib

    public = importlib.import_module(path)
    for name in public.__all__:
        thing = getattr(public, name)
        home = getattr(thing, "__module__", None)
        if home is not None and not isinstance(thing, (int, str)):
            assert home.startswith(("blake2sign_web.sessions.", "blake2sign_web.links.")), (name, home)
