"""URLSigner's single-use links: a MAC-covered nonce, an expiry required, verify_link's facts."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from blake2sign_web import BadSignature, SignatureExpired, URLSigner
from blake2sign_web.links.signer import VerifiedLink

SECRET = "single-use-links-secret-0123456789"


def signer(**options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", clock=lambda: 1_800_000_000.0, **options)  # type: ignore[arg-type]


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_single_use_link_carries_a_random_nonce_and_its_expiry() -> None:
    first = signer().sign("/files/a.pdf?v=1", expires_in=60, single_use=True)
    second = signer().sign("/files/a.pdf?v=1", expires_in=60, single_use=True)
    nonce = params(first)["once"][0]
    assert len(nonce) == 22
    assert params(second)["once"][0] != nonce
    assert signer().verify_link(first) == VerifiedLink(used_fallback=False, expires_at=1_800_000_060, nonce=nonce)


def test_ordinary_link_has_no_nonce() -> None:
    url = signer().sign("/files/a.pdf", expires_in=60)
    assert "once" not in params(url)
    assert signer().verify_link(url) == VerifiedLink(False, 1_800_000_060, None)
    assert signer().verify_link(signer().sign("/files/a.pdf")) == VerifiedLink(False, None, None)


def test_single_use_needs_an_expiry() -> None:
    with pytest.raises(ValueError, match="a single-use link needs an expiry"):
        signer().sign("/files/a.pdf", single_use=True)


def test_an_expiry_given_as_a_time_is_enough() -> None:
    url = signer().sign("/files/a.pdf", expires_at=1_800_000_100, single_use=True)
    assert signer().verify_link(url).expires_at == 1_800_000_100


def test_nonce_is_covered_by_the_mac() -> None:
    url = signer().sign("/files/a.pdf", expires_in=60, single_use=True)
    nonce = params(url)["once"][0]
    for forged in (
        url.replace(nonce, "B" * 22),
        url.replace(f"&once={nonce}", ""),
        url.replace(f"once={nonce}", f"once={nonce}&once={nonce}"),
    ):
        with pytest.raises(BadSignature):
            signer().verify_link(forged)


def test_adding_a_nonce_to_an_ordinary_link_fails() -> None:
    url = signer().sign("/files/a.pdf", expires_in=60)
    with pytest.raises(BadSignature):
        signer().verify_link(url + "&once=" + "A" * 22)


def test_malformed_or_expiryless_nonce_is_refused_even_when_signed() -> None:
    """A nonce only sign() wrote is trusted to name a store key: anything else is refused after the MAC."""
    # Signed by a signer whose own names differ: the key is the same, and "once" is written as it is.
    as_written = signer(nonce_param="x-once", expires_param="x-expires")
    with pytest.raises(BadSignature, match="malformed nonce"):
        signer().verify_link(as_written.sign("/a?once=a%20b" + "c" * 20 + "&expires=1800000060"))
    with pytest.raises(BadSignature, match="single-use URL without expiry"):
        signer().verify_link(as_written.sign("/a?once=" + "c" * 22))


def test_expired_single_use_link_is_expired() -> None:
    url = signer().sign("/a", expires_in=60, single_use=True)
    later = URLSigner(SECRET, purpose="downloads", clock=lambda: 1_800_000_060.0)
    with pytest.raises(SignatureExpired):
        later.verify_link(url)


def test_nonce_param_is_configurable_and_checked() -> None:
    url = signer(nonce_param="use").sign("/a", expires_in=60, single_use=True)
    assert "use" in params(url)
    assert signer(nonce_param="use").verify_link(url).nonce == params(url)["use"][0]
    with pytest.raises(ValueError, match="must differ"):
        signer(nonce_param="expires")
    with pytest.raises(ValueError, match="would ignore the signature, expiry or nonce"):
        signer(ignore=("on*",))
