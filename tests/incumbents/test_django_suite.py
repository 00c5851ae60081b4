"""Django's own session tests (from the installed Django's sdist) against this project's engine and middleware."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_server import redis_server_fixture

from .runner import (
    DJANGO_MIDDLEWARE_SKIPS,
    DJANGO_SESSION_STORE_SKIPS,
    SuiteRun,
    check,
    django_version,
    run_django_suite,
    skips_for,
)


@pytest.fixture(scope="module")
def suite() -> Iterator[SuiteRun]:
    for server in redis_server_fixture():
        yield run_django_suite(server.url)


def test_session_store_passes_djangos_session_tests_mixin(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_SESSION_STORE_SKIPS, django_version())
    check(suite, "SessionStoreContractTests", "SessionTestsMixin", skips)


def test_session_store_passes_djangos_session_tests_mixin_with_time_zones(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_SESSION_STORE_SKIPS, django_version())
    check(suite, "SessionStoreContractWithTimeZoneTests", "SessionTestsMixin (USE_TZ=True)", skips)


def test_session_store_passes_djangos_middleware_tests(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_MIDDLEWARE_SKIPS, django_version())
    check(suite, "DjangoMiddlewareTests", "SessionMiddlewareTests under Django's middleware", skips)


def test_our_middleware_passes_djangos_middleware_tests(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_MIDDLEWARE_SKIPS, django_version())
    check(suite, "OurMiddlewareTests", "SessionMiddlewareTests under our middleware", skips)


def test_session_store_passes_djangos_session_tests_mixin_with_revocation(suite: SuiteRun) -> None:
    skips = skips_for(DJANGO_SESSION_STORE_SKIPS, django_version())
    check(suite, "RevocableSessionStoreContractTests", "SessionTestsMixin (REVOCATION_CACHE, real Redis)", skips)
