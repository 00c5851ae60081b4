"""Run a recipe page's Python blocks and hand their names to a test, so tests exercise the page's own code.

The blocks run as docs/conftest.py runs them (Sybil, one namespace per page, top to bottom, ``SECRET_KEY``
predefined; the recipes use nothing else of its set-up), so what a test imports is exactly what a reader copies.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from sybil import Sybil
from sybil.parsers.markdown import ClearNamespaceParser, PythonCodeBlockParser, SkipParser

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "recipes"
#: The same predefined name as docs/conftest.py gives every page.
DOCS_SECRET_KEY = "docs-example-secret-key-0123456789abcdef"


def run_page(name: str, **names: Any) -> dict[str, Any]:
    """Evaluate every Python block of ``docs/recipes/<name>`` and return the page's namespace.

    ``names`` are set before the first block, beside ``SECRET_KEY``.
    """
    sybil = Sybil(parsers=[PythonCodeBlockParser(), SkipParser(), ClearNamespaceParser()], path=str(RECIPES))
    document = sybil.parse(RECIPES / name)
    document.namespace.update(SECRET_KEY=DOCS_SECRET_KEY, **names)
    for example in document:
        example.evaluate()
    return document.namespace


def page_module(name: str) -> types.ModuleType:
    """The page's namespace as an importable module, ``tests.recipes.page_<stem>``, for dotted paths in settings."""
    module_name = "tests.recipes.page_" + Path(name).stem.replace("-", "_")
    if module_name not in sys.modules:
        module = types.ModuleType(module_name, f"The Python blocks of docs/recipes/{name}.")
        # With __name__ set, the page's functions and classes know their module (Django's URL resolver asks).
        module.__dict__.update(run_page(name, __name__=module_name))
        sys.modules[module_name] = module
    return sys.modules[module_name]


def code_block(name: str, language: str) -> str:
    """The one fenced block of ``language`` on the page (a config file the test runs for real)."""
    text = (RECIPES / name).read_text(encoding="utf-8")
    fence = f"```{language}\n"
    blocks = [part.split("```", 1)[0] for part in text.split(fence)[1:]]
    if len(blocks) != 1:
        raise AssertionError(f"{name} has {len(blocks)} ```{language} blocks; expected one")
    return blocks[0]
