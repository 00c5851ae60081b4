"""Link groups on real servers sharing one real redis-server: gunicorn workers (Django) and uvicorn processes
(Starlette). A revocation made by another process refuses the group's links on every one of them at once."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from blake2sign_web import URLSigner
from blake2sign_web.django.revocation import revoke_link_group
from blake2sign_web.starlette.revocation import RedisStore
from blake2sign_web.stores import revocation
from tests.redis_server import PATIENT_TIMEOUT

from .single_use_apps import SECRET, make_signer
from .test_link_groups_django import use_cache
from .test_several_processes import REQUESTS, gunicorn, race, uvicorns

__all__ = ["gunicorn", "uvicorns"]  # the fixtures, shared with the several-process test
pytestmark = pytest.mark.server


@pytest.fixture
def redis_url(redis_server: Any) -> str:
    return str(redis_server.url)


def django_signer(clock: Callable[[], float] = time.time) -> URLSigner:
    from tests.django_settings import SECRET_KEY

    return URLSigner(SECRET_KEY, purpose="blake2sign_web.signed_urls", clock=clock)


def ahead() -> float:
    """A clock past a revocation made now and the clocks' allowance (5 s), within which re-issued links are refused."""
    return time.time() + revocation.DEFAULT_CLOCK_SKEW + 1


def check(bases: list[str], signer: URLSigner, revoke: Any, later: URLSigner) -> None:
    """``later``: the same signer by the clock ``ahead``."""
    link = signer.sign("/files/report.bin", expires_in=600, group="course-42")
    other = signer.sign("/files/report.bin", expires_in=600, group="course-43")
    with httpx.Client(timeout=20) as client:
        assert [client.get(base + link).status_code for base in bases] == [200] * len(bases)
        revoke("course-42")
        at_once = signer.sign("/files/report.bin", expires_in=600, group="course-42")
        again = later.sign("/files/report.bin", expires_in=600, group="course-42")
        refused = [client.get(base + link) for base in bases]
        assert [r.status_code for r in refused] == [410] * len(bases)
        assert {r.text for r in refused} == {"This link has been withdrawn."}
        assert [client.get(base + at_once).status_code for base in bases] == [410] * len(bases)
        assert [client.get(base + again).status_code for base in bases] == [200] * len(bases)
        assert [client.get(base + other).status_code for base in bases] == [200] * len(bases)
    once = later.sign("/files/report.bin", expires_in=600, group="course-42", single_use=True)
    assert race([bases[i % len(bases)] + once for i in range(REQUESTS)]) == Counter({200: 1, 410: REQUESTS - 1})


def test_uvicorn_processes(uvicorns: list[str], redis_url: str) -> None:
    def revoke(group: str) -> None:
        async def scenario() -> None:
            store = RedisStore(redis_url, timeout=PATIENT_TIMEOUT)  # the servers' own key prefix: none
            await store.revoke_link_group(group, 600)
            await store.aclose()

        anyio.run(scenario)

    check(uvicorns, make_signer(), revoke, URLSigner(SECRET, purpose="downloads", clock=ahead))


def test_gunicorn_workers(gunicorn: str, redis_url: str, settings: Any) -> None:
    use_cache(settings, redis_url)  # the workers' cache: RedisCache on the same server

    def revoke(group: str) -> None:
        revoke_link_group(group, 600)

    check([gunicorn] * 4, django_signer(), revoke, django_signer(ahead))
