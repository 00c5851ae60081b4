"""One small driver per framework for the signed-link scenarios: the same routes, the same links, real stacks.

Each driver serves, under ``/links/``: ``view/`` (a view behind the framework's decorator, answering ``ok``;
any method reaches the decorator), ``bound/`` (bound to the ``X-User`` header) and ``files/<name>`` (the
framework's file view on one directory, so that both send the same validators), and ``revoke/<group>`` (a
POST revokes a link group in the same store; a driver may also run with no store, or with one that is down).
Links are signed here with
the secret and purpose both drivers are configured with (``signer``), so one link means the same to both;
a single-use link's records go to a real redis-server. A driver answers each request with a ``LinkResponse``:
the status, the headers (lowercase names) and the body.

Real components only: Django's test client through the test settings' middleware (CSRF included), Starlette's
TestClient (httpx) through a Starlette app. Adding a framework means writing one ``LinkDriver`` subclass.
This module is also the Django driver's URLconf (``urlpatterns``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from django.http import HttpRequest, HttpResponse
from django.urls import path

from blake2sign_web import URLSigner
from blake2sign_web.django import SignedFileView, signed_url_required
from blake2sign_web.django.revocation import revoke_link_group
from tests.hasher import HASHER
from tests.servers import free_port

SECRET: Final = "link-conformance-secret-0123456789abcdefghijklmnop"
PURPOSE: Final = "conformance.links"
#: The Django storage alias of the served directory.
STORAGE: Final = "link_conformance"


def signer(*, bind_host: bool = False, **options: Any) -> URLSigner:
    """The signer every driver verifies with (its hasher: BLAKE2SIGN_TEST_HASHER, tests/hasher.py); ``options``:
    ``URLSigner``'s others (a clock...)."""
    return URLSigner(SECRET, purpose=PURPOSE, bind_host=bind_host, hasher=HASHER, **options)


@dataclass
class LinkResponse:
    status: int
    headers: dict[str, str]
    body: bytes


#: Where a driver keeps single-use and group records: the test's redis-server, none, or a Redis that is down.
StoreState = Literal["up", "none", "down"]


class LinkDriver(ABC):
    """Serves the routes above from ``root`` with single-use records in ``redis_url`` (``store``: "none", no store
    configured; "down", a Redis no one listens on, under the default policy: closed)."""

    name: str

    def __init__(self, root: Path, redis_url: str, *, bind_host: bool = False, store: StoreState = "up") -> None:
        self.root = root
        self.redis_url = redis_url if store != "down" else f"redis://127.0.0.1:{free_port()}/0"
        self.bind_host = bind_host
        self.store = store

    @abstractmethod
    def running(self) -> AbstractContextManager[LinkDriver]: ...

    @abstractmethod
    def request(self, method: str, url: str, headers: dict[str, str]) -> LinkResponse: ...


# The Django driver's URLconf.
@signed_url_required
def _view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


