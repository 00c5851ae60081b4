"""Every extra, and every documented combination of extras, works alone: the built wheel, installed with it into
a clean venv that has nothing else, runs what that extra promises (tests/packaging/smoke.py).

The test environment has every framework at once, which hides a module an extra forgets to bring (Quart with
Redis once needed anyio, which only Starlette brings). The venvs are made by uv, with the versions of the lock
(requirements/dev.txt) as constraints, so the result is the same next month; tox's newest environment follows
upstream releases.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis_server import RedisServer, redis_server_fixture

ROOT = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("smoke.py")
LOCK = ROOT / "requirements" / "dev.txt"
#: The extras of pyproject.toml, alone and in the combinations the docs show.
COMBINATIONS = [
    "django",
    "starlette",
    "fastapi",
    "flask",
    "quart",
    "encrypted",
    "quart,redis",
    "flask,redis",
    "starlette,redis",
    "django,redis",
]

pytestmark = pytest.mark.server


def uv() -> str:
    found = Path(sys.executable).with_name("uv")
    assert found.exists(), "uv is in the dev dependency group (pyproject.toml): python3 scripts/test.py installs it"
    return str(found)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel users install, built as a release is (hatchling from the lock, no network for the build)."""
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", out, ROOT]
    subprocess.run([str(part) for part in command], check=True)
    (built,) = out.glob("blake2sign_web-*.whl")
    return built


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


@pytest.mark.parametrize("extras", COMBINATIONS)
def test_extra_works_alone(extras: str, wheel: Path, redis_server: RedisServer, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([uv(), "venv", "--quiet", "--python", sys._base_executable, venv], check=True)  # type: ignore[attr-defined]
    python = venv / "bin" / "python"
    install = [uv(), "pip", "install", "--quiet", "--python", python, "--constraint", LOCK, f"{wheel}[{extras}]"]
    subprocess.run([str(part) for part in install], check=True)
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    smoke = subprocess.run(
        [str(python), str(SMOKE), extras, redis_server.url],
        cwd=tmp_path,  # not the checkout: only the installed wheel can answer
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert f"smoke: [{extras}] ok" in smoke.stdout
