"""Set up a virtual environment and run the example project on 127.0.0.1.

python3 scripts/example.py              # the Django site on http://127.0.0.1:8000/
python3 scripts/example.py --starlette  # the Starlette app on http://127.0.0.1:8001/
"""

from __future__ import annotations

import argparse
import os

from test import BIN, ROOT, run, setup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starlette", action="store_true", help="run the Starlette app instead of the Django site")
    parser.add_argument("--port", type=int, help="port to listen on (default 8000, or 8001 with --starlette)")
    args = parser.parse_args()
    setup()
    os.chdir(ROOT)
    if args.starlette:
        port = args.port or 8001
        print(f"Starlette example on http://127.0.0.1:{port}/ (Ctrl+C to stop)", flush=True)
        run(
            BIN / "python",
            "-m",
            "uvicorn",
            "example_project.starlette_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        )
    else:
        port = args.port or 8000
        print(f"Django example on http://127.0.0.1:{port}/ (Ctrl+C to stop)", flush=True)
        os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.django_site.settings"
        run(BIN / "python", "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload")


if __name__ == "__main__":
    main()
