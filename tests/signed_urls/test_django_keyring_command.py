"""``manage.py linkcheck_keyring``: the keyring of the site's own link settings, which the front server's verifier
checks the site's links with; refused, naming the setting, while the links are signed with BLAKE."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from blake2sign_web.django.signed_urls import get_signer
from blake2sign_web.edge import keyring
from blake2sign_web.edge.reference import KeyringSigner, Request, decide

LINKS = {"SIGNED_URLS": {"HASHER": "hmac-sha256", "PURPOSE": "media", "SIGNATURE_PARAM": "sig"}}


@override_settings(BLAKE2SIGN_WEB=LINKS, SECRET_KEY_FALLBACKS=["a retired secret key, long enough"])
def test_the_keyring_checks_the_sites_links(tmp_path: Path) -> None:
    out = tmp_path / "keyring.json"
    call_command("linkcheck_keyring", "--out", str(out))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    ring = keyring.load(out)
    assert ring.purpose == "media"
    assert len(ring.keys) == 2
    link = get_signer().sign_prefix("/files/videos/1/", expires_in=600).link("a.ts")
    assert "&sig=" in link
    verdict = decide(KeyringSigner(ring), Request("GET", link))
    assert (verdict.decision, verdict.below) == ("allow", "a.ts")
    tampered = decide(KeyringSigner(ring), Request("GET", link.replace("/1/", "/2/")))
    assert tampered.decision == "refuse"


@override_settings(BLAKE2SIGN_WEB={"SIGNED_URLS": {"HASHER": "blake2b"}})
def test_links_signed_with_blake_get_no_keyring(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"BLAKE2SIGN_WEB\['SIGNED_URLS'\]\['HASHER'\] is 'blake2b': set it to"):
        call_command("linkcheck_keyring", "--out", str(tmp_path / "k.json"))
    assert not (tmp_path / "k.json").exists()
