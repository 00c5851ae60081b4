"""Install a virtual environment from one of the locks in ``requirements/`` (scripts/test.py, scripts/example.py).

The locks pin every package, for every supported Python (3.10 and later), with the hashes pip checks, so the
two commands of the README give the same result next month as today; ``python3 scripts/lock.py`` refreshes them.
The project itself is installed editable on top, without its dependencies, built by the locked hatchling.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"


def fingerprint(lock: str) -> str:
    """What a venv was installed from: the lock and the project's metadata (install again when either moves)."""
    digest = hashlib.sha256((LOCKS / f"{lock}.txt").read_bytes())
    digest.update((ROOT / "pyproject.toml").read_bytes())
    return digest.hexdigest()


def install(python: Path, lock: str, *, quiet: bool = True) -> int:
    """``pip install`` the lock ``requirements/<lock>.txt`` into ``python``'s venv, then the project editable.

    Returns pip's exit code (0: installed). ``--require-hashes``: a package whose file differs from the one locked
    is refused, not installed.
    """
    flags = ["--quiet"] if quiet else []
    steps = [
        [str(python), "-m", "pip", "install", *flags, "--require-hashes", "-r", str(LOCKS / f"{lock}.txt")],
        [str(python), "-m", "pip", "install", *flags, "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
    ]
    for step in steps:
        print("+", " ".join(step), flush=True)
        code = subprocess.run(step, cwd=ROOT, check=False).returncode
        if code != 0:
            return code
    return 0
