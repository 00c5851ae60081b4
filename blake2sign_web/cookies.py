"""Cookie name prefixes and dates, where the docs import them from: the code is ``sessions.cookie_attributes``."""

from .sessions.cookie_attributes import CookieSettings, cookie_prefix, expires_for, prefix_fix, prefix_problem

__all__ = ["CookieSettings", "cookie_prefix", "expires_for", "prefix_fix", "prefix_problem"]
