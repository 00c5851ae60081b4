"""Link groups in Starlette and FastAPI, revoked and checked in a real redis-server (and a real Redis Cluster)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import anyio
import pytest
import redis
from fastapi import Depends, FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SignedFiles, require_signature, signed_url_required
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from tests.redis_server import FROZEN_TIMEOUT, LoopbackCluster, RedisServer, patient_store

from .single_use_apps import CONTENT, SECRET, make_signer, write_files

WITHDRAWN = "This link has been withdrawn."
USED = "This link has already been used."


def build_app(root: Path, store: RedisStore | None, *, expired_status: int = 410) -> Starlette:
    """An endpoint, a file route and a FastAPI dependency checked in ``store``; ``/revoke/<group>`` revokes."""
    signer = make_signer()

    @signed_url_required(signer, single_use=store, expired_status=expired_status)
    async def action(request: Request) -> Response:
        return PlainTextResponse("done")

    async def revoke(request: Request) -> Response:
        assert store is not None
        await store.revoke_link_group(request.path_params["group"], 3600)
        return PlainTextResponse("revoked")

    api = FastAPI()

    @api.get("/report", dependencies=[Depends(require_signature(signer, single_use=store))])
    async def report() -> dict[str, str]:
        return {"report": "ok"}

    return Starlette(
        routes=[
            Route("/action", action),
            Route("/revoke/{group}", revoke, methods=["POST"]),
            Route("/files/{name:path}", SignedFiles(signer, root, single_use=store, expired_status=expired_status)),
            Route("/report", api),
        ]
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "served")
    (root / "videos").mkdir()
    (root / "videos" / "seg-1.ts").write_bytes(b"segment one")
    return root


def grouped(path: str, group: str = "course-42", **options: object) -> str:
    return make_signer().sign(path, expires_in=600, group=group, **options)  # type: ignore[arg-type]


def reissued(path: str, group: str = "course-42") -> str:
    """A link of ``group`` signed after a revocation now and the store's clock_skew (5 s): by a clock 6 s ahead."""
    signer = URLSigner(SECRET, purpose="downloads", clock=lambda: time.time() + revocation.DEFAULT_CLOCK_SKEW + 1)
    return signer.sign(path, expires_in=600, group=group)


def test_revoking_a_group_withdraws_its_links_issued_before(redis_server: RedisServer, root: Path) -> None:
    before, other = grouped("/action"), grouped("/action", "course-43")
    download = grouped("/files/report.bin")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert [client.get(link).status_code for link in (before, before, other, download)] == [200] * 4
        assert client.post("/revoke/course-42").status_code == 200
        at_once, after = grouped("/action"), reissued("/action")  # within the clocks' allowance, and after it
        refused, refused_file = client.get(before), client.get(download)
        assert [client.get(link).status_code for link in (at_once, after, after, other)] == [410, 200, 200, 200]
    assert (refused.status_code, refused.text) == (410, WITHDRAWN)
    assert (refused_file.status_code, refused_file.text) == (410, WITHDRAWN)


def test_the_record_is_kept_for_the_lifetime_given(redis_server: RedisServer, root: Path) -> None:
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        client.post("/revoke/course-42")
    admin = redis.Redis.from_url(redis_server.url)
    key = revocation.group_key("course-42", "tests")  # the store's key prefix
    assert 3600 <= admin.ttl(key) <= revocation.record_ttl(3600)  # type: ignore[operator]
    assert int(admin.get(key)) > 0  # type: ignore[arg-type]


def test_revoking_again_moves_the_time_forward(redis_server: RedisServer, root: Path) -> None:
    with TestClient(build_app(root, patient_store(redis_server, clock_skew=0))) as client:  # clocks in step
        client.post("/revoke/course-42")
        between = grouped("/action")
        assert client.get(between).status_code == 200
        client.post("/revoke/course-42")
        assert client.get(between).status_code == 410


def test_the_withdrawn_status_follows_expired_status(redis_server: RedisServer, root: Path) -> None:
    link = grouped("/action")
    with TestClient(build_app(root, patient_store(redis_server), expired_status=403)) as client:
        client.post("/revoke/course-42")
        assert client.get(link).status_code == 403


def test_a_fastapi_dependency_checks_the_group(redis_server: RedisServer, root: Path) -> None:
    link = grouped("/report")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        assert client.get(link).json() == {"report": "ok"}
        client.post("/revoke/course-42")
        refused = client.get(link)
    assert (refused.status_code, refused.json()) == (410, {"detail": WITHDRAWN})


def test_a_folder_link_with_a_group(redis_server: RedisServer, root: Path) -> None:
    folder = make_signer().sign_prefix("/files/videos/", expires_in=600, group="course-42")
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        first = client.get(folder.link("seg-1.ts"))
        client.post("/revoke/course-42")
        refused = client.get(folder.link("seg-1.ts"))
        ahead = URLSigner(SECRET, purpose="downloads", clock=lambda: time.time() + revocation.DEFAULT_CLOCK_SKEW + 1)
        fresh = ahead.sign_prefix("/files/videos/", expires_in=600, group="course-42")  # after the clocks' allowance
        again = client.get(fresh.link("seg-1.ts"))
    assert (first.status_code, first.content) == (200, b"segment one")
    assert (refused.status_code, refused.text) == (410, WITHDRAWN)
    assert again.status_code == 200


