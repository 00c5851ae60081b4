"""Django integration. Add ``"blake2sign_web.django"`` to INSTALLED_APPS.

- ``SESSION_ENGINE = "blake2sign_web.django.sessions"``: signed-cookie sessions.
- ``sign_url`` and ``signed_url_required``: signed download links.
"""

from __future__ import annotations

from typing import Any

__all__ = ["sign_url", "signed_url_required"]


def __getattr__(name: str) -> Any:
    # Imported lazily so that listing the app in INSTALLED_APPS loads nothing else.
    if name in __all__:
        from . import signed_urls

        return getattr(signed_urls, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
