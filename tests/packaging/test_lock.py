"""The locks (requirements/*.txt) that the README's two commands install from: current, complete and hashed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK_SCRIPT = ROOT / "scripts" / "lock.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    """``scripts/lock.py --check`` run from a checkout at ``root``."""
    script = root / "scripts" / "lock.py"
    return subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, check=False)


def test_the_locks_are_current() -> None:
    assert check(ROOT).returncode == 0, check(ROOT).stderr


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"anyio>=4"]', '"anyio>=4", "hiredis>=3"]'),  # an extra gains a package
        ('"pytest>=8",', '"pytest>=9",'),  # a dependency group's bound moves
        ('"hatchling>=1.21"', '"hatchling>=1.27"'),  # the build backend's
    ],
)
def test_a_requirement_changed_without_a_new_lock_is_caught(tmp_path: Path, old: str, new: str) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(LOCK_SCRIPT, tmp_path / "scripts")
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert old in pyproject
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert check(tmp_path).returncode == 0  # the copy is current
    (tmp_path / "pyproject.toml").write_text(pyproject.replace(old, new, 1))
    result = check(tmp_path)
    assert result.returncode == 1
    assert "python3 scripts/lock.py" in result.stderr


def test_a_change_elsewhere_in_pyproject_needs_no_new_lock(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(LOCK_SCRIPT, tmp_path / "scripts")
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    pyproject = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(pyproject.replace("line-length = 120", "line-length = 100"))
    assert check(tmp_path).returncode == 0


def test_every_pin_has_hashes_and_every_package_is_pinned() -> None:
    """pip's --require-hashes refuses a lock with an unpinned or unhashed line; this says which one, sooner."""
    for lock in (ROOT / "requirements").glob("*.txt"):
        entries = re.split(r"\n(?=[a-z0-9])", lock.read_text().split("\n", 1)[1])
        assert len(entries) > 10, lock
        for entry in entries:
            first = entry.splitlines()[0]
            assert re.match(r"^[a-z0-9._-]+(\[[a-z0-9,_-]+\])?==[^ ]+ ", first + " "), (lock.name, first)
            assert "--hash=sha256:" in entry, (lock.name, first)