def test_grouped_and_single_use(redis_server: RedisServer, root: Path) -> None:
    once = grouped("/action", single_use=True)
    withdrawn = grouped("/action", single_use=True)
    download = grouped("/files/report.bin", single_use=True)
    with TestClient(build_app(root, patient_store(redis_server))) as client:
        first, second = client.get(once), client.get(once)
        start = client.get(download, headers={"range": "bytes=0-99"})
        rest = client.get(download, headers={"range": "bytes=100-"})
        client.post("/revoke/course-42")
        refused, refused_rest = client.get(withdrawn), client.get(download, headers={"range": "bytes=0-9"})
    assert (first.status_code, second.status_code, second.text) == (200, 410, USED)
    assert (start.status_code, rest.status_code, rest.content) == (206, 206, CONTENT[100:])
    assert (refused.text, refused_rest.text) == (WITHDRAWN, WITHDRAWN)


def reads_of(admin: redis.Redis, send: object) -> tuple[int, dict[str, int]]:
    """The read events the server processed for ``send()`` (each request that reaches it is one: one round
    trip), and the commands it ran, by name."""
    admin.config_resetstat()  # this command's own read came before the reset
    send()  # type: ignore[operator]
    reads = int(admin.info("stats")["total_reads_processed"]) - 1  # less the INFO's own
    stats = admin.info("commandstats")
    calls = {name.removeprefix("cmdstat_"): value["calls"] for name, value in stats.items()}
    return reads, {name: count for name, count in calls.items() if name not in ("info", "config|resetstat")}


@pytest.mark.parametrize(
    ("path", "commands"),
    [
        ("/action", {"get": 1, "set": 1}),
        ("/files/report.bin", {"get": 1, "eval": 1, "set": 2}),
    ],  # the script's own SETs
)
def test_grouped_and_single_use_is_one_round_trip(
    own_redis_server: RedisServer, root: Path, path: str, commands: dict[str, int]
) -> None:
    admin = redis.Redis.from_url(own_redis_server.url)
    admin.ping()
    with TestClient(build_app(root, patient_store(own_redis_server))) as client:
        assert client.get(grouped(path, single_use=True)).status_code == 200  # connects
        link = grouped(path, single_use=True)
        reads, ran = reads_of(admin, lambda: client.get(link))
        assert reads_of(admin, lambda: client.get(grouped(path)))[0] == 1  # a grouped link alone: one GET
    assert (reads, ran) == (1, commands)


def test_a_grouped_link_without_a_store_is_refused(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    with TestClient(build_app(root, None)) as client, caplog.at_level(logging.ERROR):
        refused = client.get(grouped("/action"))
        plain = client.get(make_signer().sign("/action", expires_in=60))
    assert (refused.status_code, plain.status_code) == (403, 200)
    assert "refused grouped URL for '/action': no single_use store configured for this endpoint" in caplog.text


@pytest.mark.parametrize("on_unavailable", ["closed", "open"])
def test_store_down(
    own_redis_server: RedisServer, root: Path, on_unavailable: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore(own_redis_server.url, timeout=FROZEN_TIMEOUT, on_unavailable=on_unavailable)  # type: ignore[arg-type]
    links = [grouped("/action"), grouped("/action", single_use=True), grouped("/files/report.bin")]
    with TestClient(build_app(root, store)) as client:
        own_redis_server.stop()
        with caplog.at_level(logging.ERROR):
            statuses = [client.get(link).status_code for link in links]
    if on_unavailable == "closed":
        assert statuses == [503] * 3
        assert "refused grouped URL for '/action': Redis failed to check a link group" in caplog.text
    else:
        assert statuses == [200] * 3
        assert "accepted grouped URL for '/action' unchecked (on_unavailable='open')" in caplog.text
        assert "accepted single-use URL for '/action' unchecked" in caplog.text


def test_on_the_cluster(redis_cluster: LoopbackCluster, root: Path) -> None:
    """The group's record and the link's use are in different slots (most often on different nodes): one
    request to each node, at once (``redis_commands.cluster_execute``)."""
    store = RedisStore(redis_cluster.url, timeout=10, key_prefix="tests")
    groups = [f"course-{n}" for n in range(8)]  # records on every node
    links = {group: grouped("/action", group, single_use=True) for group in groups}
    files = {group: grouped("/files/report.bin", group, single_use=True) for group in groups}
    with TestClient(build_app(root, store)) as client:
        assert [client.get(link).status_code for link in links.values()] == [200] * len(groups)
        assert [client.get(link).status_code for link in links.values()] == [410] * len(groups)
        assert [client.get(link).status_code for link in files.values()] == [200] * len(groups)
        fresh = {group: grouped("/action", group, single_use=True) for group in groups}
        for group in groups[::2]:
            client.post(f"/revoke/{group}")
        answers = {group: client.get(link).text for group, link in fresh.items()}
    assert answers == {group: WITHDRAWN if n % 2 == 0 else "done" for n, group in enumerate(groups)}
    nodes = {redis_cluster.node_of_key(revocation.group_key(group, "tests")).port for group in groups}
    assert len(nodes) > 1


def test_revocation_arguments_are_checked(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        store = patient_store(redis_server)
        with pytest.raises(ValueError, match="lifetime must be a positive int"):
            await store.revoke_link_group("g", 0)
        with pytest.raises(ValueError, match="group must be"):
            await store.revoke_link_group("a b", 60)
        await store.aclose()

    anyio.run(scenario)


class ConsumeOnly:
    """A store of the application's own, written before link groups: it has ``consume_link`` only."""

    def __init__(self, store: RedisStore) -> None:
        self.consume_link = store.consume_link


def test_a_store_without_check_link_refuses_grouped_links(
    redis_server: RedisServer, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = build_app(root, ConsumeOnly(patient_store(redis_server)))  # type: ignore[arg-type]
    with TestClient(app) as client, caplog.at_level(logging.ERROR):
        once = client.get(make_signer().sign("/action", expires_in=60, single_use=True))
        refused = client.get(grouped("/action"))
    assert (once.status_code, refused.status_code) == (200, 403)
    assert "refused grouped URL for '/action': the single-use store has no check_link" in caplog.text
