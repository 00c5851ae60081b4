"""The core's session configuration and its rules on the middleware list and the shared stores (Django's E018,
E022, W005; each framework's adapter only passes what it found)."""

from __future__ import annotations

from typing import Any

import pytest

from blake2sign_web.sessions import settings as session_settings
from blake2sign_web.sessions.options import DEFAULTS

SECRET = "session-settings-test-secret-0123456789"
OURS, THEIRS = "ours.SessionMiddleware", "theirs.SessionMiddleware"


@pytest.mark.parametrize(
    ("layers", "reported"),
    [([OURS], False), ([THEIRS], False), ([OURS, THEIRS], True), ([THEIRS, OURS], True), ([OURS, OURS], True)],
)
def test_one_session_middleware(layers: list[str], reported: bool) -> None:
    found = session_settings.session_layer_problems(layers, OURS, THEIRS, stack="MIDDLEWARE", hint="(why).")
    assert [p.check_id for p in found] == (["blake2sign_web.E018"] if reported else [])
    if reported:
        assert found[0].message.startswith(f"MIDDLEWARE lists {len(layers)} session middlewares")
        assert found[0].hint == f"Keep only {OURS!r}: it replaces {THEIRS!r} (why)."


@pytest.mark.parametrize(
    ("chunked", "layers", "reported"), [(True, [THEIRS], True), (True, [OURS], False), (1, [THEIRS], False)]
)
def test_chunks_need_our_middleware(chunked: Any, layers: list[str], reported: bool) -> None:
    """A CHUNKED that is not True is its own option's problem (E021), not this one."""
    found = session_settings.chunks_layer_problems(
        chunked, layers, OURS, THEIRS, option="CHUNKED", stack="MIDDLEWARE", framework="Django"
    )
    assert [p.check_id for p in found] == (["blake2sign_web.E022"] if reported else [])


@pytest.mark.parametrize(
    ("backend", "options", "fix"),
    [
        ("django.core.cache.backends.locmem.LocMemCache", {}, session_settings.SHARED_STORE_FIX),
        (session_settings.REDIS_CACHE, {}, session_settings.STORE_TIMEOUT_FIX),
        (session_settings.REDIS_CACHE, {"socket_timeout": 1}, None),
        ("blake2sign_web.django.revocation.RedisStoreCache", {}, None),
    ],
)
def test_a_store_is_shared_and_times_out(backend: str, options: dict[str, Any], fix: str | None) -> None:
    found = session_settings.store_problems("REVOCATION_CACHE", "sessions", backend, options)
    assert [(p.check_id, p.hint) for p in found] == ([("blake2sign_web.W005", fix)] if fix else [])


def test_a_configuration_is_resolved_from_the_options() -> None:
    values = {**DEFAULTS, "chunked": True, "max_chunks": 3, "revocation_unavailable": "open", "on_oversize": "log"}
    config = session_settings.resolve(values, SECRET, [], purpose="test")
    assert (config.max_chunks, config.revocation_fails_open, config.raise_on_oversize) == (3, True, False)
    assert config.signer.loads(config.writer.dumps({"a": 1})) == {"a": 1}
    unchunked = session_settings.resolve({**values, "chunked": False}, SECRET, [], purpose="test")
    assert unchunked.max_chunks == 0
