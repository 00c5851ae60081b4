"""A session's cookies, for every adapter: the size policy and the cookie's Set-Cookie attributes.

A cookie over the browser's limit is silently dropped by the browser: the session would just not stick.
So a session too large for its cookie (or its ``max_chunks`` cookies) is never sent: ``OversizePolicy``
raises the adapter's exception (the default), or logs an error and the client keeps its previous cookie.
The messages keep each framework's words (its setting names, its advice); the decision is made here once.
"""

from __future__ import annotations

import logging
from typing import Final, NamedTuple

#: Browsers keep cookies of up to 4096 bytes, counting name, value and attributes.
BROWSER_COOKIE_LIMIT: Final = 4096


class OversizePolicy(NamedTuple):
    """What to do with a session too large for its cookie: raise ``exception``, or (``raise_error`` False) log."""

    cookie_name: str
    raise_error: bool
    #: The adapter's exception (a ``ValueError``), raised with the message.
    exception: type[ValueError]
    #: Added after the problem when it does not name the size limit, e.g. ", over the limit of 4096 bytes".
    over_limit: str
    #: What the user should do, in the framework's words.
    advice: str
    #: The log line's ending: what the client keeps.
    kept: str
    logger: logging.Logger

    def refuse(self, problem: str, *, limit: bool = True) -> None:
        """The adapter's exception, or an error logged; ``limit``: add ``over_limit`` (``problem`` does not say it)."""
        message = f"Session cookie {self.cookie_name!r} {problem}{self.over_limit if limit else ''}: {self.advice}"
        if self.raise_error:
            raise self.exception(message)
        self.logger.error("%s %s", message, self.kept)
