"""Flask's signed links (``blake2sign_web.flask.links``): through Flask's test client, on a real gunicorn, and
behind a real nginx that sends what X-Accel-Redirect hands it. The statuses and headers every framework shares
are the conformance suite's (tests/conformance/test_links.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import flask
import httpx
import pytest

from blake2sign_web.flask import SignedFiles, grant_cookie, sign_url, signed_url_required
from tests.recipes.test_django_s3_and_nginx import nginx_binary

from ..servers import free_port, running_server
from .conftest import CONTENT
from .flask_app import PUBLIC_URL, build_flask, make_signer
from .test_servers import BIN, check_downloads, raw_get, raw_query_links


def test_sign_url_signs_what_url_for_writes(served_root: Path) -> None:
    client = build_flask(served_root).test_client()
    link = client.get("/link?n=report.bin").text
    assert link.startswith("/files/report.bin?")
    assert client.get(link).data == CONTENT
    mailed = client.get("/mail-link?n=sub/caf%C3%A9 menu.txt").text
    assert mailed.startswith(PUBLIC_URL + "/files/sub/caf%C3%A9%20menu.txt?")
    assert client.get(mailed.removeprefix(PUBLIC_URL)).data == b"menu"


def test_a_link_under_a_script_root_carries_it(served_root: Path) -> None:
    """Mounted at /app (SCRIPT_NAME), url_for writes /app/...; the link is verified with it."""
    client = build_flask(served_root).test_client()
    link = client.get("/link?n=report.bin", base_url="http://localhost/app").text
    assert link.startswith("/app/files/report.bin?")
    assert client.get(link.removeprefix("/app"), base_url="http://localhost/app").data == CONTENT
    assert client.get(link.removeprefix("/app")).status_code == 403  # the same link without the root


SHOP = "https://shop.example/app"  # the public URL: a proxy serves the app under /app


def test_a_link_on_the_public_url_under_a_script_root(served_root: Path) -> None:
    """``base_url`` is the public URL, prefix included: it replaces the script root, never adds to it."""
    app, signer = build_flask(served_root), make_signer()
    with app.test_request_context("/", base_url="http://localhost/app"):  # SCRIPT_NAME=/app
        link = sign_url(signer, "signed_files", base_url=SHOP, expires_in=60, name="sub/caf\u00e9 menu.txt")
        bare = sign_url(signer, "signed_files", base_url="https://shop.example", expires_in=60, name="report.bin")
        own = sign_url(signer, "signed_files", base_url=flask.request.url_root, expires_in=60, name="report.bin")
        with pytest.raises(TypeError, match="_anchor"):
            sign_url(signer, "signed_files", base_url=SHOP, name="report.bin", _anchor="top")
    assert link.startswith(SHOP + "/files/sub/caf%C3%A9%20menu.txt?expires=")
    assert own.startswith("http://localhost/app/files/report.bin?expires=")  # this client's host, and the root
    assert bare.startswith("https://shop.example/files/report.bin?expires=")
    client = app.test_client()
    assert client.get(link.removeprefix(SHOP), base_url="https://shop.example/app").data == b"menu"


@pytest.mark.parametrize(
    ("server_name", "application_root"),
    [(None, "/"), ("shop.example", "/app"), ("shop.example", "/"), ("localhost:5000", "/other")],
)
def test_a_mail_job_signs_links_on_the_public_url(
    served_root: Path, server_name: str | None, application_root: str
) -> None:
    """In an app context with no request (a job sending e-mails), with or without SERVER_NAME and APPLICATION_ROOT:
    the link is ``base_url`` and the route, and it verifies when followed."""
    app, signer = build_flask(served_root), make_signer()
    app.config.update(SERVER_NAME=server_name, APPLICATION_ROOT=application_root)
    with app.app_context():
        link = sign_url(signer, "signed_files", base_url=SHOP, expires_in=60, name="report.bin", v="2")
    assert link.startswith(SHOP + "/files/report.bin?v=2&expires=")
    app.config.update(SERVER_NAME=None)  # the request comes by the public host, through the proxy
    assert app.test_client().get(link.removeprefix(SHOP), base_url=SHOP).data == CONTENT


def test_a_signer_that_binds_the_host_needs_a_base_url(served_root: Path) -> None:
    app = build_flask(served_root, make_signer(bind_host=True))
    app.testing = True  # the error reaches the test
    with pytest.raises(ValueError, match=r"pass sign_url\(\.\.\., base_url=\.\.\.\).* or request.url_root for"):
        app.test_client().get("/link?n=report.bin")


def raw_query(link: bytes) -> tuple[str, str]:
    """A link sent with raw bytes in its query: its path, and its query as a WSGI server hands it (latin-1)."""
    path, _, query = link.partition(b"?")
    return path.decode(), query.decode("latin-1")


def test_the_query_is_verified_as_request_args_reads_it(served_root: Path) -> None:
    """Raw bytes in a query reach WSGI as latin-1; ``request.args`` reads them as UTF-8, and so does the check."""
    client = build_flask(served_root).test_client()
    signed_for_mojibake, signed_for_text = raw_query_links(make_signer(), "/echo")
    path, query = raw_query(signed_for_text)
    assert client.get(path, environ_overrides={"QUERY_STRING": query}).text == "\u00e9"
    path, query = raw_query(signed_for_mojibake)
    assert client.get(path, environ_overrides={"QUERY_STRING": query}).status_code == 403
    # Bytes that are not UTF-8, which request.args cannot read (UnicodeDecodeError): refused, never a 500.
    not_utf8 = make_signer().sign("/echo?q=" + quote("\u00ff"), expires_in=60).replace(quote("\u00ff"), "@")
    path, query = raw_query(not_utf8.encode().replace(b"@", b"\xff"))
    assert client.get(path, environ_overrides={"QUERY_STRING": query}).status_code == 403


#: How each WSGI server runs a Flask app (``{port}``): the standard library's (as gevent's pywsgi, it hands raw bytes
#: on as latin-1) and Werkzeug's development server (``flask run``'s, which encodes them once more as UTF-8).
WSGI_SERVERS = {
    "wsgiref": "from wsgiref.simple_server import make_server",
    "werkzeug": "from werkzeug.serving import make_server",
}


@pytest.mark.server
@pytest.mark.parametrize("server", list(WSGI_SERVERS))
def test_a_real_server_verifies_the_query_request_args_reads(server: str, served_root: Path) -> None:
    """Whatever a server makes of raw bytes, a link passes only if the view reads the value it was signed for."""
    port = free_port()
    serve = (
        f"{WSGI_SERVERS[server]}; from tests.signed_urls.flask_app import app_from_env; "
        f"make_server('127.0.0.1', {port}, app_from_env()).serve_forever()"
    )
    with running_server([sys.executable, "-c", serve], port, BLAKE2SIGN_SERVED_ROOT=str(served_root)) as base:
        signed_for_mojibake, signed_for_text = raw_query_links(make_signer(), "/echo")
        mojibake, text = raw_get(base, signed_for_mojibake), raw_get(base, signed_for_text)
    if server == "wsgiref":  # request.args reads "\u00e9"
        assert (mojibake[0], text) == (403, (200, "\u00e9".encode()))
    else:  # request.args reads "\u00c3\u00a9"
        assert (mojibake, text[0]) == ((200, "\u00c3\u00a9".encode()), 403)


def test_views_behind_the_decorator(served_root: Path) -> None:
    signer, client = make_signer(), build_flask(served_root).test_client()
    assert client.get(signer.sign("/hello/" + quote("café"), expires_in=60)).text == "hello café (True)"
    assert client.get("/hello/ada").status_code == 403
    assert client.get(signer.sign("/hello/ada", expires_at=1_000_000_000)).status_code == 410
    bound = signer.sign("/bound", expires_in=60, bind="alice")
    assert client.get(bound, headers={"X-User": "alice"}).text == "bound"
    refused = client.get(bound, headers={"X-User": "bob"})
    assert (refused.status_code, refused.text, refused.mimetype) == (403, "This link is not valid.", "text/plain")


def test_send_signed_file_names_the_download_as_signed(served_root: Path) -> None:
    signer, client = make_signer(), build_flask(served_root).test_client()
    response = client.get(signer.sign("/report/report.bin", expires_in=60, filename="Q3.bin"))
    assert response.headers["Content-Disposition"] == 'attachment; filename="Q3.bin"'  # a name: a download
    assert response.data == CONTENT
    inline = signer.sign("/report/report.bin", expires_in=60, filename="Q3.bin", disposition="inline")
    assert client.get(inline).headers["Content-Disposition"] == 'inline; filename="Q3.bin"'
    unnamed = client.get(signer.sign("/report/report.bin", expires_in=60))  # as_attachment=False: the file's name
    assert unnamed.headers["Content-Disposition"] == 'inline; filename="report.bin"'
    assert client.get(signer.sign("/report/nothing.bin", expires_in=60)).status_code == 404


def test_a_grant_cookie_opens_its_folder_only(served_root: Path) -> None:
    client = build_flask(served_root).test_client()
    granted = client.get("/grant/sub/")
    cookie = granted.headers["Set-Cookie"]
    assert cookie.startswith("b2s_grant_")
    assert "Path=/files/sub/" in cookie
    assert "HttpOnly" in cookie
    inside = client.get("/files/sub/caf%C3%A9%20menu.txt")
    assert (inside.status_code, inside.data) == (200, b"menu")
    assert inside.headers["Cache-Control"].startswith("private")
    assert inside.headers["Vary"] == "Cookie"
    assert client.get("/files/report.bin").status_code == 403  # outside the folder: the cookie is not even sent


def test_a_playlist_passes_its_folder_link_on(served_root: Path) -> None:
    (served_root / "video").mkdir()
    (served_root / "video" / "index.m3u8").write_text("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg-1.ts\n")
    (served_root / "video" / "seg-1.ts").write_bytes(b"TS")
    signer, client = make_signer(), build_flask(served_root).test_client()
    folder = signer.sign_prefix("/files/video/", expires_in=60)
    playlist = client.get(folder.link("index.m3u8"))
    assert playlist.headers["Cache-Control"] == "private, no-store"
    [segment] = [line for line in playlist.text.splitlines() if line.startswith("seg-1.ts")]
    assert segment.startswith("seg-1.ts?")
    assert client.get("/files/video/" + segment).data == b"TS"


def test_files_by_another_rule_variable_and_endpoint(served_root: Path) -> None:
    client = build_flask(served_root).test_client()
    response = client.get(make_signer().sign("/inline/report.bin", expires_in=60))
    assert response.headers["Content-Disposition"] == 'inline; filename="report.bin"'
    assert response.data == CONTENT
    with build_flask(served_root).test_request_context():
        assert flask.url_for("inline", file="a.txt") == "/inline/a.txt"


def test_a_second_signed_files_view_needs_its_own_endpoint(served_root: Path) -> None:
    """Both on the default endpoint: registering the second stops start-up, naming the fix; with its own, it works."""
    app, signer = flask.Flask(__name__), make_signer()
    app.add_url_rule("/files/<path:name>", view_func=SignedFiles(signer, served_root))
    with pytest.raises(ValueError, match=r"two SignedFiles views on the endpoint 'signed_files': .*endpoint="):
        app.add_url_rule("/media/<path:name>", view_func=SignedFiles(signer, served_root))
    app = flask.Flask(__name__)
    files = SignedFiles(signer, served_root)
    app.add_url_rule("/files/<path:name>", view_func=files)
    app.add_url_rule("/again/<path:name>", view_func=files)  # one view on two rules: Flask allows it
    app.add_url_rule("/media/<path:name>", view_func=SignedFiles(signer, served_root, endpoint="media"))
    with app.test_request_context():
        link = sign_url(signer, "media", name="report.bin", expires_in=60)
    assert link.startswith("/media/report.bin?")
    assert app.test_client().get(link).data == CONTENT


def test_grant_cookie_spells_its_options_as_set_cookie(served_root: Path) -> None:
    """``samesite`` and ``httponly``, as Werkzeug's ``set_cookie`` (and Django's and Starlette's helpers) spell them."""
    signer = make_signer()
    with build_flask(served_root).test_request_context(base_url="https://localhost"):
        response = flask.Response("granted")
        grant_cookie(response, signer, "/files/sub/", expires_in=60, samesite="Strict", httponly=False)
        with pytest.raises(ValueError, match="samesite must be 'Lax', 'Strict' or 'None'"):
            grant_cookie(response, signer, "/files/sub/", expires_in=60, samesite="strict")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="same_site"):
            grant_cookie(response, signer, "/files/sub/", expires_in=60, same_site="Strict")  # type: ignore[call-arg]
    cookie = response.headers["Set-Cookie"]
    assert "; SameSite=Strict" in cookie
    assert "; Secure" in cookie
    assert "HttpOnly" not in cookie


