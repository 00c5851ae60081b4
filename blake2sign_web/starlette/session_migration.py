"""Read session cookies written by Starlette's own SessionMiddleware (and starsessions' CookieStore):
``itsdangerous.TimestampSigner(str(secret_key)).sign(b64encode(json.dumps(session)))``, undone exactly, so that
switching middleware logs nobody out. itsdangerous is imported here, at construction, only with migration on.
"""

from __future__ import annotations

import json
from base64 import b64decode
from collections.abc import Sequence
from typing import Any


class StarletteCookieReader:
    """Verify and decode one Starlette-format session cookie; ``None`` for anything else."""

    def __init__(self, secret: str, fallbacks: Sequence[str], max_age: int | None) -> None:
        try:
            import itsdangerous
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "SessionMiddleware(migrate_starlette_cookies=True) reads cookies signed by itsdangerous, "
                "which is not installed: `pip install itsdangerous`, or turn migration off"
            ) from None
        # itsdangerous verifies with every key in the list and would sign with the last.
        self._signer = itsdangerous.TimestampSigner([*fallbacks, secret])
        self._bad_signature = itsdangerous.BadSignature
        self._max_age = max_age

    def read(self, cookie: str) -> dict[str, Any] | None:
        """The session in ``cookie``, or ``None`` if it does not verify or is not a session."""
        dated = self.read_dated(cookie)
        return None if dated is None else dated[0]

    def read_dated(self, cookie: str) -> tuple[dict[str, Any], int] | None:
        """The session in ``cookie`` and the Unix second it was signed, or ``None`` as ``read``."""
        try:
            data, signed_at = self._signer.unsign(cookie.encode("utf-8"), max_age=self._max_age, return_timestamp=True)
            value = json.loads(b64decode(data))
        # binascii.Error and JSONDecodeError are ValueErrors; json raises RecursionError for nesting
        # deeper than the stack allows.
        except (self._bad_signature, ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        # Re-issued through the core, which takes what json took (integers over 64 bits too).
        return value, int(signed_at.timestamp())


def itsdangerous_shape(cookie: str) -> bool:
    """Whether a cookie looks like one of Starlette's own middleware: data.timestamp.signature (ours have no ".")."""
    return cookie.count(".") == 2
