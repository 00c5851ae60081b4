"""Serving a file, where the docs import it from: the code is ``links.files``."""

from .links.files import AsyncRangeReader, RangeReader, content_disposition

__all__ = ["AsyncRangeReader", "RangeReader", "content_disposition"]
