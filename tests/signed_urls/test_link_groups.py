"""Link groups in the core: what sign writes, what verify_link reads and refuses, the revocation record's rule."""

from __future__ import annotations

import time

import pytest

from blake2sign_web.exceptions import BadSignature
from blake2sign_web.links.requests import Consumption, StoreCall, before_store, consumed, needs_store
from blake2sign_web.links.signer import URLSigner
from blake2sign_web.stores import revocation
from blake2sign_web.stores.revocation import StoreUnavailable

SECRET = "link-group-tests-secret-0123456789"


def signer(**options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", **options)  # type: ignore[arg-type]


def query_names(link: str) -> list[str]:
    return [pair.partition("=")[0] for pair in link.partition("?")[2].split("&")]


def test_a_grouped_link_carries_its_group_and_issue_time_in_microseconds() -> None:
    before = int(time.time() * 1_000_000)
    link = signer().sign("/report?id=7", expires_in=60, group="course-42")
    after = int(time.time() * 1_000_000)
    assert query_names(link) == ["id", "expires", "group", "issued", "kid", "signature"]
    verified = signer().verify_link(link)
    assert verified.group == "course-42"
    assert verified.issued_us is not None
    assert before <= verified.issued_us <= after


def test_a_link_without_group_has_none() -> None:
    verified = signer().verify_link(signer().sign("/report", expires_in=60))
    assert (verified.group, verified.issued_us) == (None, None)
    assert not needs_store(verified)


def test_the_mac_covers_group_and_issue_time() -> None:
    link = signer().sign("/report", expires_in=60, group="course-42")
    issued = str(signer().verify_link(link).issued_us)
    for forged in (
        link.replace("group=course-42", "group=course-43"),
        link.replace(f"issued={issued}", f"issued={int(issued) + 10**9}"),  # later than a revocation
        link.replace("&group=course-42", ""),
        link.replace(f"&issued={issued}", ""),
    ):
        with pytest.raises(BadSignature):
            signer().verify_link(forged)


def test_folder_links_carry_a_group() -> None:
    folder = signer().sign_prefix("/videos/12/", expires_in=60, group="course-42")
    verified = signer().verify_link(folder.link("seg-1.ts"))
    assert (verified.group, verified.prefix, verified.below) == ("course-42", "/videos/12/", "seg-1.ts")
    assert verified.issued_us is not None


def test_single_use_and_group_together() -> None:
    verified = signer().verify_link(signer().sign("/report", expires_in=60, single_use=True, group="g"))
    assert verified.nonce is not None
    assert verified.group == "g"


@pytest.mark.parametrize("group", ["", "a" * 65, "a:b", "a b", "course/42", "é", "{tag}", "a\n", "a%20"])
def test_group_ids_are_checked_at_signing(group: str) -> None:
    with pytest.raises(ValueError, match="group must be 1 to 64 letters"):
        signer().sign("/report", expires_in=60, group=group)
    with pytest.raises(ValueError, match="group must be 1 to 64 letters"):
        signer().sign_prefix("/videos/", expires_in=60, group=group)


def test_a_group_id_is_a_str() -> None:
    with pytest.raises(TypeError, match="group must be a str"):
        signer().sign("/report", expires_in=60, group=42)  # type: ignore[arg-type]


def test_the_longest_group_id_is_accepted() -> None:
    group = "A_z.0-" + "x" * 58
    assert signer().verify_link(signer().sign("/r", expires_in=60, group=group)).group == group


def test_a_grouped_link_needs_an_expiry() -> None:
    with pytest.raises(ValueError, match="a grouped link needs an expiry"):
        signer().sign("/report", group="g")
    with pytest.raises(ValueError, match="a grouped link needs an expiry"):
        signer().sign_prefix("/videos/", group="g")


@pytest.mark.parametrize("name", ["group", "issued"])
def test_group_and_issued_are_the_signers_own(name: str) -> None:
    with pytest.raises(ValueError, match=f"already has {name!r}"):
        signer().sign(f"/report?{name}=1", expires_in=60)


def test_the_names_are_configurable() -> None:
    custom = signer(group_param="cohort", issued_param="at")
    link = custom.sign("/report?group=mine&issued=yes", expires_in=60, group="g")
    assert query_names(link) == ["group", "issued", "expires", "cohort", "at", "kid", "signature"]
    assert custom.verify_link(link).group == "g"
    with pytest.raises(ValueError, match="must differ"):
        signer(group_param="once")
    with pytest.raises(ValueError, match="would ignore"):
        signer(ignore=("iss*",))


def signed_by_another(url: str, **options: object) -> str:
    """``url`` whose group and issued parameters the signer's MAC covers as an application's own: a link the
    default signer reads as grouped, with a valid MAC, which ``sign`` would never write."""
    return signer(group_param="x-group", issued_param="x-issued", **options).sign(url, expires_in=60)


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("group=a%20b&issued=1", "malformed group"),
        ("group=a:b&issued=1", "malformed group"),
        ("group=&issued=1", "malformed group"),
        ("group=g&issued=", "malformed issue time"),
        ("group=g&issued=-1", "malformed issue time"),
        ("group=g&issued=1.5", "malformed issue time"),
        ("group=g&issued=%D9%A1", "malformed issue time"),  # an Arabic-Indic digit: isdigit(), not ASCII
        ("group=g&issued=" + "1" * 17, "malformed issue time"),
        ("group=g", "one group and one issue time"),
        ("issued=1", "one group and one issue time"),
        ("group=g&group=h&issued=1", "one group and one issue time"),
        ("group=g&issued=1&issued=2", "one group and one issue time"),
    ],
)
def test_malformed_group_or_issue_time_is_refused(query: str, reason: str) -> None:
    link = signed_by_another(f"/report?{query}")
    with pytest.raises(BadSignature, match=reason):
        signer().verify_link(link)


