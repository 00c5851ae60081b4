"""Signed links behind a TLS-terminating nginx with a path prefix: gunicorn and uvicorn (Django and Starlette).

nginx terminates TLS (a self-signed certificate made here with ``cryptography``) and forwards
``/wsgi/`` to Django under gunicorn (prefix kept, gunicorn's SCRIPT_NAME takes it off), ``/asgi/`` to Django
under uvicorn (prefix taken off by nginx, FORCE_SCRIPT_NAME), ``/starlette/`` to Starlette under uvicorn
(prefix taken off, ``--root-path``). Links are bound to the host (``bind_host``) and issued by the apps
themselves: they must say https, the host the client used and the prefix, and verify when followed.

nginx connects from 127.0.0.2, the only address the uvicorns trust (``--forwarded-allow-ips``); clients
connect from 127.0.0.1 (or 127.0.0.3, a second client). A client sending forged X-Forwarded-* headers, to nginx
(which overwrites them) or straight to the apps, gains nothing: not another host, not another client's
single-use download, not an https link from an http request.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from django.test import Client, override_settings

from tests.recipes.test_django_s3_and_nginx import nginx_binary
from tests.redis_server import RedisServer, redis_server_fixture
from tests.servers import free_port, running_server

from .conftest import CONTENT
from .proxy_apps import make_signer

BIN = Path(sys.executable).parent
NGINX_ADDRESS = "127.0.0.2"  # where nginx connects from: the proxy the uvicorns trust
OTHER_CLIENT = "127.0.0.3"
PREFIXES = ("/wsgi", "/asgi", "/starlette")
STARLETTE_APP = "tests.signed_urls.proxy_apps:starlette_from_env"
pytestmark = pytest.mark.server


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key, made with ``cryptography`` (moto depends on it)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "blake2sign-web proxy test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def nginx_config(prefix: Path, port: int, cert: Path, key: Path, upstreams: dict[str, int]) -> str:
    temp_paths = "".join(
        f"    {kind}_temp_path {prefix}/{kind}_temp;\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
{temp_paths}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};

        proxy_bind {NGINX_ADDRESS};
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-For $remote_addr;

        location /wsgi/ {{ proxy_pass http://127.0.0.1:{upstreams["wsgi"]}; }}
        location /asgi/ {{ proxy_pass http://127.0.0.1:{upstreams["asgi"]}/; }}
        location /starlette/ {{ proxy_pass http://127.0.0.1:{upstreams["starlette"]}/; }}
    }}
}}
"""


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    yield from redis_server_fixture()


class Site:
    def __init__(self, front: str, upstreams: dict[str, str], cert: Path) -> None:
        self.front = front  # https://127.0.0.1:PORT
        self.upstreams = upstreams  # prefix -> http://127.0.0.1:PORT of the app itself
        self.context = ssl.create_default_context(cafile=str(cert))

    def client(self, local_address: str = "127.0.0.1") -> httpx.Client:
        return httpx.Client(
            verify=self.context, transport=httpx.HTTPTransport(verify=self.context, local_address=local_address)
        )


