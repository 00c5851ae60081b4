"""``BLAKE2SIGN_TEST_HASHER`` (tests/hasher.py) reaches every driver: what each framework signs, it signs with it.

Under the switch, a session cookie each session driver's framework issues verifies with a core
``SerializerSigner`` of that hasher and is refused by one of another hasher (``OTHER``); a link each link driver
serves is accepted when signed with that hasher and refused when signed with another, and the link Django's
settings sign (``get_signer()``) verifies with a core ``URLSigner`` of that hasher alone. Without these, a
suite run "with hmac-sha256" could be a run with the default.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from blake2sign_web import BadSignature, URLSigner
from tests.hasher import DEFAULT, HASHER, OTHER, VARIABLE

from .drivers import DRIVERS, NEUTRAL_OPTIONS
from .link_drivers import DRIVERS as LINK_DRIVERS
from .link_drivers import PURPOSE, SECRET, DjangoLinkDriver, LinkDriver, signer


def test_the_switch_is_the_environment_s() -> None:
    assert (os.environ.get(VARIABLE, "").strip() or DEFAULT) == HASHER
    assert OTHER != HASHER
    assert NEUTRAL_OPTIONS["hasher"] == HASHER


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_each_framework_s_session_cookie_is_signed_with_the_switched_hasher(kind: str) -> None:
    driver = DRIVERS[kind]({})
    assert driver.options["hasher"] == HASHER
    with driver.running():
        response = driver.request(["set", "user", "ada"])
        assert response.status == 200, response.error
        cookie = response.cookie("session")
        assert cookie is not None
        assert not cookie.deleted
        assert driver.read_token(cookie.value, hasher=HASHER).value == {"user": "ada"}
        with pytest.raises(BadSignature):
            driver.read_token(cookie.value, hasher=OTHER)
        # And the framework reads back what it issued (the same hasher on both sides).
        assert driver.read() == {"user": "ada"}


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_each_framework_refuses_a_session_cookie_of_another_hasher(kind: str) -> None:
    driver = DRIVERS[kind]({})
    with driver.running():
        assert driver.read() == {}  # no cookie: an empty session
        response = driver.request(cookies={"session": driver.sign({"user": "ada"}, hasher=OTHER)})
        assert response.status == 200, response.error
        assert response.session == {}
        own = driver.sign({"user": "ada"})
        assert driver.request(cookies={"session": own}).session == {"user": "ada"}


@pytest.mark.parametrize("driver_class", LINK_DRIVERS, ids=[d.name for d in LINK_DRIVERS])
def test_each_link_driver_serves_links_of_the_switched_hasher_only(
    driver_class: type[LinkDriver], tmp_path: Path, redis_url: str
) -> None:
    ours, other = signer(), URLSigner(SECRET, purpose=PURPOSE, hasher=OTHER)
    assert ours.hasher == HASHER
    link, foreign = ours.sign("/links/view/", expires_in=60), other.sign("/links/view/", expires_in=60)
    assert key_id(link) == ours.key_id != key_id(foreign)
    with driver_class(tmp_path, redis_url).running() as driver:
        assert driver.request("GET", link, {}).status == 200
        assert driver.request("GET", foreign, {}).status == 403


def test_django_s_settings_sign_links_with_the_switched_hasher(tmp_path: Path, redis_url: str) -> None:
    from blake2sign_web.django.signed_urls import get_signer

    with DjangoLinkDriver(tmp_path, redis_url).running() as driver:
        issued = get_signer()
        assert issued.hasher == HASHER
        link = issued.sign("/links/view/", expires_in=60)
        URLSigner(SECRET, purpose=PURPOSE, hasher=HASHER).verify(link)
        with pytest.raises(BadSignature):
            URLSigner(SECRET, purpose=PURPOSE, hasher=OTHER).verify(link)
        assert driver.request("GET", link, {}).status == 200


def key_id(link: str) -> str:
    (value,) = parse_qs(urlsplit(link).query)["kid"]
    return value
