"""Instructions per request of a file served by signed link: one file's link, a folder link, a grant cookie.

Each framework's file helper serves the same 1 KiB file, in process and driven as its server drives it (Django's
``WSGIHandler`` through ``WSGIDriver``, Starlette through the ASGI driver on an event loop, since its file helper
opens the file in a thread), under ``valgrind --tool=callgrind``, in blocks of N requests bracketed by zeroing
and dumping the counters (``callgrind.client_request``). The same file served with no check at all (Django's
``django.views.static.serve``, Starlette's ``StaticFiles``) is the baseline, so "added" is what checking the
link costs, and the ratio to a one-file link is the target's ("no more than verifying a single-file link").

    python -m example_project.bench links
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import callgrind
from .asgi_driver import Driver

ROOT = Path(__file__).resolve().parents[2]
SECRET = "bench-links-secret-0123456789abcdefghijklmnop"
#: The file every configuration serves, under the folder the folder link and the grant cookie sign.
FOLDER = "videos/123/"
NAME = FOLDER + "seg-001.ts"
SIZE = 1024
BASELINE = "no check"
FILE_LINK = "one file's link"
FOLDER_LINK = "folder link"
GRANT_COOKIE = "grant cookie"
CONFIGS = (BASELINE, FILE_LINK, FOLDER_LINK, GRANT_COOKIE)
FRAMEWORKS = ("django", "starlette")
REQUESTS = 40
WARMUP = 60


def _files(root: Path) -> None:
    (root / FOLDER).mkdir(parents=True, exist_ok=True)
    (root / NAME).write_bytes(bytes(range(256)) * (SIZE // 256))


def _grant_cookie(signer: Any, prefix: str) -> str | None:
    """The Cookie header a grant for ``prefix`` sets (on http: not Secure), or None with a library that has no grant
    cookies (the harness also counts earlier versions)."""
    try:
        from blake2sign_web.links import grants as link_cookies
    except ImportError:
        return None
    grant = link_cookies.grant(signer, prefix, secure=False, expires_in=3600)
    return f"{grant.name}={grant.value}"


urlpatterns: list[Any] = []


def django_requests(root: Path) -> dict[str, Callable[[], None]]:
    import django
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.urls import path, re_path
    from django.views.static import serve

    from blake2sign_web.django.signed_urls import get_signer
    from blake2sign_web.django.views import SignedFileView

    from .wsgi_driver import WSGIDriver

    settings.configure(
        DEBUG=False,
        SECRET_KEY=SECRET,
        ALLOWED_HOSTS=["testserver"],
        ROOT_URLCONF=__name__,
        MIDDLEWARE=[],
        INSTALLED_APPS=["blake2sign_web.django"],
        STORAGES={"bench": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": root}}},
        USE_TZ=True,
        LOGGING_CONFIG=None,
    )
    django.setup()
    urlpatterns[:] = [
        re_path(r"^plain/(?P<path>.*)$", serve, {"document_root": str(root)}),
        path("files/<path:name>", SignedFileView.as_view(storage="bench")),
    ]
    driver = WSGIDriver(WSGIHandler())
    signer = get_signer()
    one = signer.sign(f"/files/{NAME}", expires_in=3600)
    folder = signer.sign_prefix(f"/files/{FOLDER}", expires_in=3600).link(NAME.removeprefix(FOLDER))
    targets = {
        BASELINE: driver.environ(f"/plain/{NAME}"),
        FILE_LINK: driver.environ(*one.split("?", 1)),
        FOLDER_LINK: driver.environ(*folder.split("?", 1)),
    }
    cookie = _grant_cookie(signer, f"/files/{FOLDER}")
    if cookie is not None:
        targets[GRANT_COOKIE] = driver.environ(f"/files/{NAME}", headers={"HTTP_COOKIE": cookie})
    return {label: _django_request(driver, environ) for label, environ in targets.items()}


def _django_request(driver: Any, environ: dict[str, Any]) -> Callable[[], None]:
    def run() -> None:
        driver.request(environ)
        if not driver.status.startswith("200"):
            raise RuntimeError(f"{environ['PATH_INFO']}: {driver.status}")

    return run


def starlette_requests(root: Path) -> dict[str, Callable[[], None]]:
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SignedFiles

    signer = URLSigner(SECRET, purpose="downloads")
    app = Starlette(
        routes=[
            Mount("/plain", StaticFiles(directory=root)),
            Route("/files/{name:path}", SignedFiles(signer, root)),
        ]
    )
    loop = asyncio.new_event_loop()
    driver = _FileDriver(app, loop)
    one = signer.sign(f"/files/{NAME}", expires_in=3600)
    folder = signer.sign_prefix(f"/files/{FOLDER}", expires_in=3600).link(NAME.removeprefix(FOLDER))
    targets = {
        BASELINE: driver.scope(f"/plain/{NAME}"),
        FILE_LINK: _scope(driver, one),
        FOLDER_LINK: _scope(driver, folder),
    }
    cookie = _grant_cookie(signer, f"/files/{FOLDER}")
    if cookie is not None:
        scope = driver.scope(f"/files/{NAME}")
        scope["headers"] = [*scope["headers"], (b"cookie", cookie.encode("latin-1"))]
        targets[GRANT_COOKIE] = scope
    return {label: _starlette_request(driver, scope) for label, scope in targets.items()}


class _FileDriver(Driver):
    """The driver as uvicorn's receive behaves: the request's (empty) body, then nothing until the client leaves
    (a file response listens for the disconnect while it sends)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.received = False

    def request(self, scope: dict[str, Any]) -> None:
        self.received = False
        super().request(scope)

    async def _receive(self) -> Any:
        if not self.received:
            self.received = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # cancelled when the response is sent


