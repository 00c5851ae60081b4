"""Cookie name prefixes: a name that browsers would drop with these attributes is refused at construction."""

from __future__ import annotations

import pytest

from blake2sign_web.starlette import SessionMiddleware

from .conftest import SECRET, AppFactory, cookie_attributes, set_cookie_headers


async def app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("never called")


@pytest.mark.parametrize(
    ("name", "options", "needs"),
    [
        ("__Host-session", {}, "Secure"),
        ("__Host-session", {"https_only": True, "path": "/app"}, "Path"),
        ("__Host-session", {"https_only": True, "domain": "example.com"}, "Domain"),
        ("__Secure-session", {}, "Secure"),
        ("__host-session", {"https_only": True}, "spell the prefix '__Host-' exactly"),
        ("__Host-Http-session", {}, "Secure"),
    ],
)
def test_a_name_whose_prefix_the_attributes_break_is_refused(name: str, options: dict[str, object], needs: str) -> None:
    with pytest.raises(ValueError, match="session_cookie") as raised:
        SessionMiddleware(app, secret_key=SECRET, session_cookie=name, **options)  # type: ignore[arg-type]
    assert needs in str(raised.value)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("__Host-session", {"https_only": True}),
        ("__Host-Http-session", {"https_only": True}),
        ("__Secure-session", {"https_only": True, "path": "/app", "domain": "example.com"}),
        ("session", {}),
        ("__Hostile", {}),  # not a prefix: no dash in the right place
    ],
)
def test_a_name_whose_prefix_is_satisfied_works(client_for: AppFactory, name: str, options: dict[str, object]) -> None:
    client = client_for(session_cookie=name, base_url="https://testserver", **options)
    path = options.get("path", "/")
    if path != "/":
        return  # the test app's routes are at /: constructing it is the test
    [header] = set_cookie_headers(client.post("/write", json={"a": 1}))
    assert header.startswith(f"{name}=")
    assert client.get("/read").json() == {"a": 1}
    if options.get("https_only"):
        assert "secure" in cookie_attributes(header)
