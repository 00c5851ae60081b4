"""Refresh the locks in ``requirements/`` from pyproject.toml: ``python3 scripts/lock.py``.

    python3 scripts/lock.py              # every package at its newest release that pyproject.toml allows
    python3 scripts/lock.py --check      # exit 1 if pyproject.toml's requirements changed since (test.py runs it)

Each lock is a universal pip requirements file with hashes (Python 3.10 and later, every platform), written by
``uv pip compile`` and installed by plain pip (scripts/locked.py). Its first line is the digest of the
requirements it was made from (dependencies, extras, dependency groups, build requirements), so a change to
them without a new lock is caught at once, offline. Commit the changed files; tox's newest environment
(``python3 scripts/test.py --matrix``) already runs on whatever was released since.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"
#: Each lock: what it installs (pyproject.toml's extras and dependency groups).
WHAT = {
    "dev": ["--all-extras", "--group", "dev"],
    "example": ["--group", "example", "--group", "build"],
}


def requirements_digest() -> str:
    """The digest of what pyproject.toml asks to install: a lock is current while this is its first line's."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli is in the lock (pytest's dependency there)
        import tomli as tomllib  # type: ignore[no-redef]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    asked = {
        "build": project["build-system"]["requires"],
        "dependencies": project["project"]["dependencies"],
        "extras": project["project"]["optional-dependencies"],
        "groups": project["dependency-groups"],
        "python": project["project"]["requires-python"],
    }
    return hashlib.sha256(json.dumps(in_order(asked), sort_keys=True).encode()).hexdigest()


def in_order(value: object) -> object:
    """``value`` with every list sorted: the order requirements are written in changes nothing installed."""
    if isinstance(value, dict):
        return {key: in_order(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((in_order(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    return value


def header() -> str:
    return f"# requirements digest {requirements_digest()}: refresh with python3 scripts/lock.py\n"


def uv() -> Path:
    """The uv of .venv (the dev lock has it), or one installed into a throw-away venv."""
    own = ROOT / ".venv" / "bin" / "uv"
    if own.exists():
        return own
    where = Path(tempfile.mkdtemp(prefix="blake2sign-web-uv-"))
    venv.create(where, with_pip=True)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "uv>=0.9"], check=True)
    return where / "bin" / "uv"


def compile_lock(tool: Path, name: str, output: Path, upgrade: bool) -> None:
    command = [str(tool), "pip", "compile", "pyproject.toml", *WHAT[name], "--universal", "--python-version", "3.10"]
    command += ["--generate-hashes", "--quiet", "--no-header", "--output-file", str(output)]
    if upgrade:
        command.append("--upgrade")
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail if pyproject.toml's requirements moved on")
    args = parser.parse_args()
    if args.check:
        stale = [name for name in WHAT if not (LOCKS / f"{name}.txt").read_text().startswith(header())]
        if stale:
            names = ", ".join(f"requirements/{name}.txt" for name in stale)
            sys.exit(f"{names}: pyproject.toml's requirements changed since the lock was made: python3 scripts/lock.py")
        return
    tool = uv()
    LOCKS.mkdir(exist_ok=True)
    for name in WHAT:
        target = LOCKS / f"{name}.txt"
        compile_lock(tool, name, target, upgrade=True)
        target.write_text(header() + target.read_text())


if __name__ == "__main__":
    main()
