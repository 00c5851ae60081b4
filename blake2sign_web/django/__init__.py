"""Django integration. Adding ``"blake2sign_web.django"`` to INSTALLED_APPS adds its system checks.

- ``SESSION_ENGINE = "blake2sign_web.django.sessions"``: signed-cookie sessions.
- ``sign_url``, ``signed_url_required`` and ``SignedFileView``: signed download links; ``grant_cookie``: a folder's.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Imported lazily so that listing the app in INSTALLED_APPS loads nothing else.
_LAZY = {
    "sign_url": "signed_urls",
    "grant_cookie": "signed_urls",
    "signed_url_required": "signed_urls",
    "SignedFileView": "views",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
