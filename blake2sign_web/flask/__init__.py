"""Flask and Quart integration: signed-cookie sessions on the session core (``FlaskSessions``, ``QuartSessions``);
Flask's signed download links (``links``)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "FlaskSessions": "sessions",
    "QuartSessions": "quart",
    "SessionCookieTooLarge": "sessions",
    "SignedFiles": "links",
    "grant_cookie": "links",
    "send_signed_file": "links",
    "sign_url": "links",
    "signed_url_required": "links",
}
__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
