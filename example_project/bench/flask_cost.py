"""What Flask sessions add to one request, counted in instructions by callgrind: ours against Flask's own.

Three Flask apps (and the same three on Quart, in process), each serving /login, /api, /read and /write:

- ``no sessions``: an interface that opens no session (Flask's null session, never saved), its views doing the
  same dict work on a plain dict: what the request costs without sessions (and, as a probe, the same with a
  session-sized Cookie header it never reads: what the header alone costs);
- ``Flask SecureCookieSessionInterface``: Flask's own (itsdangerous, HMAC-SHA1, tagged JSON);
- ``blake2sign_web FlaskSessions``: ours, with its defaults (typed values on, as Flask's are).

Counted two ways, as ``callgrind`` counts Django and Starlette:

- **in process**: one valgrind run builds the three apps, drives each through ``WSGIDriver`` (call the WSGI app,
  iterate, close), and counts blocks of requests bracketed by callgrind's client requests (zero, dump);
- **on a gunicorn worker**: one gunicorn (one sync worker) per app under valgrind, a client in this process sending
  blocks of requests over 127.0.0.1 between the marker requests (``callgrind.count_server``): gunicorn's parsing,
  Flask, the session and the socket calls' user-space side.

Workloads, on the login-sized session the Starlette rows use (user id, e-mail, name, CSRF token; not
permanent, so neither interface re-issues an unchanged cookie): ``api`` never touches the session; ``read`` reads
``user_id``; ``write`` reads it and increments a counter (a new cookie on every response). What a session adds is
the engine's instructions per request minus the baseline's, per repeat; the ratio is ours over Flask's (Quart's).
Cookie sizes are the login cookie's value.

    python -m example_project.bench flask          # both ways, into docs/performance.md and results.json
    python -m example_project.bench.flask_cost     # the same, printed as JSON only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from . import callgrind
from .request_cost import STARLETTE_LOGIN, probe_cookie

ROOT = Path(__file__).resolve().parents[2]
SECRET = "flask-bench-secret-0123456789abcdefghijklmnop"
BASELINE, FLASKS, OURS = "no sessions", "Flask SecureCookieSessionInterface", "blake2sign_web FlaskSessions"
ENGINES = (BASELINE, FLASKS, OURS)
#: The same three on Quart (in process only): its null session, its own interface, our ``QuartSessions``.
QUART_BASELINE, QUARTS = "Quart, no sessions", "Quart SecureCookieSessionInterface"
QUART_OURS = "blake2sign_web QuartSessions"
QUART_ENGINES = (QUART_BASELINE, QUARTS, QUART_OURS)
#: Ours with SESSION_REFRESH_EACH_REQUEST off, where a request reads its session when it first uses it. With it on
#: (Flask's default) Flask's contract re-issues a permanent session's cookie on every response, so every request
#: with a cookie reads it, used or not: the ``api`` row of ``OURS`` pays a read.
OURS_LAZY = "blake2sign_web FlaskSessions, SESSION_REFRESH_EACH_REQUEST off"
QUART_OURS_LAZY = "blake2sign_web QuartSessions, SESSION_REFRESH_EACH_REQUEST off"
#: ``PROBE`` on Quart, whose request parses every header into ``request.headers`` (a Cookie header costs more).
QUART_PROBE = "Quart, no sessions, a session-sized Cookie header sent"
#: The session-less app sent a session-sized Cookie header it never reads: what the header alone costs (gunicorn
#: parses it; Werkzeug keeps it in the environ). Named as both interfaces name theirs, as long as our login cookie.
PROBE = "no sessions, a session-sized Cookie header sent"
PROBE_COOKIE = probe_cookie("starlette")
#: ``api`` never touches the session (what a lazy session saves: a request that does not use it should cost about
#: what it costs without sessions), ``read`` reads the user id, ``write`` also increments a counter.
WORKLOADS = ("api", "read", "write")
#: Requests per counted block and uncounted ones before the first, in process and on a server (see
#: ``callgrind.SERVER_WARMUP`` for why a server's blocks are long and come after 50 requests).
REQUESTS, WARMUP = 200, 50
SERVER_REQUESTS, SERVER_WARMUP = 200, callgrind.SERVER_WARMUP
#: What gunicorn serves: ``server_app()`` builds the app ``BENCH_ENGINE`` names.
SERVER_APP = "example_project.bench.flask_cost:server_app()"


def make_app(engine: str) -> Any:
    import flask
    from flask.sessions import SessionInterface

    app = flask.Flask("bench")
    app.config["SECRET_KEY"] = SECRET
    app.config["SESSION_REFRESH_EACH_REQUEST"] = engine != OURS_LAZY
    if engine in (OURS, OURS_LAZY):
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

    @app.get("/api")
    def api() -> str:
        return "ok"  # never touches the session

    @app.get("/read")
    def read() -> str:
        if session is None:
            return str(dict(STARLETTE_LOGIN).get("user_id"))
        return str(session.get("user_id"))

    @app.get("/write")
    def write() -> str:
        data: Any = dict(STARLETTE_LOGIN) if session is None else session
        data["count"] = data.get("count", 0) + 1
        return str(data.get("user_id"))

    return app


def make_quart_app(engine: str) -> Any:
    """``make_app``'s app on Quart: the same views, async."""
    import quart
    from quart.sessions import SessionInterface

    app = quart.Quart("bench")
    app.config["SECRET_KEY"] = SECRET
    app.config["SESSION_REFRESH_EACH_REQUEST"] = engine != QUART_OURS_LAZY
    if engine in (QUART_OURS, QUART_OURS_LAZY):
        from blake2sign_web.flask.quart import QuartSessions

        QuartSessions(app)
    elif engine == QUART_BASELINE:

        class NoSessions(SessionInterface):
            async def open_session(self, app: Any, request: Any) -> None:
                return None  # Quart's null session, which it never saves

            async def save_session(self, app: Any, session: Any, response: Any) -> None:
                raise AssertionError("a null session is never saved")

        app.session_interface = NoSessions()
    session: Any = quart.session if engine != QUART_BASELINE else None

    @app.get("/login")
    async def login() -> str:
        session.update(STARLETTE_LOGIN)
        return "logged in"

    @app.get("/api")
    async def api() -> str:
        return "ok"  # never touches the session

    @app.get("/read")
    async def read() -> str:
        if session is None:
            return str(dict(STARLETTE_LOGIN).get("user_id"))
        return str(session.get("user_id"))

    @app.get("/write")
    async def write() -> str:
        data: Any = dict(STARLETTE_LOGIN) if session is None else session
        data["count"] = data.get("count", 0) + 1
        return str(data.get("user_id"))

    return app


