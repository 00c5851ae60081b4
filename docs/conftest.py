"""Runs every Python code block in the docs as a test (Sybil), so an example cannot rot.

Blocks on one page share a namespace, top to bottom; a block whose text starts with ``>>>`` is a
doctest, so its output is checked too. A page hides set-up code from readers with
``<!-- invisible-code-block: python -->`` and skips a block only with ``<!-- skip: next "why" -->``-style
comments that say why. Predefined, as a Django or Starlette project has them: ``SECRET_KEY``, and
``PRIVATE_MEDIA``, a directory of private files (one per page, removed afterwards) holding
``invoices/2026-11.pdf``. Django examples run against ``tests.django_settings`` (pytest-django).
"""

from __future__ import annotations

import doctest
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from sybil import Sybil
from sybil.parsers.markdown import ClearNamespaceParser, PythonCodeBlockParser, SkipParser

#: The package an example's ``from myapp import views`` names: the reader's own Django app.
EXAMPLE_APP = "myapp"


def _setup(namespace: dict[str, Any]) -> None:
    namespace["_environ"] = dict(os.environ)  # a page may set what a deployment's environment holds
    namespace["SECRET_KEY"] = "docs-example-secret-key-0123456789abcdef"
    media = Path(tempfile.mkdtemp(prefix="docs-private-media-"))
    (media / "invoices").mkdir()
    (media / "invoices" / "2026-11.pdf").write_bytes(b"%PDF-1.4 an invoice\n")
    namespace["PRIVATE_MEDIA"] = str(media)


def _teardown(namespace: dict[str, Any]) -> None:
    os.environ.clear()
    os.environ.update(namespace["_environ"])
    shutil.rmtree(namespace["PRIVATE_MEDIA"], ignore_errors=True)
    for name in [name for name in sys.modules if name == EXAMPLE_APP or name.startswith(f"{EXAMPLE_APP}.")]:
        del sys.modules[name]


pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS), SkipParser(), ClearNamespaceParser()],
    patterns=["*.md"],
    setup=_setup,
    teardown=_teardown,
).pytest()