@signed_url_required(bind=lambda request: request.headers.get("X-User"))
def _bound(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


def _revoke(request: HttpRequest, group: str) -> HttpResponse:
    revoke_link_group(group, 60)
    return HttpResponse("revoked", content_type="text/plain")


urlpatterns = [
    path("links/revoke/<str:group>", _revoke),
    path("links/view/", _view),
    path("links/bound/", _bound),
    path("links/files/<path:name>", SignedFileView.as_view(storage=STORAGE)),
]


class DjangoLinkDriver(LinkDriver):
    name = "django"

    @contextmanager
    def running(self) -> Iterator[LinkDriver]:
        from django.conf import settings
        from django.test import Client, override_settings

        from tests.django_links import single_use_caches
        from tests.redis_server import PATIENT_OPTIONS

        storage = {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": self.root}}
        overrides = {
            "SECRET_KEY": SECRET,
            "ALLOWED_HOSTS": ["*"],
            "ROOT_URLCONF": __name__,
            "STORAGES": {**settings.STORAGES, STORAGE: storage},
            "CACHES": single_use_caches(self.redis_url, PATIENT_OPTIONS),
            "BLAKE2SIGN_WEB": {
                "SIGNED_URLS": {
                    "PURPOSE": PURPOSE,
                    "HASHER": HASHER,
                    "BIND_HOST": self.bind_host,
                    "SINGLE_USE_CACHE": None if self.store == "none" else "links",
                }
            },
        }
        with override_settings(**overrides):
            self.client = Client()
            yield self

    def request(self, method: str, url: str, headers: dict[str, str]) -> LinkResponse:
        response = self.client.generic(method, url, headers=headers)
        # Reading a streamed body to its end closes the response (the test client's wrapper does).
        body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[arg-type]
        return LinkResponse(response.status_code, {k.lower(): v for k, v in response.headers.items()}, body)


class StarletteLinkDriver(LinkDriver):
    name = "starlette"

    @contextmanager
    def running(self) -> Iterator[LinkDriver]:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import PlainTextResponse, Response
        from starlette.routing import Route
        from starlette.testclient import TestClient

        from blake2sign_web.starlette import SignedFiles, signed_url_required
        from blake2sign_web.starlette.revocation import RedisStore

        store = RedisStore(self.redis_url)
        checks = None if self.store == "none" else store  # what the views check links in
        links = signer(bind_host=self.bind_host)
        every = ["GET", "HEAD", "POST", "PUT"]  # the link decides, not the router

        @signed_url_required(links, single_use=checks)
        async def view(request: Request) -> Response:
            return PlainTextResponse("ok")

        @signed_url_required(links, single_use=checks, bind=lambda request: request.headers.get("x-user"))
        async def bound(request: Request) -> Response:
            return PlainTextResponse("ok")

        async def revoke(request: Request) -> Response:
            await store.revoke_link_group(request.path_params["group"], 60)
            return PlainTextResponse("revoked")

        @asynccontextmanager
        async def lifespan(app: Starlette) -> Any:
            yield
            await store.aclose()

        app = Starlette(
            routes=[
                Route("/links/revoke/{group}", revoke, methods=["POST"]),
                Route("/links/view/", view, methods=every),
                Route("/links/bound/", bound, methods=every),
                Route("/links/files/{name:path}", SignedFiles(links, self.root, single_use=checks)),
            ],
            lifespan=lifespan,
        )
        with TestClient(app, base_url="http://testserver") as self.client:
            yield self

    def request(self, method: str, url: str, headers: dict[str, str]) -> LinkResponse:
        response = self.client.request(method, url, headers=headers)
        return LinkResponse(response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content)


class FlaskLinkDriver(LinkDriver):
    name = "flask"

    @contextmanager
    def running(self) -> Iterator[LinkDriver]:
        import flask

        from blake2sign_web.flask.links import SignedFiles, signed_url_required
        from blake2sign_web.flask.revocation import RedisStore

        store = RedisStore(self.redis_url)
        checks = None if self.store == "none" else store  # what the views check links in
        links = signer(bind_host=self.bind_host)
        every = ["GET", "HEAD", "POST", "PUT"]  # the link decides, not the router
        app = flask.Flask(__name__)

        @app.route("/links/view/", methods=every)
        @signed_url_required(links, single_use=checks)
        def view() -> flask.Response:
            return flask.Response("ok", mimetype="text/plain")

        @app.route("/links/bound/", methods=every)
        @signed_url_required(links, single_use=checks, bind=lambda request: request.headers.get("x-user"))
        def bound() -> flask.Response:
            return flask.Response("ok", mimetype="text/plain")

        @app.post("/links/revoke/<group>")
        def revoke(group: str) -> flask.Response:
            store.revoke_link_group(group, 60)
            return flask.Response("revoked", mimetype="text/plain")

        app.add_url_rule("/links/files/<path:name>", view_func=SignedFiles(links, self.root, single_use=checks))
        self.client = app.test_client(use_cookies=False)  # the scenario's Cookie header as sent
        try:
            yield self
        finally:
            store.close()

    def request(self, method: str, url: str, headers: dict[str, str]) -> LinkResponse:
        response = self.client.open(url, method=method, headers=headers, base_url="http://testserver")
        body = response.get_data()
        response.close()
        return LinkResponse(response.status_code, {k.lower(): v for k, v in response.headers.items()}, body)


DRIVERS: Final[tuple[type[LinkDriver], ...]] = (DjangoLinkDriver, StarletteLinkDriver, FlaskLinkDriver)