class QuartRequests:
    """A Quart app driven in process as an ASGI server calls it (``asgi_driver.Driver``, on an event loop: Quart
    runs each request as tasks), with ``WSGIDriver``'s ``environ``/``request`` so ``child`` drives both alike."""

    def __init__(self, app: Any) -> None:
        import asyncio

        from .asgi_driver import Driver

        self.loop = asyncio.new_event_loop()
        self.driver = Driver(app, self.loop)
        self.driver._receive = self._receive  # type: ignore[method-assign]
        self.sent = False

    async def _receive(self) -> dict[str, Any]:
        """The request's body, then nothing until the response is sent (Quart then cancels the wait), as a server
        whose client stays connected: a receive that never waits would spin Quart's message loop for ever."""
        if self.sent:
            await self.loop.create_future()
        self.sent = True
        return {"type": "http.request", "body": b"", "more_body": False}

    def environ(self, path: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
        scope = self.driver.scope(path)
        cookie = (headers or {}).get("HTTP_COOKIE")
        if cookie is not None:
            scope["headers"].append((b"cookie", cookie.encode("latin-1")))
        return scope

    def request(self, scope: dict[str, Any]) -> None:
        self.sent = False
        self.driver.request({**scope, "state": {}})  # a fresh scope each time, as a server gives

    def login_cookie(self) -> str:
        self.driver.set_cookie = None
        self.request(self.environ("/login"))
        assert self.driver.set_cookie is not None
        return self.driver.set_cookie.decode("latin-1").split(";", 1)[0]


def server_app() -> Any:
    """gunicorn's factory: the app of ``BENCH_ENGINE``, with the benchmark's markers outside Flask when
    ``BENCH_MARKERS=1`` (a marker request opens no session)."""
    from .server_apps import Markers

    app = make_app(os.environ["BENCH_ENGINE"])
    if os.environ.get("BENCH_MARKERS") == "1":
        app.wsgi_app = Markers().wsgi(app.wsgi_app)
    return app


def drivers() -> dict[str, tuple[Any, dict[str, Any], int]]:
    """Per engine (Flask's and Quart's): its driver (WSGI, or ``QuartRequests``), the environ of a request
    carrying the login cookie, and the cookie's size."""
    from .wsgi_driver import WSGIDriver

    built = {}
    for engine in (*ENGINES, OURS_LAZY):
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
    for engine in (*QUART_ENGINES, QUART_OURS_LAZY):
        quart_driver = QuartRequests(make_quart_app(engine))
        headers, size = {}, 0
        if engine != QUART_BASELINE:
            pair = quart_driver.login_cookie()
            headers["HTTP_COOKIE"] = pair
            size = len(pair.split("=", 1)[1])
        built[engine] = (quart_driver, headers, size)
    return built


def child(requests: int, warmup: int, labels_path: str) -> None:
    """Under valgrind: each engine's requests for each workload, counted by ``callgrind.count``."""
    built = drivers()
    rows = [(engine, *found) for engine, found in built.items()]
    probe_value = PROBE_COOKIE.split("=", 1)[1]
    rows.insert(1, (PROBE, built[BASELINE][0], {"HTTP_COOKIE": PROBE_COOKIE}, len(probe_value)))
    at = [row[0] for row in rows].index(QUART_BASELINE) + 1
    rows.insert(at, (QUART_PROBE, built[QUART_BASELINE][0], {"HTTP_COOKIE": PROBE_COOKIE}, len(probe_value)))
    labels: list[dict[str, Any]] = []
    callgrind.begin()
    for workload in WORKLOADS:
        for engine, driver, headers, size in rows:
            environ = driver.environ(f"/{workload}", headers=headers)
            label = {"engine": engine, "workload": workload, "size": size}
            callgrind.count(label, partial(driver.request, environ), requests, warmup, labels)
    Path(labels_path).write_text(json.dumps(labels))


def in_process(requests: int, warmup: int, timeout: float) -> dict[str, Any]:
    """{workload: {engine: callgrind.summarise's row}}, from one valgrind run of ``child``."""
    argv = ["example_project.bench.flask_cost", "--child", str(requests), str(warmup)]
    [found] = callgrind.run_children({"flask": (argv, {})}, timeout, lambda: None).values()
    if isinstance(found, dict):
        raise RuntimeError(f"valgrind run failed: {found['error']}")
    return callgrind.summarise(*found)


def serve(engine: str, out: Path, requests: int, warmup: int, timeout: float) -> dict[str, Any]:
    """One gunicorn (one sync worker) serving ``engine`` under valgrind: {workload: {engine: row}}."""
    from .http_load import Server

    env = {"BENCH_MARKERS": "1", "PYTHONHASHSEED": "0"}
    prefix = callgrind.command(out)
    server = Server("flask", engine, env, None, prefix=prefix, timeout=300, wsgi_app=SERVER_APP)

    def plan(server: Server) -> list[tuple[str, str, str, str | None]]:
        if engine == BASELINE:
            variants = [(BASELINE, None), (PROBE, PROBE_COOKIE)]
        else:
            variants = [(engine, server.login_cookie())]
        return [(label, workload, f"/{workload}", sent) for workload in WORKLOADS for label, sent in variants]

    return callgrind.count_server(server, out, plan, requests, warmup, timeout)


def run(
    tick: Callable[[], object] = lambda: None,
    requests: int = REQUESTS,
    server_requests: int | None = SERVER_REQUESTS,
    warmup: int = WARMUP,
    server_warmup: int = SERVER_WARMUP,
    timeout: float = 1200,
) -> dict[str, Any]:
    """The part: in process and (unless ``server_requests`` is None) on gunicorn, two valgrind runs at a time (the
    machine's two cores); {"settings", "in_process", "server", "cookie_bytes"} or {"error": why}. Four ticks."""
    from concurrent.futures import ThreadPoolExecutor

    why = callgrind.supported()
    if why is not None:
        return {"error": why}
    out: dict[str, Any] = {"in_process": {}, "server": {}}
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def job(engine: str | None) -> None:
            try:
                if engine is None or server_requests is None:
                    out["in_process"] = in_process(requests, warmup, timeout)
                else:
                    directory = Path(tmp) / str(ENGINES.index(engine))
                    directory.mkdir()
                    for workload, rows in serve(engine, directory, server_requests, server_warmup, timeout).items():
                        out["server"].setdefault(workload, {}).update(rows)
            except Exception as error:  # one run's failure is reported, the others go on
                errors["in process" if engine is None else engine] = repr(error)[-1500:]
            tick()

        jobs: list[str | None] = [None, *(ENGINES if server_requests is not None else ())]
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(job, jobs))
    sizes = {e: r["cookie_bytes"] for e, r in (out["in_process"].get("read") or {}).items() if e in (FLASKS, OURS)}
    settings = {
        "requests": requests,
        "warmup": warmup,
        "server_requests": server_requests,
        "server_warmup": server_warmup if server_requests is not None else None,
        "repeats": callgrind.REPEATS,
        "caches": callgrind.CACHES,
        "versions": versions(),
    }
    part = {"settings": settings, **out, "cookie_bytes": sizes}
    if errors:
        part["errors"] = errors
    return part


