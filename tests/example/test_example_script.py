"""scripts/example.py: starts both sites, and stops both cleanly on SIGTERM or Ctrl+C (SIGINT)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.servers import ROOT, free_port, listening

pytestmark = pytest.mark.server


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl+C"])
def test_both_sites_start_and_stop_cleanly(tmp_path: Path, signum: int) -> None:
    django_port, starlette_port = free_port(), free_port()
    command = [
        sys.executable,
        "scripts/example.py",
        "--no-install",  # the venv running the tests has every package
        "--django-port",
        str(django_port),
        "--starlette-port",
        str(starlette_port),
    ]
    env = {**os.environ, "EXAMPLE_VENV": sys.prefix, "EXAMPLE_DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (listening(django_port) and listening(starlette_port)):
            assert process.poll() is None, process.communicate()[1].decode()
            assert time.monotonic() < deadline, "the sites did not start within 60 s"
            time.sleep(0.1)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=10)  # GRACE is 5 s: a clean stop is well within
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert f"http://127.0.0.1:{django_port}/" in stdout.decode()
    assert f"http://127.0.0.1:{starlette_port}/" in stdout.decode()
    assert "Traceback" not in stderr.decode()
    assert process.returncode == 0
    assert not listening(django_port)
    assert not listening(starlette_port)
    # The start command applied the migrations (which made the demo user) in the data directory.
    assert (tmp_path / "db.sqlite3").exists()


def load_script(venv: Path) -> ModuleType:
    os.environ["EXAMPLE_VENV"] = str(venv)
    sys.path.insert(0, str(ROOT / "scripts"))  # as when run: its folder first (it imports scripts/locked.py)
    try:
        spec = importlib.util.spec_from_file_location("example_script", ROOT / "scripts" / "example.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        del os.environ["EXAMPLE_VENV"]
        sys.path.remove(str(ROOT / "scripts"))


def test_installs_again_only_when_the_lock_or_pyproject_changes(tmp_path: Path) -> None:
    script = load_script(tmp_path)
    assert script.needs_install()  # no venv yet
    script.BIN.mkdir(parents=True)
    script.PYTHON.symlink_to(sys.executable)
    assert script.needs_install()  # a venv, but nothing installed from this lock and pyproject.toml
    script.MARKER.write_text(script.locked.fingerprint("example"))
    assert not script.needs_install()
    script.MARKER.write_text("0" * 64)  # installed from another lock or pyproject.toml
    assert script.needs_install()
