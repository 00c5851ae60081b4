"""README.md leads a contributor to the two commands and a newcomer to working code; the package index shows the latter.

It opens with the two contributor commands, exactly two (the project's rule), then the install and a quick start
per framework; the package's long description (pyproject.toml, fancy-pypi-readme) is the README without the
contributor section, so on the package index it leads with the install. Every link is absolute, so it works on
the package index, and every docs address names a page and section that exist. The system checks' hints and
pyproject.toml's URLs point at the same published docs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from blake2sign_web.django import checks

from .readme import README, commands, docs_page, file_name, links, project_urls, sections, site_url

QUICK_STARTS = {"Quick start: Django": "django", "Quick start: FastAPI": "fastapi", "Quick start: Flask": "flask"}


def test_the_readme_opens_with_the_two_contributor_commands() -> None:
    found = sections()
    assert found[""] == [], "no code before the first section"
    assert list(found)[1] == "From a clone"
    [block] = found["From a clone"]
    assert block.language == "bash"
    assert commands(block) == ["python3 scripts/example.py", "python3 scripts/test.py"]


def check_quick_starts(text: str) -> None:
    found = sections(text)
    titles = [title for title in found if title and title != "From a clone"]
    assert titles[: len(QUICK_STARTS)] == list(QUICK_STARTS)
    for title, extra in QUICK_STARTS.items():
        install, *code, run = found[title]
        assert commands(install)[0].startswith(f'pip install "blake2sign-web[{extra}]"')
        assert code, f"{title} has no code"
        assert all(block.language == "python" and file_name(block) for block in code), "each block is one file"
        assert len(commands(run)) == 1
        # Lines of code: not the blank ones, nor the comment naming the file.
        lines = sum(len([line for line in block.text.splitlines()[1:] if line.strip()]) for block in code)
        assert lines <= 12, f"{title} is {lines} lines of code: a quick start stays about ten"


def test_the_quick_starts_come_right_after_the_contributor_commands() -> None:
    found = sections()
    assert list(found)[2 : 2 + len(QUICK_STARTS)] == list(QUICK_STARTS)
    check_quick_starts(README.read_text(encoding="utf-8"))


def test_every_readme_link_is_absolute_and_every_docs_address_exists() -> None:
    text = README.read_text(encoding="utf-8")
    targets = links(text)
    assert targets
    for target in targets:
        assert target.startswith("https://"), f"README.md links to {target!r}: on the package index only https works"
        if target.startswith(site_url()):
            docs_page(target)
    # No bare relative Markdown file links in any other form either.
    assert not re.search(r"\]\((?!https://)", text)


def test_pyproject_urls_and_mkdocs_site_url_agree() -> None:
    urls = project_urls()
    assert set(urls) == {"Homepage", "Documentation", "Source", "Changelog", "Issues"}
    assert urls["Documentation"] == site_url() == checks.DOCS
    docs_page(urls["Changelog"])
    assert urls["Issues"] == urls["Source"] + "/issues"
    assert urls["Source"] in README.read_text(encoding="utf-8")


def hints(**overrides: Any) -> set[str]:
    with override_settings(**overrides):
        return {m.hint for m in run_checks(include_deployment_checks=True) if m.id.startswith("blake2sign_web")}


@pytest.mark.parametrize(
    "overrides",
    [
        {"BLAKE2SIGN_WEB": {"SESSIONS": {"HASHER": "md5"}}},  # E002: the settings
        {"BLAKE2SIGN_WEB": {"SIGNED_URLS": {"HASHER": "sha1"}}},  # E008: the signed links' settings
        {"SECRET_KEY": "short"},  # E010: keys and rotation
        {"SESSION_COOKIE_SAMESITE": "None", "SESSION_COOKIE_SECURE": False},  # E011
    ],
    ids=["E002", "E008", "E010", "E011"],
)
def test_every_check_hint_that_points_at_the_docs_gives_an_existing_page(overrides: dict[str, Any]) -> None:
    found = hints(**overrides)
    pointing = [hint for hint in found if hint and ("docs" in hint or "http" in hint)]
    assert pointing, f"no hint points at the docs for {overrides}: {found}"
    for hint in pointing:
        urls = re.findall(r"https://\S+", hint)
        assert urls, f"{hint!r} points at the docs without their address"
        for url in urls:
            docs_page(url)
