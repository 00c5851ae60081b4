"""chunked=True with the clients and proxies in front: curl and nginx with their defaults, uvicorn behind.

Issue 27 item 5. curl 7.88 stops adding cookies once its request head nears 8 KB, and adds the longest names
first: of a three-chunk session it sends ``session.1`` and ``session.2`` and drops ``session``. That set is
incomplete: a warning, an empty session, and the chunks deleted (they used to be read as no cookie, silently,
and kept for good). With the default cap (two cookies) the largest session the middleware writes still
comes back whole through curl, and through nginx's default 8 KB header buffer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..django_sessions.test_chunked_servers import nginx, required
from ..servers import free_port, running_server
from .test_chunked import noise

pytestmark = pytest.mark.server


@dataclass(frozen=True)
class Answer:
    status: int
    set_cookies: list[str]
    body: str
    #: curl's own notes (``* ...`` lines of ``--verbose``), such as "Restricted outgoing cookies".
    notes: list[str]
    #: The Cookie header curl sent, "" for none.
    cookie_header: str


def curl(url: str, jar: Path, body: object = None) -> Answer:
    """One request with the system's curl, reading and updating the cookie jar ``jar`` as a script would."""
    binary = shutil.which("curl")
    if binary is None:
        required("curl", "apt-get install curl")
    command = [str(binary), "--silent", "--verbose", "--cookie", str(jar), "--cookie-jar", str(jar), url]
    if body is not None:
        command += ["--header", "content-type: application/json", "--data-binary", json.dumps(body)]
    done = subprocess.run(command, capture_output=True, check=True, timeout=30)
    verbose = done.stderr.decode("latin-1").splitlines()
    [status] = [int(line.split()[2]) for line in verbose if line.startswith("< HTTP/")]
    set_cookies = [line.split(":", 1)[1].strip() for line in verbose if line.lower().startswith("< set-cookie:")]
    sent = [line.split(":", 1)[1].strip() for line in verbose if line.lower().startswith("> cookie:")]
    notes = [line for line in verbose if line.startswith("* ")]
    return Answer(status, set_cookies, done.stdout.decode(), notes, sent[0] if sent else "")


def jar_cookies(jar: Path) -> list[str]:
    """The names of the cookies in curl's jar (a deleted cookie is gone from it)."""
    lines = [line for line in jar.read_text().splitlines() if line and not line.startswith("# ")]
    return sorted(line.split("\t")[5] for line in lines)


def uvicorn(app: str) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", f"tests.starlette_sessions.chunked_uvicorn_app:{app}"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    with running_server(command, port) as url:
        yield url


@pytest.fixture(scope="module")
def default_cap() -> Iterator[str]:
    """chunked=True and every other argument its default: at most two cookies."""
    yield from uvicorn("default_app")


@pytest.fixture(scope="module")
def four_chunks() -> Iterator[str]:
    yield from uvicorn("app")  # max_chunks=4


def test_curl_drops_the_first_of_three_chunks_and_the_set_is_deleted(four_chunks: str, tmp_path: Path) -> None:
    jar = tmp_path / "jar"
    written = curl(f"{four_chunks}/write", jar, {"blob": noise(9000)})
    assert written.status == 200
    assert jar_cookies(jar) == ["session", "session.1", "session.2"]
    read = curl(f"{four_chunks}/read", jar)
    # What curl does: the longest names first, and "session" left out past its cap.
    assert read.notes.count("* Restricted outgoing cookies due to header size, 'session' not sent") == 1
    assert [cookie.split("=", 1)[0] for cookie in read.cookie_header.split("; ")] == ["session.1", "session.2"]
    assert (read.status, json.loads(read.body)) == (200, {})
    # The whole set is deleted, "session" too: curl left it out, and still holds it.
    assert [line.split("=", 1)[0] for line in read.set_cookies] == ["session", "session.1", "session.2"]
    assert all("=null; path=/; expires=Thu, 01 Jan 1970" in line for line in read.set_cookies)
    # curl 7.88's jar drops one deleted cookie per response (its own bug: it keeps the others with their old
    # values). Each request is then incomplete again: an empty session and the set deleted again, never the
    # old session; the jar is clean within as many requests as it held cookies.
    for _ in range(3):
        if not jar_cookies(jar):
            break
        again = curl(f"{four_chunks}/read", jar)
        assert (again.status, json.loads(again.body)) == (200, {})
    assert jar_cookies(jar) == []


def largest_default_session(url: str, jar: Path) -> int:
    """The longest ``noise`` the default cap writes, found by bisection; its cookies are left in ``jar``."""
    fits, too_large = 4000, 9000  # two cookies hold about 8,000 characters of token
    curl(f"{url}/write", jar, {"blob": noise(fits)})
    while too_large - fits > 1:
        size = (fits + too_large) // 2
        probe = jar.with_suffix(".probe")
        if curl(f"{url}/write", probe, {"blob": noise(size)}).status == 200:
            fits = size
            probe.replace(jar)
        else:  # SessionCookieTooLarge: a 500, and no cookie
            too_large = size
    return fits


def test_the_largest_session_of_the_default_cap_comes_back_whole_through_curl(default_cap: str, tmp_path: Path) -> None:
    jar = tmp_path / "jar"
    size = largest_default_session(default_cap, jar)
    assert jar_cookies(jar) == ["session", "session.1"]
    read = curl(f"{default_cap}/read", jar)
    assert len(read.cookie_header) > 8000  # two full cookies
    assert not [note for note in read.notes if "Restricted" in note]
    assert (read.status, json.loads(read.body)) == (200, {"blob": noise(size)})


def test_the_largest_session_of_the_default_cap_passes_a_default_nginx(
    default_cap: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """nginx's default large_client_header_buffers (4 8k) takes the Cookie header of two full chunks.

    Written straight to uvicorn: behind a default nginx, a response with a cookie near 4 KB is a 502
    whether or not it is chunked (proxy_buffer_size; docs/deploy.md).
    """
    jar = tmp_path / "jar"
    size = largest_default_session(default_cap, jar)
    for url, _ in nginx(tmp_path_factory, default_cap, ""):
        read = curl(f"{url}/read", jar)
        assert len(read.cookie_header) > 8000
        assert (read.status, json.loads(read.body)) == (200, {"blob": noise(size)})
