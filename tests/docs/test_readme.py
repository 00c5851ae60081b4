"""README.md (also the package's long description on the package index) leads a newcomer to working code.

It opens with the install and a quick start per framework; the two contributor commands follow, still exactly
two; every link is absolute, so it works on the package index, and every docs address names a page and section
that exist. The system checks' hints and pyproject.toml's URLs point at the same published docs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from blake2sign_web.django import checks

from .readme import README, commands, docs_page, file_name, links, project_urls, sections, site_url

QUICK_STARTS = {"Quick start: Django": "django", "Quick start: FastAPI": "fastapi"}


def test_the_readme_opens_with_the_install_and_a_quick_start_per_framework() -> None:
    found = sections()
    assert found[""] == [], "no code before the first section: the install comes first"
    titles = list(found)[1:]
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


def test_the_two_contributor_commands_come_right_after_the_quick_starts() -> None:
    found = sections()
    titles = list(found)[1:]
    assert titles[len(QUICK_STARTS)] == "From a clone"
    [block] = found["From a clone"]
    assert block.language == "bash"
    assert commands(block) == ["python3 scripts/example.py", "python3 scripts/test.py"]


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
        {"SECRET_KEY": "django-insecure-" + "k" * 50},  # W004 (check --deploy)
        {"SESSION_COOKIE_SAMESITE": "None", "SESSION_COOKIE_SECURE": False},  # E011
    ],
    ids=["E002", "E008", "E010", "W004", "E011"],
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