def versions() -> dict[str, str]:
    from importlib import metadata

    return {name: metadata.version(name) for name in ("Flask", "Werkzeug", "itsdangerous", "gunicorn")}


def added(rows: dict[str, Any], engine: str, baseline: str = BASELINE) -> list[float]:
    """Instructions ``engine`` adds per request over ``baseline``, one value per repeat."""
    return [e - b for e, b in zip(rows[engine]["Ir"], rows[baseline]["Ir"], strict=False)]


def ratios(rows: dict[str, Any], engines: tuple[str, str, str] = ENGINES) -> list[float]:
    """Ours' added instructions over the framework's own interface's, per repeat (``engines``: baseline, theirs,
    ours: Flask's, or ``QUART_ENGINES``)."""
    baseline, theirs, ours = engines
    mine, other = added(rows, ours, baseline), added(rows, theirs, baseline)
    return [m / o for m, o in zip(mine, other, strict=False) if o > 0]


# --- the page -----------------------------------------------------------------------------------------------


#: Issue 39's: Quart's read at most this fraction of what Quart's own session interface adds.
QUART_READ_TARGET = 0.30
WHERE_39 = "callgrind, in process (issue 39)"
#: Issue 39's: a request that never touches the session adds at most this many thousand instructions over the
#: same app with sessions off (Flask's and Quart's ``NullSessionInterface``), in Flask and in Quart.
UNTOUCHED_TARGET = 20
UNTOUCHED_WHERE = "callgrind, in process (issue 39, SESSION_REFRESH_EACH_REQUEST off): k instructions added"


