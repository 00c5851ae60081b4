"""URLSigner: canonical form, tampering, expiry, purposes, rotation, host and value binding."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SignatureExpired, URLSigner, get_url_signer, signer_cache_info
from blake2sign_web.exceptions import SignatureMismatch
from blake2sign_web.links.signer import MAX_URL_LENGTH
from blake2sign_web.links.text import LINK_PARAMETERS
from blake2sign_web.signing.signer import MAC_LENGTH

NOW = 1_800_000_000
SECRET = "a test secret for URLs: 0123456789"
OLD = "the old secret, being rotated out"
NEW = "the new secret, replacing the old one"


def make(**options: object) -> URLSigner:
    options.setdefault("purpose", "downloads")
    return URLSigner(SECRET, clock=lambda: NOW, **options)  # type: ignore[arg-type]


def replace_param(url: str, name: str, value: str) -> str:
    parts = urlsplit(url)
    pairs = [(k, value if k == name else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return parts._replace(query="&".join(f"{k}={v}" for k, v in pairs)).geturl()


def test_sign_appends_expiry_then_signature() -> None:
    signer = make()
    url = signer.sign("/files/a.pdf?x=1", expires_in=60)
    assert url.startswith(f"/files/a.pdf?x=1&expires={NOW + 60}&kid={signer.key_id}&signature=")
    assert len(parse_qsl(urlsplit(url).query)[-1][1]) == 43


def test_same_input_same_url() -> None:
    assert make().sign("/a?b=1", expires_in=5) == make().sign("/a?b=1", expires_in=5)


def test_timedelta_expiry() -> None:
    assert f"expires={NOW + 3600}" in make().sign("/a", expires_in=timedelta(hours=1))


def test_valid_url_verifies() -> None:
    signer = make()
    signer.verify(signer.sign("/files/a.pdf?x=1&y=2", expires_in=60))
    signer.verify(signer.sign("/files/a.pdf"))


@pytest.mark.parametrize(
    "tamper",
    [
        lambda u: u.replace("/files/a.pdf", "/files/b.pdf"),
        lambda u: u.replace("/files/", "/file/"),
        lambda u: replace_param(u, "x", "2"),
        lambda u: replace_param(u, "y", ""),
        lambda u: u.replace("x=", "z="),
        lambda u: replace_param(u, "expires", str(NOW + 61)),
        lambda u: u.replace("&expires=", "&expire="),
        lambda u: u[:-1] + ("A" if u[-1] != "A" else "B"),
        lambda u: u[:-1],
        lambda u: u + "A",
        lambda u: u.replace("signature=", "signature=A"),
        lambda u: u.replace("signature=", "sig="),
        lambda u: u + "&signature=" + u.rsplit("=", 1)[1],
        lambda u: u + "&extra=1",
        lambda u: u.replace("x=1", "x=1&x=1"),
        lambda u: u.replace("?", "?x=3&"),
        lambda u: replace_param(u, "kid", "AAAAAA"),
        lambda u: u.replace("&kid=", "&kid=A"),
        lambda u: u.replace("&kid=", "&kid2="),
    ],
)
def test_tampering_with_any_part_fails(tamper) -> None:  # type: ignore[no-untyped-def]
    signer = make()
    url = signer.sign("/files/a.pdf?x=1&y=2", expires_in=60)
    tampered = tamper(url)
    assert tampered != url
    with pytest.raises(BadSignature):
        signer.verify(tampered)


def test_removing_expiry_fails() -> None:
    signer = make()
    url = signer.sign("/a?x=1", expires_in=60)
    with pytest.raises(BadSignature):
        signer.verify(url.replace(f"&expires={NOW + 60}", ""))


def test_reordered_parameters_still_verify() -> None:
    signer = make()
    url = signer.sign("/a?b=2&a=1", expires_in=60)
    query = dict(parse_qsl(urlsplit(url).query))
    assert query["kid"] == signer.key_id
    reordered = f"/a?signature={query['signature']}&kid={query['kid']}&expires={query['expires']}&a=1&b=2"
    signer.verify(reordered)


def test_repeated_values_keep_their_order() -> None:
    signer = make()
    url = signer.sign("/a?t=1&t=2")
    signer.verify(url.replace("t=1&t=2", "t=1&other", 1).replace("other", "t=2"))
    with pytest.raises(BadSignature):
        signer.verify(url.replace("t=1&t=2", "t=2&t=1"))


@pytest.mark.parametrize(
    ("signed", "received"),
    [
        ("/files/a b.pdf", "/files/a%20b.pdf"),
        ("/files/%7Euser", "/files/~user"),
        ("/files/caf%C3%A9", "/files/café"),
        ("/files/x?q=a b", "/files/x?q=a+b"),
        ("/files/x?q=a%2bb", "/files/x?q=a%2Bb"),
        ("/files/x?n%61me=1", "/files/x?name=1"),
    ],
)
def test_equivalent_spellings_verify(signed: str, received: str) -> None:
    signer = make()
    signature = signer.sign(signed).rsplit("signature=", 1)[1]
    sep = "&" if "?" in received else "?"
    signer.verify(f"{received}{sep}kid={signer.key_id}&signature={signature}")


def test_plus_and_encoded_plus_differ() -> None:
    signer = make()
    signature = signer.sign("/x?q=a+b").rsplit("signature=", 1)[1]
    with pytest.raises(BadSignature):
        signer.verify(f"/x?q=a%2Bb&kid={signer.key_id}&signature={signature}")


def test_added_parameter_fails_unless_ignored() -> None:
    strict = make()
    lenient = make(ignore=("utm_*", "fbclid"))
    url = lenient.sign("/a?x=1", expires_in=60)
    lenient.verify(url + "&utm_source=mail&utm_medium=x&fbclid=abc")
    with pytest.raises(BadSignature):
        lenient.verify(url + "&utmx=1")
    with pytest.raises(BadSignature):
        strict.verify(strict.sign("/a?x=1") + "&utm_source=mail")


def test_ignore_cannot_cover_signature_or_expiry() -> None:
    with pytest.raises(ValueError, match="ignore pattern"):
        make(ignore=("exp*",))
    with pytest.raises(TypeError):
        make(ignore="utm_*")
    with pytest.raises(TypeError):
        get_url_signer(SECRET, purpose="downloads", ignore="utm_*")


def test_expired() -> None:
    url = make().sign("/a", expires_in=60)
    later = URLSigner(SECRET, purpose="downloads", clock=lambda: NOW + 60)
    with pytest.raises(SignatureExpired) as caught:
        later.verify(url)
    assert caught.value.expired_at == NOW + 60
    URLSigner(SECRET, purpose="downloads", clock=lambda: NOW + 59).verify(url)


def test_expires_at_gives_the_expiry_as_a_time() -> None:
    signer = make()
    at = signer.sign("/a", expires_at=NOW + 60)
    assert at == signer.sign("/a", expires_in=60)
    assert signer.sign("/a", expires_at=datetime.fromtimestamp(NOW + 60, tz=timezone.utc)) == at
    with pytest.raises(SignatureExpired):
        signer.verify(signer.sign("/a", expires_at=NOW))  # a time already past: a link already expired
    with pytest.raises(ValueError, match="not both"):
        signer.sign("/a", expires_in=60, expires_at=NOW + 60)
    with pytest.raises(ValueError, match="aware datetime"):
        signer.sign("/a", expires_at=datetime(2027, 1, 1))
    for wrong in (-1, 10**10):
        with pytest.raises(ValueError, match="expires_at must be Unix seconds"):
            signer.sign("/a", expires_at=wrong)
    with pytest.raises(TypeError, match="expires_at"):
        signer.sign("/a", expires_at=True)


def signed_as_written(url: str) -> str:
    """``url`` signed with this file's key, its ``expires`` and ``once`` kept as written (not read as the signer's).

    The parameter names are not part of the key, so a signer whose own names differ signs them as the
    application's parameters: a link such as a forger with the key could write, for checks after the MAC.
    """
    return make(expires_param="x-expires", nonce_param="x-once").sign(url)


@pytest.mark.parametrize("expires", ["", "+1800000100", " 1800000100", "1e10", "99999999999", "١٢"])
def test_malformed_expiry_is_bad_signature(expires: str) -> None:
    # Signed as it is (the MAC holds), the expiry itself must still be a plain number.
    with pytest.raises(BadSignature, match="malformed expiry"):
        make().verify(signed_as_written(f"/a?expires={expires}"))


def test_other_purpose_and_other_secret_fail() -> None:
    url = make().sign("/a")
    with pytest.raises(BadSignature):
        make(purpose="avatars").verify(url)
    with pytest.raises(BadSignature):
        URLSigner("a second test secret for URLs", purpose="downloads").verify(url)


def test_same_secret_as_plain_signer_does_not_verify() -> None:
    from blake2sign_web import Signer

    url = make().sign("/a")
    token = Signer(SECRET, purpose="downloads").sign("url1\n\n/a\n\n")
    assert token[-MAC_LENGTH:] != url.rsplit("=", 1)[1]


def test_rotation_with_fallbacks() -> None:
    old = URLSigner(OLD, purpose="downloads")
    new = URLSigner(NEW, purpose="downloads", fallbacks=[OLD])
    url = old.sign("/a")
    assert new.verify_url(url) is True
    assert new.verify_url(new.sign("/a")) is False
    with pytest.raises(BadSignature):
        URLSigner(NEW, purpose="downloads").verify(url)


@pytest.mark.parametrize("hasher", ["blake2b", "hmac-sha256"])
@pytest.mark.parametrize("folder", [False, True])
def test_a_changed_link_naming_a_retired_key_is_refused(hasher: str, folder: bool) -> None:
    # The key id picks the retired key; its tag must still match (a retired key's link once verified without it).
    old = URLSigner(OLD, purpose="downloads", hasher=hasher)
    new = URLSigner(NEW, purpose="downloads", fallbacks=[OLD], hasher=hasher)
    url = old.sign_prefix("/v/12/", expires_in=60).link("a.ts") if folder else old.sign("/v/12/a.ts", expires_in=60)
    assert new.verify_link(url).used_fallback
    changed_tag = url[:-1] + ("A" if url[-1] != "A" else "B")
    # What the MAC covers: a folder link's prefix, a one-file link's path, and the query.
    changed = url.replace("prefix=%2Fv%2F12%2F", "prefix=%2Fv%2F") if folder else url.replace("a.ts", "b.ts", 1)
    for forged in (changed_tag, changed, url + "&x=1"):
        assert forged != url
        with pytest.raises(SignatureMismatch):
            new.verify_link(forged)


def test_relative_by_default_ignores_scheme_and_host() -> None:
    signer = make()
    url = signer.sign("https://example.com/a?x=1")
    signer.verify(url.replace("https://example.com", "http://internal:8000"))
    signer.verify(url.replace("https://example.com", ""))


def test_host_binding() -> None:
    signer = make(bind_host=True)
    url = signer.sign("https://Example.com/a?x=1")
    signer.verify(url)
    signer.verify(url.replace("https://Example.com", "http://example.com"))
    signer.verify(url.replace("https://Example.com", "https://example.com:443"))
    for other in ("https://evil.com", "https://example.com:8443", "https://example.com.evil.com"):
        with pytest.raises(BadSignature):
            signer.verify(url.replace("https://Example.com", other))
    with pytest.raises(BadSignature, match="binds the host"):
        signer.verify(url.replace("https://Example.com", ""))
    with pytest.raises(ValueError, match="absolute URL"):
        signer.sign("/a")


def test_value_binding() -> None:
    signer = make()
    url = signer.sign("/a", bind=42)
    assert "42" not in url
    signer.verify(url, bind=42)
    for other in (43, "42", b"42", None):
        with pytest.raises(BadSignature):
            signer.verify(url, bind=other)
    with pytest.raises(BadSignature):
        signer.verify(signer.sign("/a"), bind=42)
    signer.verify(signer.sign("/a", bind="sess\nion"), bind="sess\nion")
    with pytest.raises(TypeError):
        signer.sign("/a", bind=True)


@pytest.mark.parametrize(
    "url",
    [
        "/a",
        "/a?signature=",
        "/a?signature=abc",
        "/a?signature=" + "A" * 43 + "&signature=" + "A" * 43,
        "/a?signature=" + "é" * 43,
        "/a?signature=" + "A" * 10_000,
        "http://[::1/a?signature=x",
    ],
)
def test_malformed_urls_are_bad_signature(url: str) -> None:
    with pytest.raises(BadSignature):
        make().verify(url)


def test_length_limits() -> None:
    signer = make()
    with pytest.raises(ValueError, match="max_url_length"):
        signer.sign("/" + "a" * MAX_URL_LENGTH)
    with pytest.raises(BadSignature, match="too long"):
        signer.verify("/" + "a" * MAX_URL_LENGTH)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"signature_param": ""}, "signature_param"),
        ({"expires_param": "a b"}, "expires_param"),
        ({"signature_param": "s", "expires_param": "s"}, "differ"),
        ({"max_url_length": 0}, "max_url_length"),
        ({"purpose": ""}, "purpose"),
    ],
)
def test_bad_configuration_fails_at_construction(options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make(**options)


def test_custom_parameter_names() -> None:
    signer = make(signature_param="sig", expires_param="exp")
    url = signer.sign("/a", expires_in=5)
    assert f"?exp={NOW + 5}&kid={signer.key_id}&sig=" in url
    signer.verify(url)


def test_cached_getter_builds_once() -> None:
    before = signer_cache_info().constructed
    first = get_url_signer(SECRET, purpose="p-cache", ignore=("utm_*",))
    assert get_url_signer(SECRET, purpose="p-cache", ignore=("utm_*",)) is first
    assert signer_cache_info().constructed == before + 1


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
segment = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="/?#"), min_size=1)


#: Names the signer writes itself, which sign() refuses in its input: an application's own parameters use others.
RESERVED = tuple(LINK_PARAMETERS.values())


@given(
    path=text,
    params=st.lists(st.tuples(text.filter(lambda name: bool(name) and name not in RESERVED), text), max_size=4),
    host=segment,
)
def test_any_signed_url_verifies_and_any_value_change_fails(
    path: str, params: list[tuple[str, str]], host: str
) -> None:
    from urllib.parse import quote, urlencode

    signer = make()
    url = "/" + quote(path) + ("?" + urlencode(params) if params else "")
    if url.startswith("//"):
        with pytest.raises(ValueError, match="read as a host"):
            signer.sign(url)
        url = "/%2F" + url[2:]
    signed = signer.sign(url)
    assert not signed.startswith("//")
    signer.verify(signed)
    assert signer.sign(url) == signed  # deterministic: links can be cached
    with pytest.raises(ValueError, match="'kid'"):
        signer.sign(signed)  # a signed link is not signed again: its key id comes first, just before its signature
    with pytest.raises(ValueError, match="'signature'"):
        signer.sign(signed.replace(f"kid={signer.key_id}&", ""))
    with pytest.raises(BadSignature):
        signer.verify(signed.replace("?", "?zz=1&", 1) if "?" in signed else signed + "&zz=1")
    # A first segment put in front of the path must not be read as a host and dropped from the MAC.
    with pytest.raises(BadSignature):
        signer.verify("//" + quote(host) + signed)


@pytest.mark.parametrize("prefix", ["//report-2", "///", "//report-2/", "//"])
def test_a_path_starting_with_two_slashes_is_not_read_as_a_host(prefix: str) -> None:
    signer = make()
    link = signer.sign("/report-1?x=1")
    with pytest.raises(BadSignature):
        signer.verify(prefix + link)
    bound = make(bind_host=True)
    absolute = bound.sign("https://example.com/report-1")
    with pytest.raises(BadSignature):
        bound.verify(absolute.replace("/report-1", prefix + "/report-1"))


@pytest.mark.parametrize(
    ("given", "link_path"),
    [
        ("/%2Fevil.example/x", "/%2Fevil.example/x"),  # what Django's reverse() writes for a first segment "/evil..."
        ("/files/a%2fb", "/files/a%2Fb"),
        ("/a/%2E%2E/b", "/a/%2E%2E/b"),
        ("/a/../b", "/a/%2E%2E/b"),
        ("/a/./b", "/a/%2E/b"),
        ("/./", "/%2E/"),
        ("/a/.%2e", "/a/%2E%2E"),
        ("/a/...", "/a/..."),
        ("/a.b/.well-known", "/a.b/.well-known"),
        ("/a%3Fb%23c%25d", "/a%3Fb%23c%25d"),
        ("/a%252Fb", "/a%252Fb"),
        ("/\\evil.example", "/%5Cevil.example"),
        ("/\t/evil.example", "/%09/evil.example"),
    ],
)
def test_sign_keeps_the_encoding_that_carries_meaning(given: str, link_path: str) -> None:
    signer = make()
    link = signer.sign(given)
    assert link.startswith(f"{link_path}?kid={signer.key_id}&signature=")
    signer.verify(link)
    signer.verify(given + "?" + link.partition("?")[2])


@pytest.mark.parametrize(
    ("signed", "received"),
    [
        ("/%2Fevil.example/x", "//evil.example/x"),
        ("/files/a%2Fb", "/files/a/b"),
        ("/files/a/b", "/files/a%2Fb"),
        ("/a%3Fb", "/a?b"),
        ("/a%23b", "/a#b"),
        ("/a%2541", "/aA"),
    ],
)
def test_decoding_that_changes_meaning_is_not_equivalent(signed: str, received: str) -> None:
    signer = make()
    signature = signer.sign(signed).rsplit("signature=", 1)[1]
    sep = "&" if "?" in received else "?"
    with pytest.raises(BadSignature):
        signer.verify(f"{received}{sep}kid={signer.key_id}&signature={signature}")


@pytest.mark.parametrize(
    "url",
    [
        "//evil.example/phish",
        "//evil.example",
        "https:////evil.example/x",
        "https:///x",
        "javascript:alert(1)",
        "data:text/html,x",
        "java%73cript:alert(1)",
    ],
)
def test_sign_refuses_what_a_browser_would_send_elsewhere(url: str) -> None:
    with pytest.raises(ValueError, match="cannot sign"):
        make().sign(url)


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("/report#part\r\nSet-Cookie: x=1", "part%0D%0ASet-Cookie:%20x=1"),
        ("https://files.example/report#a\x00b\x1bc", "a%00b%1Bc"),
        ("/report#caf\u00e9 \u2028", "caf%C3%A9%20%E2%80%A8"),
        ("/report#already%20encoded/and?query", "already%20encoded/and?query"),
    ],
)
def test_the_fragment_of_a_signed_link_carries_no_raw_control_or_non_ascii_character(url: str, fragment: str) -> None:
    signer = make()
    link = signer.sign(url)
    assert link.partition("#")[2] == fragment
    assert link.isascii()
    assert link.isprintable()
    assert " " not in link
    signer.verify(link)


@pytest.mark.parametrize(
    "url",
    [
        "/a\ud800?signature=" + "A" * 43,
        "/a?q=\udfff&signature=" + "A" * 43,
        "/a?\ud800=1&signature=" + "A" * 43,
        "https://ex\ud800ample.com/a?signature=" + "A" * 43,
    ],
)
def test_lone_surrogates_are_bad_signature(url: str) -> None:
    for signer in (make(), make(bind_host=True)):
        with pytest.raises(BadSignature):
            signer.verify(url)
        with pytest.raises(BadSignature):
            signer.verify_url(url)


def test_a_bind_value_that_no_request_can_carry_is_bad_signature() -> None:
    signer = make()
    with pytest.raises(BadSignature):
        signer.verify(signer.sign("/a"), bind="\ud800")


def test_ignore_patterns_must_be_strings() -> None:
    for bad in ([5], [None], [""], [b"utm_*"]):
        with pytest.raises(TypeError, match="ignore pattern"):
            make(ignore=bad)
