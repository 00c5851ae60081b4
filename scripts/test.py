"""Set up a virtual environment and run every check: lint, format, types, tests, docs.

    python3 scripts/test.py            # .venv from the lock (requirements/dev.txt), then every check
    python3 scripts/test.py --matrix   # then tox's oldest and newest (the canary: upstream's latest releases)
    python3 scripts/test.py --long     # the long property, fuzzing and soak runs (tens of minutes)

Needs only Python 3.10+ and the package index. Exits non-zero on the first failure. The lock pins every
package with its hashes, so this gives the same result next month as today; ``python3 scripts/lock.py`` refreshes it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import locked

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
#: Folders of npm packages the tests run, each installed from its package-lock.json.
NODE_PACKAGES = [ROOT / "tests" / "edge" / "workerd"]
#: The extremes of tox.ini's matrix, run with --matrix when their interpreters exist.
MATRIX_EXTREMES = ["py310-django42-starletteoldest", "py312-django60-starlettenewest"]


def run(*command: str | Path) -> None:
    print("+", " ".join(str(part) for part in command), flush=True)
    completed = subprocess.run([str(part) for part in command], cwd=ROOT, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def setup() -> None:
    if not (BIN / "python").exists():
        venv.create(VENV, with_pip=True)
    code = locked.install(BIN / "python", "dev")  # a few seconds when nothing changed
    if code != 0:
        sys.exit(code)
    node_packages()


def node_packages() -> None:
    """The npm packages the edge tests run (workerd, Cloudflare's runtime), from their lock, when npm is here.

    Without npm those tests skip saying so (CI, which installs Node.js first, fails them instead). ``npm ci`` runs
    only when the lock changed since the last install: its fingerprint is kept beside the packages.
    """
    npm = shutil.which("npm")
    if npm is None:
        print("node packages: no npm on PATH; the workerd tests will say what to install", flush=True)
        return
    for folder in NODE_PACKAGES:
        lock = folder / "package-lock.json"
        marker = folder / "node_modules" / ".installed-lock"
        fingerprint = hashlib.sha256(lock.read_bytes()).hexdigest()
        if marker.exists() and marker.read_text() == fingerprint:
            continue
        run(npm, "ci", "--prefix", folder, "--no-audit", "--no-fund", "--loglevel=error")
        marker.write_text(fingerprint)


def checks(long: bool = False) -> None:
    run(BIN / "python", "scripts/lock.py", "--check")
    run(BIN / "ruff", "check", ".")
    run(BIN / "ruff", "format", "--check", ".")
    run(BIN / "mypy")
    run(BIN / "python", "-m", "pytest", "-p", "no:cacheprovider", *(["--long"] if long else []))
    run(BIN / "python", "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", VENV / "site")


def find_python(version: str) -> Path | None:
    """A working ``python<version>``: on PATH, or installed by pyenv but not activated."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "--version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return Path(candidate)
    return None


def matrix() -> None:
    found = {env: find_python(f"{env[2]}.{env[3:5]}") for env in MATRIX_EXTREMES}
    available = [env for env, python in found.items() if python is not None]
    for env in sorted(set(MATRIX_EXTREMES) - set(available)):
        print(f"matrix: no interpreter for {env}; skipped", flush=True)
    if not available:
        return
    path = os.pathsep.join([*(str(found[env].parent) for env in available), os.environ["PATH"]])  # type: ignore[union-attr]
    print("+ tox run -e " + ",".join(available), flush=True)
    completed = subprocess.run(
        [str(BIN / "python"), "-m", "tox", "run", "-e", ",".join(available)],
        cwd=ROOT,
        env={**os.environ, "PATH": path},
        check=False,
    )
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matrix", action="store_true", help="also run tox's oldest and newest environments")
    parser.add_argument("--long", action="store_true", help="long property, fuzzing and soak runs (tests/longrun.py)")
    args = parser.parse_args()
    setup()
    checks(long=args.long)
    if args.matrix:
        matrix()


if __name__ == "__main__":
    main()
