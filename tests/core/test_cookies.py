"""Cookie name prefixes: the rules browsers enforce, checked before a browser silently drops the cookie."""

from __future__ import annotations

import pytest

from blake2sign_web.sessions.cookie_attributes import PREFIXES, cookie_prefix, prefix_problem


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("sessionid", None),
        ("__Host-session", "__Host-"),
        ("__host-session", "__Host-"),
        ("__HOST-session", "__Host-"),
        ("__Secure-session", "__Secure-"),
        ("__sEcUrE-session", "__Secure-"),
        ("__Host-Http-session", "__Host-Http-"),
        ("__host-http-session", "__Host-Http-"),
        ("__Http-session", "__Http-"),
        ("_Host-session", None),
        ("__Host", None),
        ("__Hostsession", None),
        ("x__Host-session", None),
        ("", None),
    ],
)
def test_prefixes_are_recognised_without_regard_to_case(name: str, prefix: str | None) -> None:
    assert cookie_prefix(name) == prefix


def test_every_prefix_is_recognised_in_its_canonical_spelling() -> None:
    assert all(cookie_prefix(prefix + "x") == prefix for prefix in PREFIXES)


@pytest.mark.parametrize(
    ("name", "secure", "path", "domain"),
    [
        ("sessionid", False, "/app", ".example.com"),  # no prefix: no rule
        ("__Secure-session", True, "/app", ".example.com"),
        ("__Host-session", True, "/", None),
        ("__Host-session", True, "/", ""),
        ("__Host-Http-session", True, "/", None),
        ("__Http-session", True, "/app", "example.com"),
    ],
)
def test_attributes_that_follow_the_prefix_pass(name: str, secure: bool, path: str, domain: str | None) -> None:
    assert prefix_problem(name, secure=secure, path=path, domain=domain, http_only=True) is None


@pytest.mark.parametrize(
    ("name", "secure", "path", "domain", "http_only", "fix"),
    [
        ("__Secure-session", False, "/", None, None, "must be Secure"),
        ("__Host-session", False, "/", None, None, "must be Secure"),
        ("__Host-session", True, "/app", None, None, "Path must be exactly '/', not '/app'"),
        ("__Host-session", True, None, None, None, "Path must be exactly '/', not None"),
        ("__Host-session", True, "/", "example.com", None, "no Domain attribute, not 'example.com'"),
        ("__Host-Http-session", True, "/", None, False, "must be HttpOnly"),
        ("__Host-Http-session", True, "/x", None, True, "Path must be exactly '/'"),
        ("__Http-session", True, "/", None, False, "must be HttpOnly"),
        ("__Http-session", False, "/", None, True, "must be Secure"),
        # A prefix in another case is enforced by Chrome and Firefox: the same rules apply...
        ("__host-session", True, "/app", None, None, "Path must be exactly '/'"),
        ("__SECURE-session", False, "/", None, None, "must be Secure"),
        # ...and even with the right attributes, other browsers see no prefix at all: spell it exactly.
        ("__host-session", True, "/", None, None, "spell the prefix '__Host-' exactly"),
    ],
)
def test_attributes_that_break_the_prefix_are_named_with_the_fix(
    name: str, secure: bool, path: str | None, domain: str | None, http_only: bool | None, fix: str
) -> None:
    problem = prefix_problem(name, secure=secure, path=path, domain=domain, http_only=http_only)
    assert problem is not None
    assert fix in problem
    assert repr(name) in problem
    assert "choose a name without the prefix" in problem


def test_every_problem_is_listed_at_once() -> None:
    problem = prefix_problem("__Host-sid", secure=False, path="/app", domain="example.com")
    assert problem is not None
    for attribute in ("Secure", "Path", "Domain"):
        assert attribute in problem


def test_http_only_is_checked_only_when_given() -> None:
    assert prefix_problem("__Http-sid", secure=True, path="/", domain=None) is None
    assert prefix_problem("__Secure-sid", secure=True, path="/", domain=None, http_only=False) is None
