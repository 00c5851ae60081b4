"""Flask and Quart integration: signed-cookie sessions on the session core (``FlaskSessions``, ``QuartSessions``)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["FlaskSessions", "QuartSessions", "SessionCookieTooLarge"]
_LAZY = {"FlaskSessions": "sessions", "QuartSessions": "quart", "SessionCookieTooLarge": "sessions"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
