"""CHUNKED through real servers: where gunicorn's and nginx's header limits bite (the figures of docs/django.md).

Every chunk comes back in one ``Cookie`` request header, and goes out as one ``Set-Cookie`` line each, so a
session of several cookies meets the servers' bounds on one header line (requests) and on the response's
headers (nginx's ``proxy_buffer_size``). The sessions are the engine's own, written and read through the
servers; only the exact request limits are probed with a padding cookie beside a real session.

Outside CI a missing nginx skips its tests, saying what to install; under CI=true it fails them.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import ROOT, free_port, running_server

pytestmark = pytest.mark.server
BIN = Path(sys.executable).parent
SETTINGS = "tests.django_sessions.chunked_settings"
WSGI = "django.core.wsgi:get_wsgi_application()"
#: Characters of session data that make 2, 3 and 4 chunks (zstd shrinks random base64url by a quarter).
TWO_CHUNKS, THREE_CHUNKS, FOUR_CHUNKS = 7_000, 10_000, 12_000


def required(what: str, hint: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must run this test, which needs {what}: {hint}", pytrace=False)
    pytest.skip(f"needs {what}, not installed: {hint}")


def docs_block(language: str) -> str:
    """The one fenced block of ``language`` in docs/django.md: the configuration the page tells readers to use."""
    text = (ROOT / "docs" / "django.md").read_text(encoding="utf-8")
    blocks = [part.split("```", 1)[0] for part in text.split(f"```{language}\n")[1:]]
    assert len(blocks) == 1, f"docs/django.md has {len(blocks)} ```{language} blocks; expected one"
    return blocks[0]


def gunicorn(port: int, *options: str) -> list[str]:
    return [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", *options, WSGI]


@pytest.fixture(scope="module")
def gunicorn_default() -> Iterator[str]:
    port = free_port()
    with running_server(gunicorn(port), port, DJANGO_SETTINGS_MODULE=SETTINGS) as url:
        yield url


def documented_options(server: str) -> list[str]:
    """The options of the page's command line for ``server`` (gunicorn, uvicorn)."""
    [command] = [line for line in docs_block("shell").splitlines() if line.startswith(f"{server} ")]
    return command.split()[1:-1]  # without the server's name and the application


@pytest.fixture(scope="module")
def gunicorn_raised() -> Iterator[str]:
    """gunicorn with the page's options: the upstream of both nginx fixtures, so that nginx is what limits."""
    port = free_port()
    with running_server(gunicorn(port, *documented_options("gunicorn")), port, DJANGO_SETTINGS_MODULE=SETTINGS) as url:
        yield url


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        required("nginx", "apt-get install nginx-light")
    return found  # type: ignore[return-value]


def nginx_config(prefix: Path, port: int, upstream: str, directives: str) -> str:
    """A self-contained nginx.conf: one server proxying to ``upstream``, with ``directives`` in its server block."""
    temp_paths = "".join(
        f"    {kind}_temp_path {prefix}/{kind}_temp;\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}worker_processes 1;\npid {prefix}/nginx.pid;\nerror_log {prefix}/error.log warn;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n    access_log off;\n{temp_paths}"
        f"    server {{\n        listen 127.0.0.1:{port};\n{directives}\n"
        f"        location / {{ proxy_pass {upstream}; proxy_set_header Host $host; }}\n    }}\n}}\n"
    )


def nginx(tmp_path_factory: pytest.TempPathFactory, upstream: str, directives: str) -> Iterator[tuple[str, Path]]:
    binary = nginx_binary()
    port = free_port()
    prefix = tmp_path_factory.mktemp("nginx")
    (prefix / "nginx.conf").write_text(nginx_config(prefix, port, upstream, directives))
    command = [binary, "-p", f"{prefix}/", "-e", f"{prefix}/error.log", "-c", f"{prefix}/nginx.conf"]
    with running_server([*command, "-g", "daemon off;"], port) as url:
        yield url, prefix / "error.log"


