"""Links that become valid at a time (``URLSigner.sign(..., starts=...)``, issue 29 part 5): the signed
``starts`` parameter, the ``CLOCK_SKEW`` margin before it, its refusals at signing and at verification, and
what a request by such a link gets (``link_requests``: 403 saying when), with an injected clock."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web import BadSignature, SignatureExpired, SignatureNotYetValid, URLSigner, VerifiedLink
from blake2sign_web.links import requests as link_requests
from blake2sign_web.links.requests import Refusal
from blake2sign_web.links.text import MAX_EXPIRES_AT
from blake2sign_web.signing.serializer import CLOCK_SKEW

NOW = 1_800_000_000
SECRET = "a test secret for links that start later"


class Clock:
    """A clock the test moves."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(clock: Clock | None = None, **options: object) -> URLSigner:
    return URLSigner(SECRET, purpose="starts", clock=clock or Clock(), **options)  # type: ignore[arg-type]


def params(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def test_sign_writes_a_signed_starts_parameter() -> None:
    url = make().sign("/a?x=1", expires_in=3600, starts=NOW + 600)
    assert url.startswith(f"/a?x=1&expires={NOW + 3600}&starts={NOW + 600}&kid={make().key_id}&signature=")
    link = make(Clock(NOW + 600)).verify_link(url)
    assert link == VerifiedLink(False, NOW + 3600, None, starts_at=NOW + 600)
    assert make().verify_link(make().sign("/a")).starts_at is None


@pytest.mark.parametrize(
    ("now", "valid"),
    [
        (NOW + 600 - CLOCK_SKEW - 1, False),
        (NOW + 600 - CLOCK_SKEW - 0.001, False),
        (NOW + 600 - CLOCK_SKEW, True),  # the margin: another server's clock may be that far ahead
        (NOW + 600, True),
        (NOW + 3599.999, True),
    ],
)
def test_a_link_is_accepted_from_its_start_less_the_clock_skew(now: float, valid: bool) -> None:
    url = make().sign("/a", expires_in=3600, starts=NOW + 600)
    if valid:
        assert make(Clock(now)).verify_link(url).starts_at == NOW + 600
        return
    with pytest.raises(SignatureNotYetValid, match="not valid yet") as caught:
        make(Clock(now)).verify_link(url)
    assert caught.value.valid_from == NOW + 600
    assert caught.value.valid_from_datetime == datetime.fromtimestamp(NOW + 600, tz=timezone.utc)
    assert isinstance(caught.value, BadSignature)
    assert not isinstance(caught.value, SignatureExpired)


def test_the_expiry_still_ends_a_link_with_a_start() -> None:
    url = make().sign("/a", expires_in=3600, starts=NOW + 600)
    with pytest.raises(SignatureExpired):
        make(Clock(NOW + 3600)).verify_link(url)


def test_a_start_without_an_expiry() -> None:
    url = make().sign("/a", starts=NOW + 600)
    with pytest.raises(SignatureNotYetValid):
        make().verify(url)
    assert make(Clock(NOW + 10**6)).verify_link(url) == VerifiedLink(False, None, None, starts_at=NOW + 600)


def test_starts_as_an_aware_datetime_is_rounded_up() -> None:
    when = datetime.fromtimestamp(NOW + 600, tz=timezone.utc) - timedelta(milliseconds=500)
    assert params(make().sign("/a", starts=when))["starts"] == str(NOW + 600)
    paris = when.astimezone(timezone(timedelta(hours=1)))
    assert make().sign("/a", starts=paris) == make().sign("/a", starts=NOW + 600)


@pytest.mark.parametrize(
    ("starts", "error", "message"),
    [
        (datetime(2027, 1, 1), ValueError, "starts must be an aware datetime"),
        ("1800000600", TypeError, "starts must be Unix seconds"),
        (1.5, TypeError, "starts must be Unix seconds"),
        (True, TypeError, "starts must be Unix seconds"),
        (-1, ValueError, "starts must be Unix seconds from 0"),
        (MAX_EXPIRES_AT + 1, ValueError, "starts must be Unix seconds from 0"),
    ],
)
def test_sign_refuses_a_start_that_is_no_time(starts: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make().sign("/a", starts=starts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "keywords",
    [
        {"expires_in": 600, "starts": NOW + 600},
        {"expires_in": 600, "starts": NOW + 601},
        {"expires_at": NOW + 600, "starts": NOW + 600},
        {"expires_at": datetime.fromtimestamp(NOW, tz=timezone.utc), "starts": NOW + 1},
    ],
)
def test_sign_refuses_a_start_at_or_after_the_expiry(keywords: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"starts \(\d+\) must be before the link's expiry \(\d+\)"):
        make().sign("/a", **keywords)  # type: ignore[arg-type]


def test_a_single_use_link_may_start_later() -> None:
    url = make().sign("/a", expires_in=3600, single_use=True, starts=NOW + 600)
    with pytest.raises(SignatureNotYetValid):
        make().verify(url)
    link = make(Clock(NOW + 600)).verify_link(url)
    assert link.nonce is not None
    assert link.expires_at == NOW + 3600
    assert link.starts_at == NOW + 600


def test_the_starts_parameter_is_the_signers_own() -> None:
    with pytest.raises(ValueError, match=r"already has 'starts'.*pass starts= instead.*starts_param="):
        make().sign("/events?starts=2027-01-01")
    renamed = make(starts_param="st")
    url = renamed.sign("/events?starts=2027-01-01", starts=NOW - 10)
    assert params(url)["st"] == str(NOW - 10)
    assert params(url)["starts"] == "2027-01-01"
    assert renamed.verify_link(url).starts_at == NOW - 10
    with pytest.raises(ValueError, match="must differ"):
        make(starts_param="expires")
    with pytest.raises(ValueError, match="would ignore"):
        make(ignore=("st*",))


def test_a_changed_start_is_refused() -> None:
    url = make().sign("/a", expires_in=3600, starts=NOW + 600)
    for value in (str(NOW - 600), str(NOW + 601), ""):
        with pytest.raises(BadSignature, match="does not match"):
            make().verify(url.replace(f"starts={NOW + 600}", f"starts={value}"))
    with pytest.raises(BadSignature, match="does not match"):  # removed
        make().verify(url.replace(f"&starts={NOW + 600}", ""))
    with pytest.raises(BadSignature, match="does not match"):  # added to a link signed without one
        make().verify(make().sign("/a", expires_in=3600).replace("&signature", f"&starts={NOW - 5}&signature"))
    with pytest.raises(BadSignature, match="more than one start"):
        make().verify(url.replace("&signature", f"&starts={NOW + 600}&signature"))


def signed_as_written(url: str) -> str:
    """``url`` signed with this file's key, its ``starts`` and ``expires`` kept as written (not read as the signer's):
    a link such as a forger with the key could write, for the checks after the MAC."""
    return make(starts_param="x-starts", expires_param="x-expires").sign(url)


@pytest.mark.parametrize("starts", ["", "+1800000100", " 1800000100", "1e10", "99999999999", "١٢", "-1", "0x10"])
def test_a_malformed_start_is_bad_signature(starts: str) -> None:
    with pytest.raises(BadSignature, match="malformed start") as caught:
        make().verify(signed_as_written(f"/a?starts={starts}"))
    assert type(caught.value) is BadSignature


def test_a_start_at_or_after_the_expiry_never_verifies() -> None:
    # sign() never writes one; a link with the key could: it is refused, not "not yet valid" until it expires.
    for starts in (NOW + 60, NOW + 61):
        with pytest.raises(BadSignature, match="starts at or after its expiry"):
            make().verify(signed_as_written(f"/a?expires={NOW + 60}&starts={starts}"))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=MAX_EXPIRES_AT),
    st.integers(min_value=0, max_value=MAX_EXPIRES_AT) | st.none(),
    st.floats(min_value=0, max_value=MAX_EXPIRES_AT + 10.0, allow_nan=False),
)
def test_any_start_and_expiry_round_trip(starts: int, expires: int | None, now: float) -> None:
    """Any pair ``sign()`` accepts verifies as itself, exactly when the clock is within [starts - skew, expires)."""
    if expires is not None and starts >= expires:
        with pytest.raises(ValueError, match="must be before the link's expiry"):
            make().sign("/a", starts=starts, expires_at=expires)
        return
    url = make().sign("/a", starts=starts, expires_at=expires)
    checker = make(Clock(now))
    if expires is not None and now >= expires:
        with pytest.raises(SignatureExpired):
            checker.verify_link(url)
    elif now < starts - CLOCK_SKEW:
        with pytest.raises(SignatureNotYetValid):
            checker.verify_link(url)
    else:
        assert checker.verify_link(url) == VerifiedLink(False, expires, None, starts_at=starts)


def test_a_request_before_the_start_gets_403_saying_when(caplog: pytest.LogCaptureFixture) -> None:
    signer = make(Clock(NOW))
    url = make().sign("/a", expires_in=7200, starts=1_800_003_600)
    with caplog.at_level(logging.INFO, logger="blake2sign_web.signed_urls"):
        refusal = link_requests.check(signer, url, None, "/a", "GET")
    assert refusal == Refusal(403, "This link is not valid yet; it becomes valid at 2027-01-15 09:00:00 UTC.")
    assert refusal.headers == {}
    assert caplog.messages == ["signed URL for '/a' is not valid before 1800003600"]
    assert "signature=" not in caplog.text
    assert link_requests.check(make(Clock(1_800_003_600 - CLOCK_SKEW)), url, None, "/a", "GET") == VerifiedLink(
        False, NOW + 7200, None, starts_at=1_800_003_600
    )