def test_a_grouped_link_without_expiry_is_refused() -> None:
    link = signer(group_param="x-group", issued_param="x-issued").sign("/report?group=g&issued=1")
    with pytest.raises(BadSignature, match="grouped URL without expiry"):
        signer().verify_link(link)


def test_the_revocation_record() -> None:
    record = revocation.group_revocation("course-42", 3600, clock=lambda: 1_800_000_000.25)
    assert (record.key, record.value) == ("blake2sign_web:group:course-42", "1800000000250000")
    assert record.ttl == revocation.record_ttl(3600)
    prefixed = revocation.group_revocation("course-42", 60, "shop")
    assert prefixed.key == "blake2sign_web:shop:group:course-42"


@pytest.mark.parametrize("lifetime", [0, -1, True, 1.5, "60", None])
def test_the_revocation_lifetime_is_a_positive_int(lifetime: object) -> None:
    with pytest.raises(ValueError, match="lifetime must be a positive int"):
        revocation.group_revocation("g", lifetime)


def test_a_revocation_names_a_valid_group() -> None:
    with pytest.raises(ValueError, match="group must be"):
        revocation.group_revocation("a:b", 60)


def test_links_issued_at_or_before_the_revocation_are_withdrawn() -> None:
    revoked = 1_800_000_000_250_000
    for record in (str(revoked), str(revoked).encode(), revoked):
        assert revocation.withdrawn(revoked - 1, record, 0)
        assert revocation.withdrawn(revoked, record, 0)  # at the instant: refused
        assert not revocation.withdrawn(revoked + 1, record, 0)
    assert not revocation.withdrawn(revoked, None, 0)
    assert revocation.withdrawn(revoked + 1, b"\x80\x04pickled", 0)  # not written by us: refuse, not guess


def test_the_clocks_allowance_widens_the_revocation() -> None:
    """``issued=`` is the signing server's clock, the record the revoking server's: with the signer 2 s ahead, a
    link signed 0.5 s before the revocation carries a time 1.5 s after it, and is refused all the same; links
    issued within the allowance after the revocation are refused too."""
    revoked = 1_800_000_000_250_000
    signed_ahead = revoked - 500_000 + 2_000_000
    assert revocation.withdrawn(signed_ahead, str(revoked), 5)
    assert revocation.withdrawn(revoked + 5_000_000, str(revoked), 5)  # at the allowance's end: refused
    assert not revocation.withdrawn(revoked + 5_000_001, str(revoked), 5)
    assert revocation.withdrawn(revoked + 250_000, str(revoked), 0.25)  # fractions of a second
    assert not revocation.withdrawn(revoked + 250_001, str(revoked), 0.25)


def test_a_link_signed_after_the_revocation_and_the_allowance_is_not_withdrawn() -> None:
    """The revocation's time is read before its write; a link signed after it (and the clocks' allowance, here 0)
    carries a later one (microseconds)."""
    for _ in range(1000):
        record = revocation.group_revocation("g", 60)
        verified = signer().verify_link(signer().sign("/r", expires_in=60, group="g"))
        assert verified.issued_us is not None
        assert not revocation.withdrawn(verified.issued_us, record.value, 0)
        assert revocation.withdrawn(verified.issued_us, record.value, 5)


def test_a_grouped_link_asks_the_store_and_needs_one() -> None:
    link = signer().verify_link(signer().sign("/r", expires_in=60, group="g"))
    assert needs_store(link)
    call = before_store(link, path="/r", missing_store=None, terms=Consumption())
    assert call == StoreCall(None, link.expires_at, None, None, "g", link.issued_us)  # type: ignore[arg-type]
    refused = before_store(link, path="/r", missing_store="SINGLE_USE_CACHE is not configured", terms=Consumption())
    assert refused is not None
    assert not isinstance(refused, StoreCall)
    assert refused.status == 403


def test_the_answers() -> None:
    def answer(value: object, fails_open: bool = False) -> object:
        return consumed(value, path="/r", fails_open=fails_open, option="on_unavailable", kind="grouped URL")  # type: ignore[arg-type]

    assert answer("ok") is None
    assert answer("withdrawn") == (410, "This link has been withdrawn.", {})
    assert answer("used") == (410, "This link has already been used.", {})
    assert answer(StoreUnavailable("down")).status == 503  # type: ignore[attr-defined]
    assert answer(StoreUnavailable("down"), True) is None