@pytest.fixture(scope="module")
def nginx_default(tmp_path_factory: pytest.TempPathFactory, gunicorn_raised: str) -> Iterator[tuple[str, Path]]:
    yield from nginx(tmp_path_factory, gunicorn_raised, "")


@pytest.fixture(scope="module")
def nginx_raised(tmp_path_factory: pytest.TempPathFactory, gunicorn_raised: str) -> Iterator[tuple[str, Path]]:
    """nginx with the page's directives."""
    yield from nginx(tmp_path_factory, gunicorn_raised, docs_block("nginx"))


def session_cookies(url: str, size: int) -> dict[str, str]:
    """Log a session of ``size`` characters in through ``url``: the cookies its response set, by name."""
    response = httpx.get(f"{url}/blob/{size}/")
    assert response.status_code == 200, response.text
    cookies = dict(line.split(";", 1)[0].split("=", 1) for line in response.headers.get_list("set-cookie"))
    return {name: value for name, value in cookies.items() if value}  # a deleted chunk has no value


def chunks_of(cookies: dict[str, str]) -> int:
    return sum(1 for name in cookies if re.fullmatch(r"sessionid(\.\d)?", name))


def cookie_header(cookies: dict[str, str], length: int | None = None) -> str:
    """The Cookie header a browser sends back; with ``length``, padded to exactly that many bytes."""
    header = "; ".join(f"{name}={value}" for name, value in cookies.items())
    if length is not None:
        header += "; pad=" + "p" * (length - len(header) - len("; pad="))
        assert len(header) == length
    return header


def read_back(url: str, header: str) -> httpx.Response:
    return httpx.get(f"{url}/blob/", headers={"cookie": header})


# gunicorn ----------------------------------------------------------------------------------------------


def test_gunicorn_default_takes_a_cookie_header_of_8180_bytes(gunicorn_default: str) -> None:
    """limit_request_field_size (8190) bounds "Cookie: " + value + CRLF: 8180 bytes of cookies."""
    cookies = session_cookies(gunicorn_default, TWO_CHUNKS)
    assert chunks_of(cookies) == 2
    accepted = read_back(gunicorn_default, cookie_header(cookies, 8180))
    assert (accepted.status_code, accepted.text) == (200, str(TWO_CHUNKS))
    refused = read_back(gunicorn_default, cookie_header(cookies, 8181))
    assert refused.status_code == 431  # Request Header Fields Too Large (gunicorn 27; 400 before)


def test_gunicorn_default_reads_two_chunks_not_three(gunicorn_default: str) -> None:
    two = session_cookies(gunicorn_default, TWO_CHUNKS)
    assert read_back(gunicorn_default, cookie_header(two)).text == str(TWO_CHUNKS)
    three = session_cookies(gunicorn_default, THREE_CHUNKS)  # gunicorn bounds no response header: written
    assert chunks_of(three) == 3
    assert len(cookie_header(three)) > 8180
    assert read_back(gunicorn_default, cookie_header(three)).status_code == 431


def test_gunicorn_limit_request_field_size_0_is_not_unlimited() -> None:
    """gunicorn 27 reads 0 (or less) as its default, 8190: the page says to give a number."""
    port = free_port()
    command = gunicorn(port, "--limit-request-field_size", "0")
    with running_server(command, port, DJANGO_SETTINGS_MODULE=SETTINGS) as url:
        cookies = session_cookies(url, TWO_CHUNKS)
        assert read_back(url, cookie_header(cookies, 8180)).status_code == 200
        assert read_back(url, cookie_header(cookies, 8181)).status_code == 431


def test_gunicorn_with_the_documented_limit_reads_four_chunks(gunicorn_raised: str) -> None:
    cookies = session_cookies(gunicorn_raised, FOUR_CHUNKS)
    assert chunks_of(cookies) == 4
    assert read_back(gunicorn_raised, cookie_header(cookies)).text == str(FOUR_CHUNKS)
    options = documented_options("gunicorn")
    limit = int(options[options.index("--limit-request-field_size") + 1])
    assert read_back(gunicorn_raised, cookie_header(cookies, limit - 10)).status_code == 200
    assert read_back(gunicorn_raised, cookie_header(cookies, limit - 9)).status_code == 431


