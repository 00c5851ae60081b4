"""Grant cookies in the core: the cookie a grant sets, which cookie a request is verified by, and that a cookie
grants nothing a folder link with the same query would not."""

from __future__ import annotations

import http.cookies
from collections.abc import Callable, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web.exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from blake2sign_web.links import grants as link_cookies
from blake2sign_web.links.grants import MAX_DEPTH, MAX_VALUE_LENGTH, grant, grant_for, verify
from blake2sign_web.links.signer import URLSigner, VerifiedLink
from tests.longrun import examples

NOW = 1_800_000_000
SECRET = "a grant cookie secret, long enough to sign with"


def make(now: int = NOW, **options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", clock=lambda: now, **options)  # type: ignore[arg-type]


def by_cookie(signer: URLSigner, url: str, jar: Mapping[str, str], method: str = "GET") -> VerifiedLink | None:
    """What ``url`` gets with the cookies ``jar``: the link, or None when no cookie is used (its URL decides)."""
    value = grant_for(signer, url, method, lambda: jar)
    return None if value is None else verify(signer, url, value, None)


def test_the_cookie_a_grant_sets() -> None:
    cookie = grant(make(), "/videos/123/", secure=False, expires_in=600)
    assert cookie.name == link_cookies.grant_name("/videos/123/")
    assert cookie.name.startswith("b2s_grant_")
    assert len(cookie.name) == len("b2s_grant_") + 8
    assert (cookie.path, cookie.max_age, cookie.http_only, cookie.same_site) == ("/videos/123/", 600, True, "Lax")
    assert (cookie.secure, cookie.domain) == (False, None)
    # The signed query of the same folder link, its "=" written ":" (no raw ":" in a signed query).
    assert cookie.value == cookie.signed.query.replace("=", ":")
    assert cookie.signed == make().sign_prefix("/videos/123/", expires_in=600)
    # No framework's cookie writer quotes it (both use http.cookies).
    jar: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
    jar[cookie.name] = cookie.value
    assert jar.output(header="") == f" {cookie.name}={cookie.value}"
    parsed: http.cookies.SimpleCookie = http.cookies.SimpleCookie(f"{cookie.name}={cookie.value}")
    assert parsed[cookie.name].value == cookie.value


def test_names_per_folder_and_the_secure_prefixes() -> None:
    signer = make()
    names = {grant(signer, f"/videos/{n}/", secure=False, expires_in=60).name for n in range(50)}
    assert len(names) == 50
    assert grant(signer, "/videos/1/", secure=True, expires_in=60).name == "__Secure-" + link_cookies.grant_name(
        "/videos/1/"
    )
    # __Host- needs Path=/ and no Domain: only a Secure grant of "/" can have it.
    assert grant(signer, "/", secure=True, expires_in=60).name.startswith("__Host-b2s_grant_")
    assert grant(signer, "/", secure=True, expires_in=60, domain="example.com").name.startswith("__Secure-")
    assert grant(signer, "/", secure=False, expires_in=60).name.startswith("b2s_grant_")


def test_the_cookie_lives_until_the_grant_expires() -> None:
    assert grant(make(), "/a/", secure=False, expires_at=NOW + 125).max_age == 125
    with pytest.raises(ValueError, match="needs an expiry"):
        grant(make(), "/a/", secure=False)
    with pytest.raises(ValueError, match="already expired"):
        grant(make(), "/a/", secure=False, expires_at=NOW - 1)


@pytest.mark.parametrize(
    ("prefix", "options", "message"),
    [
        ("/a", {}, "ends with '/'"),
        ("/a/../b/", {}, "segment"),
        ("/a;b/", {}, "';' or ','"),
        ("/a,b/", {}, "';' or ','"),
        ("/x" * (MAX_DEPTH + 1) + "/", {}, "deeper than"),
        ("/" + "a" * MAX_VALUE_LENGTH + "/", {}, "exceeds"),
        ("/a/", {"same_site": "None"}, "needs a Secure cookie"),
        ("/a/", {"same_site": "lax"}, "samesite must be"),
    ],
)
def test_what_cannot_be_granted(prefix: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        grant(make(), prefix, secure=False, expires_in=60, **options)  # type: ignore[arg-type]


def test_a_cookie_verifies_every_path_inside_its_folder_and_nothing_else() -> None:
    signer = make()
    cookie = grant(signer, "/a/", secure=False, expires_in=60)
    jar = {cookie.name: cookie.value, "sessionid": "not a grant"}
    assert by_cookie(signer, "/a/x.ts", jar) == VerifiedLink(False, NOW + 60, None, prefix="/a/", below="x.ts")
    assert by_cookie(signer, "/a/b/c.ts", jar).below == "b/c.ts"  # type: ignore[union-attr]
    assert by_cookie(signer, "/a/", jar).below == ""  # type: ignore[union-attr]
    for outside in ("/ab/x.ts", "/a/../b/x.ts", "/a/%2e%2e/b", "/a/..%2Fb", "/a//x", "/A/x.ts", "/", "/b/a/x"):
        with pytest.raises(BadSignature):
            by_cookie(signer, outside, jar)


def test_the_request_query_is_verified_with_the_cookie_as_a_folder_link_would_be() -> None:
    cookie = grant(make(), "/a/", secure=False, expires_in=60)
    jar = {cookie.name: cookie.value}
    with pytest.raises(BadSignature):  # an application's parameter the link does not cover
        by_cookie(make(), "/a/x.ts?v=2", jar)
    assert by_cookie(make(ignore=("utm_*",)), "/a/x.ts?utm_source=mail", jar) is not None
    for doubled in ("prefix=%2Fa%2F", "expires=9999999999", "starts=1"):
        with pytest.raises(BadSignature):
            by_cookie(make(), f"/a/x.ts?{doubled}", jar)


def test_a_url_with_a_signature_is_verified_by_its_url_and_only_reads_use_a_cookie() -> None:
    signer = make()
    cookie = grant(signer, "/a/", secure=False, expires_in=60)
    jar = {cookie.name: cookie.value}

    def never() -> Mapping[str, str]:
        raise AssertionError("the cookies were read")

    assert grant_for(signer, "/a/x.ts?signature=x", "GET", never) is None
    assert grant_for(signer, "/a/x.ts?q=1&signature=x", "GET", never) is None
    assert grant_for(signer, None, "GET", never) is None
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        assert grant_for(signer, "/a/x.ts", method, never) is None
    assert grant_for(signer, "/a/x.ts", "HEAD", lambda: jar) == cookie.value
    assert grant_for(signer, "/a/x.ts", "GET", dict) is None  # no grant cookie: the URL decides (403)
    # A signature spelled otherwise is no URL signature: with the cookie's, the link has two, refused.
    with pytest.raises(BadSignature, match="more than one signature"):
        by_cookie(signer, "/a/x.ts?sign%61ture=x", jar)


def test_several_grants_the_deepest_folder_of_the_path_is_used() -> None:
    signer = make()
    top = grant(signer, "/v/", secure=False, expires_in=60)
    deep = grant(signer, "/v/1/", secure=True, expires_in=120)
    other = grant(signer, "/w/", secure=False, expires_in=60)
    jar = {c.name: c.value for c in (top, deep, other)}
    assert by_cookie(signer, "/v/1/seg.ts", jar).expires_at == NOW + 120  # type: ignore[union-attr]
    assert by_cookie(signer, "/v/2/seg.ts", jar).expires_at == NOW + 60  # type: ignore[union-attr]
    assert by_cookie(signer, "/w/seg.ts", jar).prefix == "/w/"  # type: ignore[union-attr]
    assert by_cookie(signer, "/x/seg.ts", jar) is None  # none for this folder: the URL decides
    # However deep the path below the folder, its grant is found (a grant is at most MAX_DEPTH segments deep).
    deep_path = "/v/" + "d/" * (MAX_DEPTH + 5) + "seg.ts"
    assert by_cookie(signer, deep_path, jar).prefix == "/v/"  # type: ignore[union-attr]
    deepest = grant(signer, "/x" * MAX_DEPTH + "/", secure=False, expires_in=60)
    jar[deepest.name] = deepest.value
    assert by_cookie(signer, "/x" * MAX_DEPTH + "/y/z/seg.ts", jar).prefix == "/x" * MAX_DEPTH + "/"  # type: ignore[union-attr]
    # A cookie under another folder's name finds nothing (the name only finds a cookie).
    assert by_cookie(signer, "/v/1/x", {top.name: deep.value, other.name: other.value}).prefix == "/v/1/"  # type: ignore[union-attr]


def test_tampered_oversized_and_malformed_cookies_are_refused() -> None:
    signer = make()
    cookie = grant(signer, "/a/", secure=False, expires_in=60)
    single = signer.sign("/a/x.ts", expires_in=60).partition("?")[2].replace("=", ":")
    values = [
        cookie.value.replace("%2Fa%2F", "%2Fb%2F"),
        cookie.value.replace("expires:", "expires:1"),
        cookie.value[:-1] + ("A" if cookie.value[-1] != "A" else "B"),
        cookie.value + "&prefix:%2F",
        cookie.value.replace(":", "="),
        '"' + cookie.value + '"',
        cookie.value + " ",
        cookie.value + ";x",
        "prefix:%2Fa%2F",
        "",
        "a" * (MAX_VALUE_LENGTH + 1),
        cookie.value + "&x:" + "a" * MAX_VALUE_LENGTH,
        "\u00e9",
        single,  # a single-file link's query, whose MAC is good for exactly this path: not a folder grant
    ]
    for value in values:
        with pytest.raises(BadSignature):
            verify(signer, "/a/x.ts", value, None)
    other = URLSigner(SECRET, purpose="sessions", clock=lambda: NOW)
    with pytest.raises(BadSignature):
        verify(other, "/a/x.ts", cookie.value, None)


@pytest.mark.parametrize(
    ("cache_control", "vary", "expected"),
    [
        (None, None, ("private", "Cookie")),
        ("max-age=60", "Accept-Encoding", ("max-age=60, private", "Accept-Encoding, Cookie")),
        ("public, max-age=60, s-maxage=600", "cookie", ("max-age=60, private", "cookie")),
        ("no-store", "*", ("no-store", "*")),
        ("Private, max-age=5", None, ("Private, max-age=5", "Cookie")),
    ],
)
def test_a_response_by_cookie_is_kept_by_no_shared_cache(
    cache_control: str | None, vary: str | None, expected: tuple[str, str]
) -> None:
    assert link_cookies.private(cache_control, vary) == expected


def test_times_and_bindings_apply_as_to_the_folder_link() -> None:
    cookie = grant(make(), "/a/", secure=False, expires_in=60, bind=42)
    assert verify(make(), "/a/x", cookie.value, 42).prefix == "/a/"
    for bound in (None, 43, "42"):
        with pytest.raises(BadSignature):
            verify(make(), "/a/x", cookie.value, bound)
    with pytest.raises(SignatureExpired):
        verify(make(NOW + 61), "/a/x", cookie.value, 42)
    later = grant(make(), "/a/", secure=False, expires_in=600, starts=NOW + 300)
    with pytest.raises(SignatureNotYetValid):
        verify(make(), "/a/x", later.value, None)
    assert verify(make(NOW + 300), "/a/x", later.value, None).starts_at == NOW + 300


def test_a_cookie_bound_to_the_host_verifies_only_there() -> None:
    signer = make(bind_host=True)
    cookie = grant(signer, "/a/", secure=True, origin="https://files.example.com", expires_in=60)
    assert cookie.path == "/a/"
    assert cookie.signed.origin == "https://files.example.com"
    assert verify(signer, "https://files.example.com/a/x", cookie.value, None).below == "x"
    jar = {cookie.name: cookie.value}
    assert grant_for(signer, "https://files.example.com/a/x", "GET", lambda: jar) == cookie.value
    with pytest.raises(BadSignature):
        verify(signer, "https://other.example.com/a/x", cookie.value, None)
    with pytest.raises(ValueError, match="binds the host"):
        grant(signer, "/a/", secure=True, expires_in=60)


#: Path segments: mostly plain (so that many paths are inside), and every trick "inside" has to refuse.
SEGMENTS = st.one_of(
    st.sampled_from(["a", "b", "ab", "c%C3%A9", "A"]),
    st.sampled_from(["a", "b", "x.ts", "%61"]),
    st.sampled_from([".", "..", "", "%2e", "%2E%2e", "%2F", "%5C", "%00", "%252e", "%C0%AE", "\u00e9"]),
)


def outcome(call: Callable[[], VerifiedLink | None]) -> object:
    try:
        return call()
    except BadSignature as error:
        return type(error)


@settings(max_examples=examples(300), deadline=None)
@given(
    folder=st.lists(st.sampled_from(["a", "b", "ab", "c%C3%A9"]), min_size=0, max_size=3),
    path=st.lists(SEGMENTS, min_size=1, max_size=6),
    query=st.one_of(st.just(""), st.sampled_from(["v=1", "utm_x=1", "prefix=%2F", "expires=1", "signature=x"])),
    under=st.booleans(),
)
def test_a_cookie_grants_what_the_folder_link_with_its_query_grants(
    folder: list[str], path: list[str], query: str, under: bool
) -> None:
    """Whatever the path (inside the folder, or any trick near it) and the request's query: the same link, or the
    same refusal, as the folder link with the cookie's query."""
    signer = make(ignore=("utm_*",))
    prefix = "/" + "".join(f"{segment}/" for segment in folder)
    cookie = grant(signer, prefix, secure=False, expires_in=60)
    url = (prefix if under else "/") + "/".join(path) + (f"?{query}" if query else "")
    by_url = outcome(
        lambda: signer.verify_link(f"{url}&{cookie.signed.query}" if query else f"{url}?{cookie.signed.query}")
    )
    # What the request gets: by the cookie, or (a signature in its URL) by its URL alone.
    jar = {cookie.name: cookie.value}
    assert outcome(lambda: by_cookie(signer, url, jar) or signer.verify_link(url)) == by_url
