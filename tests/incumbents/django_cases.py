"""Django's own session tests, pointed at this project's engine and middleware.

``sessions_tests`` is the folder of the installed Django's source distribution; this
module runs in a pytest of its own (see runner.run_django_suite), never collected by the
project's. The classes mirror Django's own ``CookieSessionTests`` for ``signed_cookies``:
the mixin with ``backend`` set to our SessionStore, and the tests that cannot apply to a
client-side store skipped by name (runner.DJANGO_*_SKIPS), with their reasons.
"""

from __future__ import annotations

import os
import unittest
from collections.abc import Callable, Mapping
from typing import Any
from unittest import mock

from django.test import SimpleTestCase, override_settings
from sessions_tests import tests as incumbent

from blake2sign_web.django.middleware import SessionMiddleware
from blake2sign_web.django.sessions import SessionStore
from tests.hasher import HASHER

from .runner import DJANGO_MIDDLEWARE_SKIPS, DJANGO_SESSION_STORE_SKIPS, django_version, skips_for


def skip_by_name(skips: Mapping[str, str]) -> Callable[[type[Any]], type[Any]]:
    """Skip each listed test of the class with its reason; a listed test that does not exist is an error."""

    def decorate(cls: type[Any]) -> type[Any]:
        for name, reason in skips.items():
            test = getattr(cls, name, None)
            if not callable(test):
                raise LookupError(f"{cls.__name__}.{name} is in the skip list but not in Django's suite: update it")
            setattr(cls, name, unittest.skip(reason)(test))
        return cls

    return decorate


@skip_by_name(skips_for(DJANGO_SESSION_STORE_SKIPS, django_version()))
class SessionStoreContractTests(incumbent.SessionTestsMixin, SimpleTestCase):  # type: ignore[misc]
    """SessionTestsMixin, the contract every engine passes, under Django's test settings (USE_TZ = False)."""

    backend = SessionStore


@override_settings(USE_TZ=True)
class SessionStoreContractWithTimeZoneTests(SessionStoreContractTests):
    """The same contract with USE_TZ = True, as Django runs it for its database engines."""


#: A redis-server the outer test started, for the contract with revocation on.
REDIS_URL = os.environ["BLAKE2SIGN_INCUMBENT_REDIS"]


@override_settings(
    CACHES={
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "revocation": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_timeout": 10, "socket_connect_timeout": 10},
        },
    },
    BLAKE2SIGN_WEB={"SESSIONS": {"HASHER": HASHER, "REVOCATION_CACHE": "revocation", "REVOCATION_KEY_PREFIX": "tests"}},
)
class RevocableSessionStoreContractTests(SessionStoreContractTests):
    """The same contract with revocation on: each token carries a session id checked in a real Redis."""


@skip_by_name(skips_for(DJANGO_MIDDLEWARE_SKIPS, django_version()))
class DjangoMiddlewareTests(incumbent.SessionMiddlewareTests):  # type: ignore[misc]
    """SessionMiddlewareTests as Django has them: Django's middleware, with SESSION_ENGINE set to ours."""


class OurMiddlewareTests(DjangoMiddlewareTests):
    """SessionMiddlewareTests with our middleware in place of Django's (the tests build it from a module global)."""

    def setUp(self) -> None:
        super().setUp()
        swap = mock.patch.object(incumbent, "SessionMiddleware", SessionMiddleware)
        swap.start()
        self.addCleanup(swap.stop)
