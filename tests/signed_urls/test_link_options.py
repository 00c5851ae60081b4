"""URLSigner's link options: ``consume_on="post"``, ``filename`` and ``disposition``, all under the MAC."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from blake2sign_web import BadSignature, URLSigner
from blake2sign_web.links.signer import VerifiedLink

NOW = 1_800_000_000


def signer(**options: object) -> URLSigner:
    return URLSigner("link-options-secret-0123456789", purpose="downloads", clock=lambda: NOW, **options)  # type: ignore[arg-type]


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def test_consume_on_post_is_a_signed_parameter_of_single_use_links() -> None:
    url = signer().sign("/magic", expires_in=60, single_use=True, consume_on="post")
    assert params(url)["consume"] == ["post"]
    link = signer().verify_link(url)
    assert (link.consume_on, link.nonce is not None) == ("post", True)
    for changed in (url.replace("&consume=post", ""), url.replace("consume=post", "consume=get")):
        with pytest.raises(BadSignature):
            signer().verify_link(changed)
    plain = signer().sign("/magic", expires_in=60, single_use=True)
    assert signer().verify_link(plain).consume_on == "get"
    with pytest.raises(BadSignature):  # added to a link that was signed without it
        signer().verify_link(plain.replace("&signature", "&consume=post&signature"))


def test_consume_on_post_needs_a_single_use_link() -> None:
    with pytest.raises(ValueError, match="single_use=True"):
        signer().sign("/magic", expires_in=60, consume_on="post")
    with pytest.raises(ValueError, match="'get' or 'post'"):
        signer().sign("/magic", expires_in=60, single_use=True, consume_on="put")  # type: ignore[arg-type]
    # A consume parameter that sign() did not write (an application's own, in a URL to sign) is refused, so
    # that sign never returns a link verify refuses.
    with pytest.raises(ValueError, match="consume"):
        signer().sign("/magic?consume=now", expires_in=60)


def test_filename_and_disposition_are_signed() -> None:
    url = signer().sign("/files/2026/a1b2.pdf", expires_in=60, filename="Invoice 11 (été).pdf")
    assert params(url)["disposition"] == ["attachment"]
    assert params(url)["filename"] == ["Invoice 11 (été).pdf"]
    link = signer().verify_link(url)
    assert (link.disposition, link.filename) == ("attachment", "Invoice 11 (été).pdf")
    for changed in (
        url.replace("disposition=attachment", "disposition=inline"),
        url.replace("Invoice", "Receipt"),
        url.replace("&disposition=attachment", ""),
        url.replace("&filename=", "&x=1&filename="),
        url.replace("&signature", "&filename=evil.html&signature"),  # a second filename
    ):
        with pytest.raises(BadSignature):
            signer().verify_link(changed)
    inline = signer().verify_link(signer().sign("/files/a.png", disposition="inline"))
    assert (inline.disposition, inline.filename) == ("inline", None)


def test_disposition_or_filename_added_to_a_link_is_refused() -> None:
    url = signer().sign("/files/a.pdf", expires_in=60)
    for added in ("disposition=inline", "filename=a.html", "disposition=attachment&filename=a.exe"):
        with pytest.raises(BadSignature):
            signer().verify_link(url.replace("&signature", f"&{added}&signature"))


UNSAFE_NAMES = ["", "  ", "..", ".", "a/b.pdf", "a\\b.pdf", "a\r\nSet-Cookie: x", "a\x00b", "a\u2028b", "a\u202eb"]


@pytest.mark.parametrize("name", [*UNSAFE_NAMES, "x" * 256])
def test_unsafe_filenames_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="filename"):
        signer().sign("/files/a.pdf", filename=name)


def test_a_malformed_value_is_bad_signature_even_under_a_valid_mac() -> None:
    queries = ("disposition=download", "disposition=inline&filename=a%2Fb", "disposition=inline&filename=a%0Ab")
    for query in queries:
        # sign() refuses to write them...
        with pytest.raises(ValueError, match="cannot sign"):
            signer().sign(f"/files/a.pdf?{query}")
        # ...and a signer with other parameter names signs them as the application's own: the MAC is right
        # (it covers the pairs, not what they mean), the values are not.
        other = signer(disposition_param="as", filename_param="name").sign(f"/files/a.pdf?{query}")
        with pytest.raises(BadSignature, match="malformed"):
            signer().verify_link(other)
    post = signer(consume_param="c").sign("/magic?consume=post", expires_in=60)  # no nonce
    with pytest.raises(BadSignature, match="not single-use"):
        signer().verify_link(post)


def test_links_signed_before_these_options_still_verify_and_keep_their_meaning() -> None:
    # A link whose application had its own "filename" parameter: verified as before, the name not used.
    url = signer().sign("/export?filename=a/b.csv", expires_in=60)
    assert signer().verify_link(url) == VerifiedLink(False, NOW + 60, None)
    # Links written by the release before these options (same secret, purpose and clock): still verified.
    old = "/files/a.pdf?v=2&filename=old.csv&expires=1800000060&signature=nO6NV4WQhfipbA70AW3MvKOhGgVQZJaUfNuNCfebEnw"
    assert signer().verify_link(old) == VerifiedLink(False, NOW + 60, None)
    # The same link signed now: the same pairs, then the signer's key id just before its signature (which covers it).
    new = signer().sign("/files/a.pdf?v=2&filename=old.csv", expires_in=60)
    assert new.partition("&kid=")[0] == old.partition("&signature=")[0]
    assert new.partition("&signature=")[0] == f"{old.partition('&signature=')[0]}&kid={signer().key_id}"
    assert signer().verify_link(new) == VerifiedLink(False, NOW + 60, None)
    old_once = "/files/a.pdf?expires=1800000060&once=3ZQxjHG1jG7YabzmI1W8ZQ&signature="
    old_once += "csf_uvGv_ZToshJVgQNRQ0fJk3Fqxjg7akqMXn2G7qo"
    assert signer().verify_link(old_once) == VerifiedLink(False, NOW + 60, "3ZQxjHG1jG7YabzmI1W8ZQ", "get")


def test_parameter_names_are_configurable_and_never_ignored() -> None:
    custom = signer(filename_param="name", disposition_param="as", consume_param="confirm")
    url = custom.sign("/f", expires_in=60, single_use=True, consume_on="post", filename="a.pdf", disposition="inline")
    assert {"name", "as", "confirm"} <= set(params(url))
    assert custom.verify_link(url)[3:6] == ("post", "inline", "a.pdf")
    with pytest.raises(ValueError, match="must differ"):
        signer(filename_param="expires")
    with pytest.raises(ValueError, match="own"):
        signer(ignore=("file*",))
    with pytest.raises(ValueError, match="own"):
        signer(ignore=("dispo*",))
