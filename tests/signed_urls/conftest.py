"""Shared fixtures: a directory of files to serve, with a secret just outside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CONTENT = bytes(range(256)) * 40  # 10240 bytes, every offset distinguishable


@pytest.fixture
def served_root(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    (root / "sub").mkdir(parents=True)
    (root / "report.bin").write_bytes(CONTENT)
    (root / "sub" / "caf\u00e9 menu.txt").write_text("menu")
    (root / "page.html").write_text("<script>alert(1)</script>")
    (root / "empty.txt").write_bytes(b"")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "escape-dir").symlink_to(tmp_path)
    return root


@pytest.fixture
def file_storage(served_root: Path, settings: Any) -> Path:
    settings.STORAGES = {
        **settings.STORAGES,
        "signed_test": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": served_root}},
    }
    return served_root