def _scope(driver: Any, link: str) -> dict[str, Any]:
    path, query = link.split("?", 1)
    return driver.scope(path, query.encode("ascii"))  # type: ignore[no-any-return]


def _starlette_request(driver: Any, scope: dict[str, Any]) -> Callable[[], None]:
    def run() -> None:
        driver.request({**scope, "state": {}})  # the driver raises on a status other than 200

    return run


def child(framework: str, requests: int, warmup: int, labels_path: str) -> None:
    """Runs under valgrind: builds the configurations, then counts each (``callgrind.count``)."""
    with tempfile.TemporaryDirectory(prefix="blake2sign-links-") as directory:
        root = Path(directory)
        _files(root)
        configs = django_requests(root) if framework == "django" else starlette_requests(root)
        labels: list[dict[str, Any]] = []
        callgrind.begin()
        for label, run in configs.items():
            callgrind.count({"config": label}, run, requests, warmup, labels)
        Path(labels_path).write_text(json.dumps(labels))


def run(
    tick: Callable[[], object] = lambda: None,
    requests: int = REQUESTS,
    warmup: int = WARMUP,
    timeout: float = 1200,
) -> dict[str, Any]:
    """{"settings": ..., "results": {framework: {config: {"Ir": [per request, per repeat], "Ir_median"}}}}."""
    why = callgrind.supported()
    if why is not None:
        return {"error": why}
    argv = ["example_project.bench.link_cost", "--child"]
    children: dict[str, tuple[list[str], dict[str, str]]] = {
        framework: ([*argv, framework, str(requests), str(warmup)], {}) for framework in FRAMEWORKS
    }
    results: dict[str, Any] = {}
    for framework, found in callgrind.run_children(children, timeout, tick).items():
        if isinstance(found, dict):
            results[framework] = found
            continue
        rows: dict[str, Any] = {}
        for dump, label in zip(*found, strict=True):
            rows.setdefault(label["config"], {"Ir": []})["Ir"].append(dump.total("Ir") / label["requests"])
        for row in rows.values():
            row["Ir_median"] = sorted(row["Ir"])[len(row["Ir"]) // 2]
        results[framework] = rows
    settings = {"requests": requests, "warmup": warmup, "repeats": callgrind.REPEATS, "file_bytes": SIZE}
    return {"settings": settings, "results": results}


def table(part: dict[str, Any]) -> list[str]:
    """The page's rows: per framework and configuration, instructions per request, what it adds over serving the
    file with no check, and its total against a request by one file's link."""
    lines = [
        "| framework | request | instructions per request (median; min-max) | over no check | "
        "against one file's link |",
        "|---|---|---:|---:|---:|",
    ]
    for framework, rows in part.get("results", {}).items():
        if "error" in rows:
            lines.append(f"| {framework} | error: {rows['error'][:80]} | | | |")
            continue
        base = rows[BASELINE]["Ir_median"]
        file_link = rows[FILE_LINK]["Ir_median"] if FILE_LINK in rows else None
        for config in CONFIGS:
            if config not in rows:
                continue
            row = rows[config]
            spread = f"{min(row['Ir']) / 1000:,.1f}k-{max(row['Ir']) / 1000:,.1f}k"
            over = "" if config == BASELINE else f"{(row['Ir_median'] - base) / 1000:+,.1f}k"
            ratio = "" if config == BASELINE or not file_link else f"{row['Ir_median'] / file_link:.3f}"
            lines.append(
                f"| {framework.title()} | {config} | {row['Ir_median'] / 1000:,.1f}k ({spread}) | {over} | {ratio} |"
            )
    return lines


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        print(json.dumps(run(), indent=1))