@pytest.fixture(scope="module")
def site(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    nginx = nginx_binary()
    root = tmp_path_factory.mktemp("served")
    (root / "report.bin").write_bytes(CONTENT)
    folder = tmp_path_factory.mktemp("nginx")
    cert, key = self_signed_certificate(folder)
    ports = {"wsgi": free_port(), "asgi": free_port(), "starlette": free_port()}
    front_port = free_port()
    (folder / "nginx.conf").write_text(nginx_config(folder, front_port, cert, key, ports))
    env = {"BLAKE2SIGN_SERVED_ROOT": str(root), "BLAKE2SIGN_REDIS_URL": redis.url}
    django_env = {**env, "DJANGO_SETTINGS_MODULE": "tests.signed_urls.proxy_settings"}
    uvicorn = [str(BIN / "uvicorn"), "--host", "127.0.0.1", "--log-level", "warning", "--proxy-headers"]
    uvicorn += ["--forwarded-allow-ips", NGINX_ADDRESS]
    commands = {
        "wsgi": (
            [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{ports['wsgi']}", "--workers", "1", "tests.signed_urls.wsgi"],
            {**django_env, "SCRIPT_NAME": "/wsgi"},
        ),
        "asgi": (
            [*uvicorn, "--port", str(ports["asgi"]), "tests.signed_urls.asgi:application"],
            {**django_env, "BLAKE2SIGN_FORCE_SCRIPT_NAME": "/asgi"},
        ),
        "starlette": (
            [*uvicorn, "--port", str(ports["starlette"]), "--root-path", "/starlette", "--factory", STARLETTE_APP],
            env,
        ),
    }
    nginx_command = [nginx, "-p", f"{folder}/", "-e", f"{folder}/error.log", "-c", f"{folder}/nginx.conf"]
    with ExitStack() as stack:
        upstreams = {
            f"/{name}": stack.enter_context(running_server(command, ports[name], **server_env))
            for name, (command, server_env) in commands.items()
        }
        stack.enter_context(running_server([*nginx_command, "-g", "daemon off;"], front_port))
        yield Site(f"https://127.0.0.1:{front_port}", upstreams, cert)


@pytest.fixture
def fresh_redis(redis: RedisServer) -> RedisServer:
    redis.flush()
    return redis


@pytest.mark.parametrize("prefix", PREFIXES)
def test_links_issued_behind_the_proxy_say_https_the_host_and_the_prefix_and_verify(site: Site, prefix: str) -> None:
    with site.client() as client:
        link = client.get(f"{site.front}{prefix}/share").text
        assert link.startswith(f"{site.front}{prefix}/files/report.bin?expires=")
        response = client.get(link)
        assert response.status_code == 200
        assert response.content == CONTENT
        ranged = client.get(link, headers={"Range": "bytes=10-19"})
        assert (ranged.status_code, ranged.content) == (206, CONTENT[10:20])
        # Without the prefix, or on another path, the link is refused (or never reaches the app).
        assert client.get(link.replace("report.bin", "other.bin")).status_code == 403


@pytest.mark.parametrize("prefix", PREFIXES)
def test_links_signed_elsewhere_for_the_public_url_verify(site: Site, prefix: str) -> None:
    """A link signed by another process (a worker sending e-mails) for the URL the client will use."""
    if prefix == "/starlette":
        signer = make_signer()
    else:
        from blake2sign_web.links.signer import URLSigner
        from tests.django_settings import SECRET_KEY

        signer = URLSigner(SECRET_KEY, purpose="blake2sign_web.signed_urls", bind_host=True)
    link = signer.sign(f"{site.front}{prefix}/files/report.bin", expires_in=600)
    with site.client() as client:
        assert client.get(link).content == CONTENT
        # Signed for another host: refused, even with that host forged in X-Forwarded-Host (nginx overwrites it).
        other = signer.sign(f"https://files.example.com{prefix}/files/report.bin", expires_in=600)
        path = other.removeprefix("https://files.example.com")
        assert client.get(site.front + path).status_code == 403
        forged = {"X-Forwarded-Host": "files.example.com", "X-Forwarded-Proto": "https"}
        assert client.get(site.front + path, headers=forged).status_code == 403


@pytest.mark.parametrize("prefix", PREFIXES)
def test_forged_forwarded_headers_sent_straight_to_the_app_gain_nothing(site: Site, prefix: str) -> None:
    direct = site.upstreams[prefix]
    app_prefix = prefix if prefix == "/wsgi" else ""  # the other two had the prefix taken off by nginx
    forged = {"X-Forwarded-Proto": "https", "X-Forwarded-For": OTHER_CLIENT}
    if prefix == "/starlette":
        # uvicorn trusts only nginx's address: from 127.0.0.1 the headers are ignored, the link says http.
        link = httpx.get(f"{direct}/share", headers=forged).text
        assert urlsplit(link).scheme == "http"
    else:
        # Django trusts the headers (SECURE_PROXY_SSL_HEADER, USE_X_FORWARDED_HOST), so the app must only be
        # reachable through the proxy; even so, a forged host must be one of ALLOWED_HOSTS: never a link to it.
        evil = httpx.get(f"{direct}{app_prefix}/share", headers={**forged, "X-Forwarded-Host": "evil.example"})
        assert evil.status_code == 400
        assert b"evil.example/" not in evil.content
    # A link for the public host, sent straight to the app under another Host: refused.
    link = make_signer().sign(f"{site.front}/starlette/files/report.bin", expires_in=600)
    if prefix == "/starlette":
        path = urlsplit(link).path.removeprefix("/starlette") + "?" + urlsplit(link).query
        assert httpx.get(direct + path).status_code == 403


def test_a_forged_client_address_does_not_continue_anothers_single_use_download(
    site: Site, fresh_redis: RedisServer
) -> None:
    """The single-use client is the address nginx saw: X-Forwarded-For from anyone else is not believed."""
    agent = {"User-Agent": "same browser"}
    with site.client(OTHER_CLIENT) as victim, site.client() as attacker:
        link = victim.get(f"{site.front}/starlette/share?once=1").text
        first = victim.get(link, headers={**agent, "Range": "bytes=0-99"})
        assert (first.status_code, first.content) == (206, CONTENT[:100])
        # Through nginx, which overwrites X-Forwarded-For with the real address.
        spoofed = {**agent, "Range": "bytes=100-199", "X-Forwarded-For": OTHER_CLIENT}
        assert attacker.get(link, headers=spoofed).status_code == 410
        # Straight to uvicorn, which does not trust 127.0.0.1's X-Forwarded-For.
        path = urlsplit(link).path.removeprefix("/starlette") + "?" + urlsplit(link).query
        host = {"Host": urlsplit(site.front).netloc}
        assert httpx.get(site.upstreams["/starlette"] + path, headers={**spoofed, **host}).status_code == 410
        # The victim continues.
        more = victim.get(link, headers={**agent, "Range": "bytes=100-199"})
        assert (more.status_code, more.content) == (206, CONTENT[100:200])


@pytest.mark.urls("tests.signed_urls.proxy_apps")
def test_django_not_configured_for_a_proxy_never_trusts_forwarded_headers(settings: Any, file_storage: Path) -> None:
    settings.BLAKE2SIGN_WEB = {"SIGNED_URLS": {"BIND_HOST": True}}
    signer_of_settings = __import__("blake2sign_web.django.signed_urls", fromlist=["get_signer"]).get_signer
    link = signer_of_settings().sign("https://localhost/files/report.bin", expires_in=600)
    path = link.removeprefix("https://localhost")
    forged = {"HTTP_X_FORWARDED_HOST": "localhost", "HTTP_X_FORWARDED_PROTO": "https"}
    # Without USE_X_FORWARDED_HOST the Host header counts: testserver, not the forged localhost.
    assert Client().get(path, **forged).status_code == 403
    assert Client().get(path, HTTP_HOST="localhost").status_code == 200
    # Without SECURE_PROXY_SSL_HEADER, a link issued for the request says http whatever the headers say.
    assert Client().get("/share", **forged).content.decode().startswith("http://testserver/files/")
    with override_settings(USE_X_FORWARDED_HOST=True, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert Client().get(path, **forged).status_code == 200
        assert Client().get("/share", **forged).content.decode().startswith("https://localhost/files/")


@pytest.mark.parametrize(
    ("path", "raw_path"),
    [("/p/hello/x", b"/p/hello/x"), ("/p/hello/x", b"/hello/x"), ("/hello/x", b"/hello/x")],
    ids=["raw_path with root_path (uvicorn)", "raw_path without root_path", "path without root_path"],
)
def test_starlette_verifies_the_prefixed_path_whatever_the_server_puts_in_raw_path(
    served_root: Path, path: str, raw_path: bytes
) -> None:
    """Servers differ on whether raw_path holds root_path; the link (url_for's) always has it."""
    from starlette.requests import Request

    from blake2sign_web.starlette.signed_urls import check_signature, request_url

    from .starlette_app import make_signer as plain_signer

    scope = {
        "type": "http", "method": "GET", "path": path, "raw_path": raw_path, "root_path": "/p",
        "query_string": b"", "headers": [(b"host", b"testserver")], "scheme": "http", "server": ("testserver", 80),
    }  # fmt: skip
    link = plain_signer().sign("/p/hello/x", expires_in=60)
    scope["query_string"] = link.partition("?")[2].encode()
    request = Request(scope)
    assert request_url(request, plain_signer()).startswith("/p/hello/x?")
    assert check_signature(request, plain_signer()).expires_at is not None