def targets(part: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 30's: our ``FlaskSessions`` against Flask's ``SecureCookieSessionInterface``, on every repeat; issue
    39's: Quart's read against Quart's own interface, and the untouched request's added instructions."""
    from .targets import FLASK_TARGET, _range_entry

    out = []
    quick = bool(part.get("settings", {}).get("quick"))
    for where, key in (("callgrind, in process", "in_process"), ("callgrind, server worker", "server")):
        for workload in ("read", "write"):
            rows = (part.get(key) or {}).get(workload) or {}
            if all(n in rows for n in ENGINES):
                values = ratios(rows)
                ours, theirs = OURS, FLASKS
                out.append(_range_entry(where, "flask", workload, ours, theirs, FLASK_TARGET, values, quick))
    rows_by_workload = part.get("in_process") or {}
    quart_read = rows_by_workload.get("read") or {}
    if all(n in quart_read for n in QUART_ENGINES):
        values = ratios(quart_read, QUART_ENGINES)
        out.append(_range_entry(WHERE_39, "quart", "read", QUART_OURS, QUARTS, QUART_READ_TARGET, values, quick))
    untouched = rows_by_workload.get("api") or {}
    for framework, ours, baseline in (("flask", OURS_LAZY, BASELINE), ("quart", QUART_OURS_LAZY, QUART_BASELINE)):
        if ours in untouched and baseline in untouched:
            values = [v / 1000 for v in added(untouched, ours, baseline)]
            out.append(_range_entry(UNTOUCHED_WHERE, framework, "api", ours, baseline, UNTOUCHED_TARGET, values, quick))
    return out


def section(part: dict[str, Any], targets: list[dict[str, Any]]) -> list[str]:
    """The performance page's "Flask" section: what each session adds in process and on gunicorn, the ratios
    and their verdicts (``targets``: results.json's, judged by ``targets``), the cookie sizes."""
    from .formatting import fmt, kilo, where_note
    from .targets import FLASK_COOKIE_TARGET, FLASK_TARGET, LABELS

    lines = ["## Flask: what a session adds", ""]
    if not part:
        return [*lines, "Not run yet: `python -m example_project.bench flask`.", ""]
    if "error" in part:
        return [*lines, f"Not run: {part['error']}", ""]
    s = part["settings"]
    versions = ", ".join(f"{k} {v}" for k, v in s.get("versions", {}).items())
    server = (
        f"**on a gunicorn worker**, one sync worker per app under valgrind and a client in another process sending "
        f"blocks of {s['server_requests']} requests over 127.0.0.1 after {s['server_warmup']} uncounted ones, "
        "between two marker requests answered outside Flask (gunicorn's HTTP parsing, Flask, the session and the "
        "socket calls' user-space side: valgrind sees no kernel instruction)"
        if s.get("server_requests")
        else "no gunicorn run"
    )
    lines += [
        f"{where_note(part)}; {versions}. Our `FlaskSessions` (`blake2sign_web.flask`, its defaults: typed values "
        "on, as Flask's are) against Flask's own `SecureCookieSessionInterface` (itsdangerous, HMAC-SHA1, tagged "
        "JSON) and the same app without sessions (Flask's null session; its views do the same dict work on a plain "
        f"dict; it is also sent a {len(PROBE_COOKIE.split('=', 1)[1])}-byte Cookie header it never reads, as long as "
        "our login cookie: the header's own cost, which the server parses whoever reads it), on the login-sized "
        "session of the Starlette rows (user id, e-mail, name, CSRF token; not permanent, "
        "so neither re-issues an unchanged cookie). *Read-only* reads the user id; *read+write* also increments a "
        "counter, so the cookie is signed and sent again. Instructions per request (callgrind, caches "
        f"{' '.join(s['caches'])}): **in process**, each app's WSGI callable called, its response iterated and "
        f"closed as gunicorn's sync worker does, blocks of {s['requests']} requests after {s['warmup']} uncounted "
        f"ones; {server}. Each block runs {s['repeats']} times: medians, with the range (min-max) of the repeats; "
        "the ratio ours / Flask's is of the instructions each adds over the session-less app, taken repeat by "
        f"repeat. Issue 30's targets: at most {FLASK_TARGET:.2f} of Flask's, read and read+write, in process and on "
        f"gunicorn ('met' when every repeat is within it); the cookie at most {FLASK_COOKIE_TARGET:.2f} of Flask's.",
        "",
    ]
    verdicts = {(t["where"], t["workload"]): t for t in targets if t["framework"] == "flask"}
    for key, where, title in (
        ("in_process", "callgrind, in process", "in process"),
        ("server", "callgrind, server worker", "on a gunicorn worker (1 sync worker)"),
    ):
        by_workload = part.get(key) or {}
        if not by_workload:
            continue
        lines += [
            f"### Flask, {title}",
            "",
            "| request | engine | instructions | added | added range | ours / Flask's (min-max) | verdict |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
        for workload in WORKLOADS:
            rows = by_workload.get(workload) or {}
            if not all(e in rows for e in ENGINES):
                continue
            t = verdicts.get((where, workload), {})
            shown = (BASELINE, PROBE, FLASKS, OURS) if PROBE in rows else ENGINES
            for engine in (*shown, OURS_LAZY) if OURS_LAZY in rows else shown:
                total = kilo(statistics.median(rows[engine]["Ir"]))
                if engine == BASELINE:
                    lines.append(f"| {LABELS[workload]} | {engine} | {total} | baseline | | | |")
                    continue
                extra = added(rows, engine)
                ratio = (
                    f"**{fmt(t.get('median'))}** ({fmt(t.get('low'))}-{fmt(t.get('high'))})"
                    if engine == OURS and t
                    else ""
                )
                lines.append(
                    f"| {LABELS[workload]} | {engine} | {total} | {kilo(statistics.median(extra))} | "
                    f"{kilo(min(extra))} - {kilo(max(extra))} | {ratio} | {t.get('verdict', '') if ratio else ''} |"
                )
        lines.append("")
    quart_rows = part.get("in_process") or {}
    if any(all(e in quart_rows.get(w, {}) for e in QUART_ENGINES) for w in WORKLOADS):
        lines += [
            "### Quart, in process",
            "",
            "The same apps on Quart (its views async), each request driven through its ASGI callable on an event "
            "loop (Quart runs a request as tasks); our `QuartSessions` against Quart's own interface.",
            "",
            "| request | engine | instructions | added | added range | ours / Quart's (min-max) |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for workload in WORKLOADS:
            rows = quart_rows.get(workload) or {}
            if not all(e in rows for e in QUART_ENGINES):
                continue
            lines.append(
                f"| {LABELS[workload]} | {QUART_BASELINE} | {kilo(statistics.median(rows[QUART_BASELINE]['Ir']))} "
                "| baseline | | |"
            )
            values = ratios(rows, QUART_ENGINES)
            shown = (QUART_PROBE, *QUART_ENGINES[1:]) if QUART_PROBE in rows else QUART_ENGINES[1:]
            for engine in (*shown, QUART_OURS_LAZY) if QUART_OURS_LAZY in rows else shown:
                extra = added(rows, engine, QUART_BASELINE)
                ratio = (
                    f"**{fmt(statistics.median(values))}** ({fmt(min(values))}-{fmt(max(values))})"
                    if engine == QUART_OURS and values
                    else ""
                )
                lines.append(
                    f"| {LABELS[workload]} | {engine} | {kilo(statistics.median(rows[engine]['Ir']))} | "
                    f"{kilo(statistics.median(extra))} | {kilo(min(extra))} - {kilo(max(extra))} | {ratio} |"
                )
        lines.append("")
    sizes = part.get("cookie_bytes") or {}
    if FLASKS in sizes and OURS in sizes:
        ratio = sizes[OURS] / sizes[FLASKS]
        verdict = "met" if ratio <= FLASK_COOKIE_TARGET else "MISSED"
        lines += [
            "### Flask, the cookie",
            "",
            "The login session's cookie value, as each interface set it (the same session in both).",
            "",
            "| engine | cookie value | ours / Flask's | verdict |",
            "|---|---:|---:|---|",
            f"| {FLASKS} | {sizes[FLASKS]} B | | |",
            f"| {OURS} | {sizes[OURS]} B | **{ratio:.2f}** | {verdict} (at most {FLASK_COOKIE_TARGET:.2f}) |",
            "",
        ]
    lines += [
        "Re-run: `python -m example_project.bench flask` (valgrind; several minutes on 2 cores), or "
        "`python -m example_project.bench.flask_cost` for the figures as JSON without touching this page.",
        "",
    ]
    return lines


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests per counted block, in process")
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--server-requests", type=int, default=SERVER_REQUESTS, help="on gunicorn")
    parser.add_argument("--no-server", action="store_true", help="in process only")
    args = parser.parse_args()
    started = time.time()
    part = run(
        lambda: print(f"{time.time() - started:.0f} s: one valgrind run done", file=sys.stderr),
        args.requests,
        None if args.no_server else args.server_requests,
        args.warmup,
    )
    summary: dict[str, Any] = {"cookie_bytes": part.get("cookie_bytes"), "errors": part.get("errors")}
    for key in ("in_process", "server"):
        for workload, rows in (part.get(key) or {}).items():
            for engines in (ENGINES, QUART_ENGINES):
                if all(e in rows for e in engines):
                    found = summary.setdefault(key, {}).setdefault(workload, {})
                    found |= {e: statistics.median(added(rows, e, engines[0])) for e in engines[1:]}
                    found[f"{engines[2]} / {engines[1]}"] = ratios(rows, engines)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
