"""Run the example sites: Django on http://127.0.0.1:8000/ and FastAPI on http://127.0.0.1:8001/.

    python3 scripts/example.py               # both; Ctrl+C (or SIGTERM) stops both
    python3 scripts/example.py --django      # only the Django site
    python3 scripts/example.py --starlette   # only the FastAPI (Starlette) app

Needs only Python 3.10+ and the package index. The first run makes .venv (or the venv named
by EXAMPLE_VENV) and installs the project with its ``example`` dependency group into it from the lock
requirements/example.txt, nothing else; later runs install again only when the lock or pyproject.toml has changed
(their hash is kept in the venv).
Django's migrations are applied at every start, which also creates the demo user (demo/demo).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path
from types import FrameType

import locked

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("EXAMPLE_VENV") or ROOT / ".venv")
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
#: The hash of the lock and pyproject.toml the venv's packages were installed from.
MARKER = VENV / ".blake2sign-web-example"
#: Seconds a server gets to stop after SIGTERM before it is killed.
GRACE = 5.0


def needs_install() -> bool:
    return not PYTHON.exists() or not MARKER.exists() or MARKER.read_text().strip() != locked.fingerprint("example")


def install() -> None:
    """Make the venv if needed and install the example's packages; remember what they came from."""
    if not PYTHON.exists():
        print(f"Creating {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    print("Installing the example's packages from requirements/example.txt (only when it changes)", flush=True)
    if locked.install(PYTHON, "example") != 0:
        sys.exit("pip could not install the example's packages (see above)")
    MARKER.write_text(locked.fingerprint("example"))


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "example_project.django_site.settings",  # whatever the shell had
    }


def migrate() -> None:
    """Apply Django's migrations (SQLite); the accounts app's first one creates the demo user."""
    command = [str(PYTHON), "example_project/django_site/manage.py", "migrate", "--noinput", "-v", "0"]
    if subprocess.run(command, cwd=ROOT, env=environment(), check=False).returncode != 0:
        sys.exit("Django's migrations failed (see above)")


def start(command: list[str]) -> subprocess.Popen[bytes]:
    """Start a server in its own process group, so that stopping it stops everything it started."""
    return subprocess.Popen(command, cwd=ROOT, env=environment(), start_new_session=True)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM every server's process group, then SIGKILL whatever is left after GRACE seconds."""
    for process in processes:
        _signal_group(process, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()
        _signal_group(process, signal.SIGKILL)  # anything the server left behind in its group


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


class Stop(Exception):
    """Raised by the SIGINT/SIGTERM handler: leave the wait loop and stop the servers."""


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise Stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--django", action="store_true", help="run only the Django site")
    only.add_argument("--starlette", action="store_true", help="run only the FastAPI (Starlette) app")
    parser.add_argument("--django-port", type=int, default=8000)
    parser.add_argument("--starlette-port", type=int, default=8001)
    parser.add_argument("--no-install", action="store_true", help="use the venv as it is (no pip)")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        if not args.no_install and needs_install():
            install()
        sites = []
        if not args.starlette:
            migrate()
            port = args.django_port
            processes.append(
                start(
                    [
                        str(PYTHON),
                        "example_project/django_site/manage.py",
                        "runserver",
                        f"127.0.0.1:{port}",
                        "--noreload",
                    ]
                )
            )
            sites.append(f"Django site:   http://127.0.0.1:{port}/")
        if not args.django:
            port = args.starlette_port
            app = "example_project.fastapi_site.app:app"
            processes.append(
                start(
                    [str(PYTHON), "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port), "--lifespan", "on"]
                )
            )
            sites.append(f"FastAPI app:   http://127.0.0.1:{port}/")
        print("\n".join(["", *sites, "Log in as demo / demo. Ctrl+C stops everything.", ""]), flush=True)
        while all(process.poll() is None for process in processes):
            time.sleep(0.2)
        failed = [process for process in processes if process.returncode not in (None, 0)]
        if failed:
            print(f"A server exited with status {failed[0].returncode}; stopping the others.", file=sys.stderr)
    except Stop:
        print("\nStopping…", flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl+C must not interrupt the clean-up
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop(processes)


if __name__ == "__main__":
    main()