# nginx -------------------------------------------------------------------------------------------------


def test_nginx_default_takes_a_cookie_header_of_8182_bytes(
    nginx_default: tuple[str, Path], gunicorn_raised: str
) -> None:
    """large_client_header_buffers 4 8k: one header line, "Cookie: " + value + CRLF, fits in 8192 bytes."""
    url, _ = nginx_default
    cookies = session_cookies(gunicorn_raised, 2_000)
    assert read_back(url, cookie_header(cookies, 8182)).text == "2000"
    refused = read_back(url, cookie_header(cookies, 8183))
    assert refused.status_code == 400
    assert "Request Header Or Cookie Too Large" in refused.text


def test_nginx_default_refuses_responses_whose_headers_pass_4_kb(nginx_default: tuple[str, Path]) -> None:
    """proxy_buffer_size (one memory page: 4 KB on x86-64) holds the upstream's whole response head.

    So not even one cookie near the browser's 4096 bytes gets through, chunked or not: 502.
    """
    url, error_log = nginx_default
    assert session_cookies(url, 3_000)  # a 3.2 KB Set-Cookie: the head is under 4 KB
    one_full_cookie = httpx.get(f"{url}/blob/3800/")  # one cookie of about 4 KB (no chunk yet)
    assert one_full_cookie.status_code == 502
    two_chunks = httpx.get(f"{url}/blob/{TWO_CHUNKS}/")
    assert two_chunks.status_code == 502
    assert "upstream sent too big header while reading response header from upstream" in error_log.read_text()


def test_nginx_default_reads_two_chunks_not_three(nginx_default: tuple[str, Path], gunicorn_raised: str) -> None:
    url, _ = nginx_default
    two = session_cookies(gunicorn_raised, TWO_CHUNKS)  # written past nginx: its responses would be refused
    assert read_back(url, cookie_header(two)).text == str(TWO_CHUNKS)
    three = session_cookies(gunicorn_raised, THREE_CHUNKS)
    assert read_back(url, cookie_header(three)).status_code == 400


def test_nginx_with_the_documented_directives_writes_and_reads_four_chunks(nginx_raised: tuple[str, Path]) -> None:
    url, _ = nginx_raised
    cookies = session_cookies(url, FOUR_CHUNKS)
    assert chunks_of(cookies) == 4
    assert read_back(url, cookie_header(cookies)).text == str(FOUR_CHUNKS)
    assert read_back(url, cookie_header(cookies, 32 * 1024 - 10)).status_code == 200


# uvicorn -----------------------------------------------------------------------------------------------


def uvicorn(port: int, *options: str) -> list[str]:
    command = [str(BIN / "uvicorn"), "--host", "127.0.0.1", "--port", str(port), "--http", "h11", *options]
    return [*command, "--factory", "django.core.asgi:get_asgi_application"]


def status_of_a_request_sent_in_two_parts(port: int, cookie: str, first: int) -> bytes:
    """Send a GET whose first ``first`` bytes arrive, then (0.3 s later) the rest, as from a slow network."""
    request = (f"GET /blob/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n").encode()
    assert first < len(request)
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(request[:first])
        time.sleep(0.3)
        connection.sendall(request[first:])
        response = b""
        while chunk := connection.recv(65536):
            response += chunk
    return response.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("options", [[], "documented"], ids=["default", "documented"])
def test_uvicorn_reads_four_chunks_and_bounds_a_head_that_arrives_in_parts(options: list[str] | str) -> None:
    """uvicorn's h11 refuses a request head once 16 KiB of it arrived without its end (400), not one read at once."""
    port = free_port()
    arguments = documented_options("uvicorn") if options == "documented" else options
    with running_server(uvicorn(port, *arguments), port, DJANGO_SETTINGS_MODULE=SETTINGS) as url:
        cookies = session_cookies(url, FOUR_CHUNKS)
        assert chunks_of(cookies) == 4
        assert read_back(url, cookie_header(cookies)).text == str(FOUR_CHUNKS)  # the head arrives at once
        cookie = cookie_header(cookies, 20_000)
        assert status_of_a_request_sent_in_two_parts(port, cookie, 16_000) == b"HTTP/1.1 200 OK"
        in_parts = status_of_a_request_sent_in_two_parts(port, cookie, 16_500)
        assert in_parts == (b"HTTP/1.1 200 OK" if options == "documented" else b"HTTP/1.1 400 Bad Request")


