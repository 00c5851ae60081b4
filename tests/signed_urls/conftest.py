"""Shared fixtures: a directory of files to serve, with a secret just outside it, and real servers serving it."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blake2sign_web import URLSigner
from blake2sign_web.links import files
from tests.django_links import use_served_storage
from tests.redis_server import RedisServer, redis_server_fixture
from tests.servers import free_port, running_server

BIN = Path(sys.executable).parent
CONTENT = bytes(range(256)) * 40  # 10240 bytes, every offset distinguishable

#: Range header -> status, Content-Range and body; both adapters are held to this one table.
RANGE_CASES = [
    ("bytes=0-9", 206, "bytes 0-9/10240", CONTENT[:10]),
    ("bytes=-5", 206, "bytes 10235-10239/10240", CONTENT[-5:]),
    ("bytes=10000-", 206, "bytes 10000-10239/10240", CONTENT[10000:]),
    ("bytes=100-99999", 206, "bytes 100-10239/10240", CONTENT[100:]),
    ("bytes=0-1,5-6", 200, None, CONTENT),
    ("bytes=oops", 200, None, CONTENT),
    ("pages=1-2", 200, None, CONTENT),
]
#: (file, Range header) pairs that must get 416.
UNSATISFIABLE_RANGES = [("report.bin", "bytes=10240-"), ("report.bin", "bytes=-0"), ("empty.txt", "bytes=0-")]


@pytest.fixture(scope="package", autouse=True)
def garbage_of_earlier_packages_collected_first() -> None:
    """Collect what earlier test packages left unreachable before this package's first test runs.

    Objects a test drops are destroyed at the next garbage collection, which may run during any later
    test; pytest then blames that test for their ResourceWarnings (an unclosed connection of a store
    some earlier package never closed). Those are the earlier package's to fix; here they are
    collected, and their warnings not raised, before this package starts, so a failure in this package
    is this package's own. Nothing this package leaves behind is hidden: it runs only at its start.
    """
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


@pytest.fixture
def served_root(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    (root / "sub").mkdir(parents=True)
    (root / "report.bin").write_bytes(CONTENT)
    (root / "sub" / "caf\u00e9 menu.txt").write_text("menu")
    (root / "page.html").write_text("<script>alert(1)</script>")
    (root / "empty.txt").write_bytes(b"")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    (root / "escape-dir").symlink_to(tmp_path)
    return root


@pytest.fixture
def file_storage(served_root: Path, settings: Any) -> Path:
    return use_served_storage(settings, served_root)


def swap_directory_after_check(monkeypatch: pytest.MonkeyPatch, directory: Path, outside: Path) -> None:
    """Replace ``directory`` by a link to ``outside`` right after the name was checked: the race, made certain.

    Only a name with a symbolic link on its way is checked before it is opened (one without is opened segment by
    segment following no link, with nothing to race): the tests ask for their file through ``via``, a link to
    ``directory`` inside the root."""
    (directory.parent / "via").symlink_to(directory)
    check = files.resolve_under

    def check_then_swap(root: Any, name: str) -> Path:
        checked = check(root, name)
        directory.rename(directory.with_name(directory.name + "-moved"))
        directory.symlink_to(outside)
        return checked

    monkeypatch.setattr(files, "resolve_under", check_then_swap)


@pytest.fixture
def gunicorn(served_root: Path) -> Iterator[str]:
    """gunicorn (one sync worker) serving tests.signed_urls' Django site from ``served_root``: its base URL."""
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "tests.signed_urls.wsgi"]
    env = {"DJANGO_SETTINGS_MODULE": "tests.signed_urls.server_settings", "BLAKE2SIGN_SERVED_ROOT": str(served_root)}
    with running_server(command, port, **env) as base:
        yield base


@pytest.fixture
def uvicorn(served_root: Path) -> Iterator[str]:
    """uvicorn serving tests.signed_urls' Starlette application from ``served_root``: its base URL."""
    port = free_port()
    command = [
        str(BIN / "uvicorn"), "--factory", "tests.signed_urls.starlette_app:app_from_env",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    with running_server(command, port, BLAKE2SIGN_SERVED_ROOT=str(served_root)) as base:
        yield base


def django_signer() -> URLSigner:
    """The Django site's link signer, as its settings configure it."""
    from blake2sign_web.django.signed_urls import get_signer

    return get_signer()


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[RedisServer]:
    """One real redis-server per test module that asks for one (single-use and grouped links)."""
    yield from redis_server_fixture()


@pytest.fixture
def redis_server(shared_redis: RedisServer) -> RedisServer:
    """The module's server, running and emptied: each test starts with no records."""
    shared_redis.start()
    shared_redis.flush()
    return shared_redis


def keys_in(server: RedisServer) -> int:
    """How many keys ``server`` holds (``DBSIZE``)."""
    return int(server.command("DBSIZE").strip()[1:])
