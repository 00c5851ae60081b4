"""What a new user meets before any code runs: the licence, the extras and the documented dependencies."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_license_file_is_the_mit_license_pyproject_declares() -> None:
    assert PROJECT["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 blake2sign_web maintainers" in text


def test_the_fastapi_extra_exists_with_fastapi_and_starlette() -> None:
    names = {re.split(r"[<>=!~ \[]", spec, maxsplit=1)[0] for spec in PROJECT["optional-dependencies"]["fastapi"]}
    assert names == {"fastapi", "starlette"}


def test_every_runtime_dependency_is_named_on_the_install_page() -> None:
    install = (ROOT / "docs" / "install.md").read_text()
    for spec in PROJECT["dependencies"]:
        name = re.split(r"[<>=!~ \[]", spec, maxsplit=1)[0]
        assert name in install, f"docs/install.md does not name the runtime dependency {name}"