# curl, and the default MAX_CHUNKS -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gunicorn_default_cap() -> Iterator[str]:
    """gunicorn's defaults, and CHUNKED with the default MAX_CHUNKS (2)."""
    port = free_port()
    with running_server(gunicorn(port), port, DJANGO_SETTINGS_MODULE=DEFAULT_CAP_SETTINGS) as url:
        yield url


DEFAULT_CAP_SETTINGS = "tests.django_sessions.chunked_default_settings"


def test_curl_drops_the_first_of_three_chunks_and_the_set_is_deleted(gunicorn_raised: str, tmp_path: Path) -> None:
    """Issue 27 item 5: curl 7.88 sends the longest names first and leaves "sessionid" out past its cap.

    The set used to read as no cookie: no warning, and the chunks kept for good.
    """
    from tests.starlette_sessions.test_chunked_clients import curl, jar_cookies

    jar = tmp_path / "jar"
    assert curl(f"{gunicorn_raised}/blob/{THREE_CHUNKS}/", jar).status == 200
    assert jar_cookies(jar) == ["sessionid", "sessionid.1", "sessionid.2"]
    read = curl(f"{gunicorn_raised}/blob/", jar)
    assert read.notes.count("* Restricted outgoing cookies due to header size, 'sessionid' not sent") == 1
    assert (read.status, read.body) == (200, "0")
    deleted = sorted(line.split("=", 1)[0] for line in read.set_cookies if "Max-Age=0" in line)
    assert deleted == ["sessionid", "sessionid.1", "sessionid.2"]


def largest_default_session(url: str, jar: Path) -> int:
    """The longest blob the default MAX_CHUNKS writes, by bisection; its cookies are left in ``jar``.

    The blob is random: each probe keeps its own cookies, so the answer is the cookies actually written.
    """
    from tests.starlette_sessions.test_chunked_clients import curl

    fits, too_large = 4_000, TWO_CHUNKS + 2_000
    assert curl(f"{url}/blob/{fits}/", jar).status == 200
    while too_large - fits > 1:
        size = (fits + too_large) // 2
        probe = jar.with_suffix(".probe")
        if curl(f"{url}/blob/{size}/", probe).status == 200:
            fits = size
            probe.replace(jar)
        else:  # SessionTooLarge: a 500
            too_large = size
    return fits


def test_the_largest_session_of_the_default_cap_passes_curl_gunicorn_and_nginx_defaults(
    gunicorn_default_cap: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two full chunks: under curl's cap, gunicorn's 8190-byte field and nginx's 8 KB header buffer.

    Written straight to gunicorn: behind a default nginx a response with a cookie near 4 KB is a 502, chunked
    or not (proxy_buffer_size, above).
    """
    from tests.starlette_sessions.test_chunked_clients import curl, jar_cookies

    jar = tmp_path / "jar"
    size = largest_default_session(gunicorn_default_cap, jar)
    assert jar_cookies(jar) == ["sessionid", "sessionid.1"]
    read = curl(f"{gunicorn_default_cap}/blob/", jar)
    assert len(read.cookie_header) > 7_800  # two nearly full cookies (the attributes take ~100 bytes of each)
    assert not [note for note in read.notes if "Restricted" in note]
    assert (read.status, read.body) == (200, str(size))
    for url, _ in nginx(tmp_path_factory, gunicorn_default_cap, ""):
        through_nginx = curl(f"{url}/blob/", jar)
        assert (through_nginx.status, through_nginx.body) == (200, str(size))
