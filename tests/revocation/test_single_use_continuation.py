"""What a used single-use link still gives, in both adapters, against a real redis-server.

Only a file download continues after the first use, and only for the same client: HEAD, or one byte range
shorter than the file, within a budget of the file's size. A view that is not a file gives nothing more
(a HEAD or a Range header ran a magic-login view again), and no request after the first gets the whole file
(``Range: bytes=0-``, an unparseable Range, an If-Range that does not match each did, as often as asked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import Client
from django.urls import reverse
from starlette.testclient import TestClient

from blake2sign_web.django import sign_url
from blake2sign_web.stores import revocation
from tests.django_links import use_served_storage, use_single_use_cache
from tests.redis_server import RedisServer, patient_store

from .single_use_apps import CONTENT, build_app, build_fastapi, make_signer, write_files

SIZE = len(CONTENT)
#: (method, headers) -> status, for one client.
Send = Callable[..., Any]


@pytest.fixture
def django_app(settings: Any, redis_server: RedisServer, tmp_path: Path) -> tuple[Send, Callable[..., str]]:
    root = write_files(tmp_path / "served")
    settings.ROOT_URLCONF = "tests.signed_urls.django_urls"
    use_single_use_cache(settings, redis_server)
    use_served_storage(settings, root)
    clients: dict[str, Client] = {}

    def send(method: str, link: str, agent: str = "downloader", **headers: str) -> Any:
        client = clients.setdefault(agent, Client(HTTP_USER_AGENT=agent))
        response = getattr(client, method.lower())(link, headers=headers)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        return response.status_code, body

    def link(kind: str) -> str:
        path = {"file": reverse("sig-files", args=["report.bin"]), "view": reverse("sig-plain", args=[1])}[kind]
        return sign_url(path, expires_in=60, single_use=True)

    return send, link


@pytest.fixture
def starlette_app(redis_server: RedisServer, tmp_path: Path) -> Iterator[tuple[Send, Callable[..., str]]]:
    root = write_files(tmp_path / "served")
    store = patient_store(redis_server)
    with TestClient(build_app(root, store)) as client:

        def send(method: str, link: str, agent: str = "downloader", **headers: str) -> Any:
            response = client.request(method, link, headers={"user-agent": agent, **headers})
            return response.status_code, response.content

        def link(kind: str) -> str:
            path = {"file": "/files/report.bin", "view": "/action"}[kind]
            return make_signer().sign(path, expires_in=60, single_use=True)

        yield send, link


@pytest.fixture(params=["django", "starlette"])
def app(request: pytest.FixtureRequest) -> tuple[Send, Callable[..., str]]:
    return request.getfixturevalue(f"{request.param}_app")  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("HEAD", {}),
        ("GET", {"Range": "bytes=0-"}),
        ("GET", {"Range": "bytes=5-9"}),
        ("GET", {"Range": "x"}),
    ],
)
def test_a_used_link_to_a_view_gives_nothing_more(
    app: tuple[Send, Callable[..., str]], method: str, headers: dict[str, str]
) -> None:
    send, link = app
    used = link("view")
    assert send("GET", used)[0] == 200
    assert send(method, used, **headers)[0] == 410


ETAG_MISMATCH = {"Range": "bytes=10-", "If-Range": '"not-the-etag"'}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Range": "bytes=0-"},
        {"Range": f"bytes=-{SIZE}"},
        {"Range": f"bytes=0-{SIZE * 2}"},
        {"Range": "bytes=oops"},
        {"Range": "bytes=0-1,5-6"},
        ETAG_MISMATCH,
        {"Range": f"bytes={SIZE}-"},
    ],
    ids=["no-range", "from-0", "suffix-whole", "past-the-end", "unparseable", "multiple", "if-range", "unsatisfiable"],
)
def test_a_used_file_link_never_gives_the_whole_file_again(
    app: tuple[Send, Callable[..., str]], headers: dict[str, str]
) -> None:
    send, link = app
    used = link("file")
    assert send("GET", used) == (200, CONTENT)
    assert [send("GET", used, **headers)[0] for _ in range(3)] == [410, 410, 410]


def test_the_same_client_continues_within_one_file_of_bytes(app: tuple[Send, Callable[..., str]]) -> None:
    send, link = app
    used = link("file")
    assert send("GET", used, Range="bytes=0-99") == (206, CONTENT[:100])
    assert send("HEAD", used)[0] == 200  # costs nothing
    assert send("GET", used, Range="bytes=100-") == (206, CONTENT[100:])  # resumed: SIZE - 100 of SIZE spent
    assert send("GET", used, Range="bytes=-100") == (206, CONTENT[-100:])  # exactly the rest of the budget
    assert send("GET", used, Range="bytes=-1")[0] == 410  # spent


def test_pieces_of_a_used_link_add_up_to_one_file_at_most(app: tuple[Send, Callable[..., str]]) -> None:
    send, link = app
    used = link("file")
    assert send("GET", used)[0] == 200
    half = SIZE // 2
    assert send("GET", used, Range=f"bytes=0-{half - 1}") == (206, CONTENT[:half])
    assert send("GET", used, Range=f"bytes={half}-") == (206, CONTENT[half:])
    assert [send("GET", used, Range="bytes=0-0")[0] for _ in range(2)] == [410, 410]


def test_another_client_gets_nothing(app: tuple[Send, Callable[..., str]]) -> None:
    send, link = app
    used = link("file")
    assert send("GET", used)[0] == 200
    assert send("HEAD", used, agent="someone-else")[0] == 410
    assert send("GET", used, agent="someone-else", Range="bytes=10-19")[0] == 410
    assert send("GET", used, Range="bytes=10-19") == (206, CONTENT[10:20])  # still the first client's


def test_the_budget_lives_no_longer_than_the_link(
    app: tuple[Send, Callable[..., str]], redis_server: RedisServer
) -> None:
    send, link = app
    used = link("file")
    assert send("GET", used)[0] == 200
    keys = redis.Redis.from_url(redis_server.url).keys("*once-budget:*")
    assert len(keys) == 1
    ttl = redis.Redis.from_url(redis_server.url).ttl(keys[0])
    assert 0 < ttl <= 60 + 60  # type: ignore[operator]  # the link's lifetime, plus at most the clock-skew margin


def test_a_single_use_post_action_runs_once(starlette_app: tuple[Send, Callable[..., str]]) -> None:
    send, link = starlette_app
    used = link("view")
    assert send("POST", used) == (200, b"done")
    assert [send("POST", used, Range="bytes=0-")[0], send("HEAD", used)[0], send("POST", used)[0]] == [410] * 3


def test_fastapi_single_use_endpoint_runs_once(redis_server: RedisServer) -> None:
    with TestClient(build_fastapi(patient_store(redis_server))) as client:
        link = make_signer().sign("/export", expires_in=60, single_use=True)
        assert client.post(link).json() == {"export": "started"}
        assert client.post(link, headers={"Range": "x"}).status_code == 410
        assert client.post(link, headers={"Range": "bytes=0-"}).status_code == 410
        report = make_signer().sign("/report", expires_in=60, single_use=True)
        assert client.get(report).status_code == 200
        assert client.get(report, headers={"Range": "bytes=1-"}).status_code == 410


def test_budget_key_is_the_links_own() -> None:
    assert revocation.budget_key("abc") != revocation.single_use_key("abc")
    assert revocation.budget_key("abc").startswith(revocation.KEY_PREFIX)


def test_budget_key_shares_the_cluster_slot_of_its_once_record() -> None:
    """The one script that consumes a file link reads and writes both: on a cluster they must share a slot."""
    from redis.crc import key_slot

    nonce = "AbCdEfGhIjKlMnOpQrStUv"
    once = revocation.single_use_key(nonce)
    assert once == "blake2sign_web:once:" + nonce  # unchanged: links used before an upgrade stay used
    assert key_slot(revocation.budget_key(nonce).encode()) == key_slot(once.encode())
    as_django_stores_it = ":1:" + once  # a cache's KEY_PREFIX and version in front
    budget = ":1:" + revocation.budget_key(nonce, as_django_stores_it)
    assert key_slot(budget.encode()) == key_slot(as_django_stores_it.encode())
