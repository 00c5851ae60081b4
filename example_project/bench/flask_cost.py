"""What Flask sessions add to one request, counted in instructions by callgrind: ours against Flask's own.

In process, as ``callgrind``'s in-process part counts Django and Starlette: one valgrind run builds three Flask
apps, each serving /login, /read and /write through ``WSGIDriver`` (call the WSGI app, iterate, close), then
counts blocks of requests bracketed by callgrind's client requests (zero, dump):

- ``no sessions``: an interface that opens no session (Flask's null session, never saved), its views doing the
  same dict work on a plain dict: what the request costs without sessions;
- ``Flask SecureCookieSessionInterface``: Flask's own (itsdangerous, HMAC-SHA1, tagged JSON);
- ``blake2sign_web FlaskSessions``: ours, with its defaults (typed values on, as Flask's are).

Workloads, on the login-sized session the Starlette rows use (user id, e-mail, name, CSRF token; not
permanent, so neither interface re-issues an unchanged cookie): ``read`` reads ``user_id``; ``write`` reads it
and increments a counter (a new cookie on every response). What a session adds is the engine's instructions per
request minus the baseline's; the ratio is ours over Flask's. Cookie sizes are the login cookie's value.

    python -m example_project.bench.flask_cost [--requests N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import callgrind, cgparse
from .request_cost import STARLETTE_LOGIN

ROOT = Path(__file__).resolve().parents[2]
SECRET = "flask-bench-secret-0123456789abcdefghijklmnop"
BASELINE, FLASKS, OURS = "no sessions", "Flask SecureCookieSessionInterface", "blake2sign_web FlaskSessions"
ENGINES = (BASELINE, FLASKS, OURS)
WORKLOADS = ("read", "write")


def make_app(engine: str) -> Any:
    import flask
    from flask.sessions import SessionInterface

    app = flask.Flask("bench")
    app.config["SECRET_KEY"] = SECRET
    if engine == OURS:
        from blake2sign_web.flask import FlaskSessions

        FlaskSessions(app)
    elif engine == BASELINE:

        class NoSessions(SessionInterface):
            def open_session(self, app: Any, request: Any) -> None:
                return None  # Flask's null session, which it never saves

            def save_session(self, app: Any, session: Any, response: Any) -> None:
                raise AssertionError("a null session is never saved")

        app.session_interface = NoSessions()
    session: Any = flask.session if engine != BASELINE else None

    @app.get("/login")
    def login() -> str:
        session.update(STARLETTE_LOGIN)
        return "logged in"

    @app.get("/read")
    def read() -> str:
        if session is None:
            return str(dict(STARLETTE_LOGIN).get("user_id"))
        return str(session.get("user_id"))

    @app.get("/write")
    def write() -> str:
        data = dict(STARLETTE_LOGIN) if session is None else session
        data["count"] = data.get("count", 0) + 1
        return str(data.get("user_id"))

    return app


def drivers() -> dict[str, tuple[Any, dict[str, Any], int]]:
    """Per engine: its WSGI driver, the environ of a request carrying the login cookie, and the cookie's size."""
    from .wsgi_driver import WSGIDriver

    built = {}
    for engine in ENGINES:
        driver = WSGIDriver(make_app(engine).wsgi_app)
        headers: dict[str, str] = {}
        size = 0
        if engine != BASELINE:
            driver.request(driver.environ("/login"))
            [cookie] = driver.set_cookies()
            pair = cookie.split(";", 1)[0]
            headers["HTTP_COOKIE"] = pair
            size = len(pair.split("=", 1)[1])
        built[engine] = (driver, headers, size)
    return built


def child(requests: int, warmup: int, labels_path: str) -> None:
    """Under valgrind: count each engine's block of requests for each workload, REPEATS times."""
    built = drivers()
    labels = []
    gc.collect()
    gc.freeze()
    callgrind.start()
    for workload in WORKLOADS:
        for engine, (driver, headers, size) in built.items():
            environ = driver.environ(f"/{workload}", headers=headers)
            for _ in range(warmup):
                driver.request(environ)
            for repeat in range(callgrind.REPEATS):
                gc.collect()
                gc.disable()
                callgrind.zero()
                for _ in range(requests):
                    driver.request(environ)
                callgrind.dump()
                gc.enable()
                labels.append({"engine": engine, "workload": workload, "repeat": repeat, "requests": requests})
                labels[-1]["size"] = size
    Path(labels_path).write_text(json.dumps(labels))


def measure(requests: int, warmup: int) -> dict[str, Any]:
    """{workload: {engine: Ir per request (the repeats' median)}}, the cookie sizes and the ratios."""
    problem = callgrind.supported()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        labels_path = directory / "labels.json"
        argv = [sys.executable, "-m", "example_project.bench.flask_cost", "--child", str(requests), str(warmup)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env["PYTHONHASHSEED"] = "0"
        process = subprocess.run(
            [*callgrind.command(directory), *argv, str(labels_path)], cwd=ROOT, env=env, check=False
        )
        if process.returncode != 0:
            raise SystemExit(f"valgrind run failed ({process.returncode})")
        names: dict[str, dict[str, str]] = {}
        found = [p for p in directory.glob("callgrind.out.*.*") if p.suffix[1:].isdigit()]
        dumps = [cgparse.parse(p, names) for p in sorted(found, key=lambda p: int(p.suffix[1:]))]
        labels = json.loads(labels_path.read_text())
    counts: dict[str, dict[str, list[float]]] = {}
    sizes: dict[str, int] = {}
    for dump, label in zip(dumps, labels, strict=True):
        counts.setdefault(label["workload"], {}).setdefault(label["engine"], []).append(
            dump.total("Ir") / label["requests"]
        )
        sizes[label["engine"]] = label["size"]
    per_request = {w: {e: sorted(v)[len(v) // 2] for e, v in by.items()} for w, by in counts.items()}
    added = {w: {e: by[e] - by[BASELINE] for e in (FLASKS, OURS)} for w, by in per_request.items()}
    return {
        "instructions_per_request": per_request,
        "added_by_sessions": added,
        "ratio_ours_over_flasks": {w: by[OURS] / by[FLASKS] for w, by in added.items()},
        "cookie_bytes": {FLASKS: sizes[FLASKS], OURS: sizes[OURS]},
        "cookie_ratio": sizes[OURS] / sizes[FLASKS],
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per counted block")
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps(measure(args.requests, args.warmup), indent=2))


if __name__ == "__main__":
    main()
