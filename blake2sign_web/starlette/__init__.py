"""Starlette and FastAPI integration: a drop-in SessionMiddleware and signed download links."""

from __future__ import annotations

from typing import Any

# Imported lazily, as the Django package's, so that importing this package loads nothing else.
_LAZY = {
    "ConfirmationRequired": "signed_urls",
    "SessionCookieTooLarge": "sessions",
    "SessionMiddleware": "sessions",
    "SignedFiles": "signed_urls",
    "confirmation_handler": "signed_urls",
    "grant_cookie": "signed_urls",
    "require_signature": "signed_urls",
    "sign_url_for": "signed_urls",
    "signed_file_response": "signed_urls",
    "signed_url_required": "signed_urls",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