def test_accel_redirect_hands_the_file_to_nginx(served_root: Path) -> None:
    client = build_flask(served_root, accel_redirect="/protected/").test_client()
    response = client.get(make_signer().sign("/files/sub/" + quote("café menu.txt"), expires_in=60))
    assert response.headers["X-Accel-Redirect"] == "/protected/sub/caf%C3%A9%20menu.txt"
    assert response.headers["Content-Disposition"].endswith("filename*=UTF-8''caf%C3%A9%20menu.txt")
    assert response.data == b""


@pytest.fixture
def flask_gunicorn(served_root: Path) -> Iterator[str]:
    port = free_port()
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    with running_server([*command, "tests.signed_urls.flask_app:app_from_env()"], port,
                        BLAKE2SIGN_SERVED_ROOT=str(served_root)) as base:  # fmt: skip
        yield base


@pytest.mark.server
def test_gunicorn_serves_flask_files(flask_gunicorn: str) -> None:
    signer = make_signer()
    check_downloads(flask_gunicorn, signer)
    assert httpx.get(flask_gunicorn + signer.sign("/files/report.bin", expires_at=1_000_000_000)).status_code == 410


@pytest.mark.server
def test_nginx_sends_what_flask_allowed(served_root: Path, tmp_path: Path) -> None:
    nginx, upstream_port, port = nginx_binary(), free_port(), free_port()
    temp = "".join(
        f"{kind}_temp_path {tmp_path}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (tmp_path / "nginx.conf").write_text(
        ("user root;\n" if os.geteuid() == 0 else "") + f"worker_processes 1;\npid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/error.log warn;\nevents {{ worker_connections 16; }}\nhttp {{ access_log off;\n{temp}"
        f"server {{ listen 127.0.0.1:{port};\n location /protected/ {{ internal; alias {served_root}/; }}\n"
        f" location / {{ proxy_pass http://127.0.0.1:{upstream_port}; }} }} }}\n"
    )  # fmt: skip
    command = [
        str(BIN / "gunicorn"),
        "--bind",
        f"127.0.0.1:{upstream_port}",
        "tests.signed_urls.flask_app:app_from_env()",
    ]
    front = [nginx, "-p", f"{tmp_path}/", "-c", f"{tmp_path}/nginx.conf", "-g", "daemon off;"]
    env = {"BLAKE2SIGN_SERVED_ROOT": str(served_root), "BLAKE2SIGN_ACCEL": "/protected/"}
    with running_server(command, upstream_port, **env) as upstream, running_server(front, port) as base:
        link = make_signer().sign("/files/report.bin", expires_in=60)
        assert httpx.get(upstream + link).content == b""  # gunicorn alone sends headers only
        sent = httpx.get(base + link, headers={"Range": "bytes=0-9"})
        assert (sent.status_code, sent.content) == (206, CONTENT[:10])  # nginx handles the range
        assert httpx.get(base + "/files/report.bin").status_code == 403
        assert httpx.get(base + "/protected/report.bin").status_code == 404  # internal only


def test_a_store_of_the_other_kind_stops_start_up(served_root: Path) -> None:
    """An asyncio store's consume_link returns a coroutine, which a blocking view would take for a yes: refused
    when the view is made, naming the store to use; Starlette's views refuse a blocking store the same way."""
    from blake2sign_web.flask.revocation import RedisStore
    from blake2sign_web.starlette import SignedFiles as StarletteFiles
    from blake2sign_web.stores.redis_stores import AsyncRedisStore

    asyncio_store, blocking_store = AsyncRedisStore("redis://127.0.0.1:1/0"), RedisStore("redis://127.0.0.1:1/0")
    fix = r"single_use is an asyncio store .*: a Flask signed-link view needs a blocking one, blake2sign_web\.flask\."
    with pytest.raises(TypeError, match=fix):
        SignedFiles(make_signer(), served_root, single_use=asyncio_store)
    with pytest.raises(TypeError, match=fix):
        signed_url_required(make_signer(), single_use=asyncio_store)
    with pytest.raises(TypeError, match=r"single_use is a blocking store .*blake2sign_web\.starlette\.revocation"):
        StarletteFiles(make_signer(), served_root, single_use=blocking_store)
