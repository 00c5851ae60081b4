"""Flask and Quart integration: signed-cookie sessions on the session core (``FlaskSessions``, ``QuartSessions``);
Flask's signed links (``links``)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LINKS = ("SignedFiles", "grant_cookie", "send_signed_file", "sign_url", "signed_url_required")
_LAZY = {"FlaskSessions": "sessions", "QuartSessions": "quart", "SessionCookieTooLarge": "sessions"} | dict.fromkeys(
    _LINKS, "links"
)
__all__ = [*_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
