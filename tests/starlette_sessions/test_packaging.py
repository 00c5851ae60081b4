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


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_extras_are_what_users_install_and_contributor_tools_are_dependency_groups() -> None:
    extras = {"django", "starlette", "fastapi", "flask", "quart", "migrate", "redis", "encrypted"}
    assert set(PROJECT["optional-dependencies"]) == extras
    groups = PYPROJECT["dependency-groups"]
    assert {"test", "lint", "docs", "bench", "fuzz", "example", "dev"} <= set(groups)
    included = {entry["include-group"] for entry in groups["dev"] if isinstance(entry, dict)}
    assert included == {"build", "packaging", "test", "lint", "docs", "bench", "fuzz"}


def test_no_package_is_asked_for_at_two_different_minimums() -> None:
    """dev includes several groups, and the groups repeat some extras' packages: each must say the same thing."""
    requirements = [entry for entries in PYPROJECT["dependency-groups"].values() for entry in entries]
    requirements += [entry for entries in PROJECT["optional-dependencies"].values() for entry in entries]
    versions: dict[str, set[str]] = {}
    for requirement in requirements:
        if not isinstance(requirement, str) or ";" in requirement:  # an include-group; a marker-split pin
            continue
        match = re.fullmatch(r"([\w.-]+)(\[[^\]]*\])?(.*)", requirement)
        assert match, requirement
        versions.setdefault(match.group(1).lower(), set()).add(match.group(3).strip())
    assert {name: found for name, found in versions.items() if len(found) > 1} == {}


def test_the_classifiers_name_every_python_of_the_matrix_and_the_frameworks() -> None:
    classifiers = set(PROJECT["classifiers"])
    assert PROJECT["requires-python"] == ">=3.10"
    tox = (ROOT / "tox.ini").read_text()
    pythons = sorted({f"3.{minor}" for minor in re.findall(r"^\s+py3(\d+)-", tox, re.MULTILINE)})
    assert pythons == ["3.10", "3.11", "3.12", "3.13"]
    assert {f"Programming Language :: Python :: {version}" for version in pythons} <= classifiers
    assert {"Framework :: Django", "Framework :: FastAPI", "Framework :: Flask"} <= classifiers
    assert "Environment :: Web Environment" in classifiers
    assert any(classifier.startswith("Development Status :: ") for classifier in classifiers)


def test_the_sdist_holds_what_its_tests_and_docs_need() -> None:
    include = set(PYPROJECT["tool"]["hatch"]["build"]["targets"]["sdist"]["include"])
    # pytest's testpaths, the docs' build and examples, the example project the tests import, the matrix.
    assert {"blake2sign_web", "tests", "docs", "scripts", "example_project", "mkdocs.yml", "tox.ini"} <= include
    assert {"README.md", "LICENSE"} <= include
