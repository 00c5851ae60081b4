"""``manage.py linkcheck_keyring --out keyring.json``: the keyring a front server checks this site's links with.

It holds the link keys of ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` (its purpose, from ``SECRET_KEY`` and
``SECRET_KEY_FALLBACKS``), never a secret: docs/link-format.md, "Keyring".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ....edge import keyring
from ...signed_urls import SECTION, SETTING, get_signer


class Command(BaseCommand):
    help = "Write the keyring a front server (nginx, a Cloudflare Worker, Node, Go) checks the signed links with."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, type=Path, help="the file to write (readable by its owner only)")

    def handle(self, *args: Any, **options: Any) -> None:
        signer = get_signer()
        if signer.hasher != keyring.ALGORITHM:
            raise CommandError(
                f"{SETTING}[{SECTION!r}]['HASHER'] is {signer.hasher!r}: set it to 'hmac-sha256' (no front server "
                "computes BLAKE), deploy, then write the keyring"
            )
        try:
            ring = keyring.for_signer(signer, settings.SECRET_KEY, tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ())))
        except ValueError as error:  # an ignore pattern a front server cannot follow
            raise CommandError(f"{SETTING}[{SECTION!r}]: {error}") from None
        keyring.write(ring, options["out"])
        ids = ", ".join(key.id for key in ring.keys)
        self.stdout.write(f"wrote {options['out']}: the link keys of purpose {ring.purpose!r} (key ids {ids})")
