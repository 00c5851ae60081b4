"""Debian's Chromium, driven by Playwright, for the tests a person would do in a browser.

Playwright's own browser download cannot work here: its ``chromium`` is pointed at ``/usr/bin/chromium``
(``apt-get install chromium``; ``.ci/run`` installs it). Without it, or without the playwright package, a test
skips saying what to install, except in CI (``CI=true``), where it fails: CI never skips them silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: Headless, as root, and nothing that reaches for the network on its own (this machine's network is closed).
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync",
]  # fmt: skip


def missing(what: str) -> None:
    """Skip for want of ``what``; fail in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test, which needs {what}", pytrace=False)
    pytest.skip(f"needs {what}")


def chromium() -> Iterator[Any]:
    """The body of a ``browser`` fixture: a launched Playwright browser, closed after."""
    if not CHROMIUM.exists():
        missing("Debian's chromium package (apt-get install chromium), /usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package (python3 scripts/test.py installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield browser
        browser.close()
