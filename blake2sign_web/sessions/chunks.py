"""Tokens longer than one cookie: split into ``name``, ``name.1``, ``name.2``... and joined back. Pure functions.

The first cookie is ``.``, the count of cookies, ``.`` and the first piece (no token starts with ``.``, so a
cookie written before chunking reads as it always did); the pieces are read in order, exactly ``count`` of them
(a stale ``name.3`` is never read), and the token's one MAC or GCM tag covers them all. A set the client sent
only in part is ``IncompleteChunks``, and a refused or incomplete set is deleted in full. ``MAX_CHUNKS`` (2) is
what nginx, gunicorn and curl let through by default. The rules: docs/core.md, "Tokens over 4 KB"; the servers'
and clients' limits: docs/deploy.md, "Cookie header limits".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from ..exceptions import BadSignature

#: Most bytes of one cookie, counting its name, "=", its value and its attributes.
COOKIE_LIMIT: Final = 4096
#: Default cap on the cookies of one token: two fit the 8 KB Cookie header of nginx, gunicorn and curl.
MAX_CHUNKS: Final = 2
#: Fewest cookies a cap may allow: a cap of one would be no chunking at all.
MIN_CHUNKS: Final = 2
#: Most cookies of one token the format allows: the count is one digit.
CHUNK_LIMIT: Final = 9

_HEADER: Final = re.compile(r"\.([2-9])\.")


class TooManyChunks(ValueError):
    """A token needs more cookies than ``max_chunks``: store less, or raise the cap."""

    def __init__(self, *, needed: int, max_chunks: int, limit: int) -> None:
        #: Cookies the token would need (at least ``max_chunks + 1``).
        self.needed = needed
        self.max_chunks = max_chunks
        self.limit = limit
        super().__init__(f"a token {self.problem('max_chunks')}")

    def problem(self, option: str) -> str:
        """What is wrong, naming the cap as the user sets it (``max_chunks``, ``BLAKE2SIGN_WEB[...]``).

        One wording for every adapter: "would take 5 cookies of at most 4096 bytes; max_chunks allows 4".
        """
        return f"would take {self.needed} cookies of at most {self.limit} bytes; {option} allows {self.max_chunks}"


class IncompleteChunks(BadSignature):
    """The client sent a chunked token only in part, or in more pieces than allowed: read as no cookie.

    Raised before anything is verified. The adapters give an empty session, log the message, and delete
    every cookie in ``cookies`` (the response writes them again if it writes a session).
    """

    def __init__(self, message: str, *, cookies: list[str]) -> None:
        super().__init__(message)
        #: The cookies of the set, to delete: ``name`` first (sent or not: a client that dropped it from its
        #: Cookie header still holds it), then each ``name.N`` the client sent, in order.
        self.cookies = cookies


def max_chunks_problem(value: object, option: str) -> str | None:
    """What is wrong with ``value`` as a cap on the cookies of one token, or None; ``option`` names it as the
    user sets it (``SessionMiddleware max_chunks``, ``BLAKE2SIGN_WEB['SESSIONS']['MAX_CHUNKS']``).
    """
    if type(value) is int and MIN_CHUNKS <= value <= CHUNK_LIMIT:
        return None
    return f"{option} must be an int from {MIN_CHUNKS} to {CHUNK_LIMIT} (cookies of one session); got {value!r}"


def chunk_name(name: str, index: int) -> str:
    """The name of the cookie that carries piece ``index`` of a token: ``name``, then ``name.1``, ``name.2``..."""
    return name if index == 0 else f"{name}.{index}"


def _check_cap(max_chunks: int) -> None:
    if problem := max_chunks_problem(max_chunks, "max_chunks"):
        raise ValueError(problem)


def _room(name: str, index: int, count: int, attributes_length: int, limit: int) -> int:
    """Characters of token that fit in cookie ``index`` of ``count``."""
    header = 3 if index == 0 and count > 1 else 0  # "." digit "."
    return limit - attributes_length - len(chunk_name(name, index).encode()) - 1 - header


def split_token(
    name: str,
    token: str,
    *,
    attributes_length: int,
    limit: int = COOKIE_LIMIT,
    max_chunks: int = MAX_CHUNKS,
) -> list[tuple[str, str]]:
    """The cookies ``(name, value)`` that carry ``token``, in order: one when it fits, else ``count`` of them.

    ``attributes_length`` is the length in bytes of what the ``Set-Cookie`` header holds after the value
    (``"; Path=/; Max-Age=1209600; Secure; HttpOnly; SameSite=Lax"``): each cookie's name, ``=``, value
    and attributes then fit in ``limit`` bytes. Every chunk must be written with the same attributes (and
    so, for a ``__Host-`` name, follows the same prefix rules). Raises ``TooManyChunks`` (a ValueError)
    past ``max_chunks``, and ValueError when not even one character of token fits beside the name and
    the attributes.
    """
    _check_cap(max_chunks)
    if token.startswith("."):
        raise ValueError("a token never starts with '.': a first cookie that does is a chunk header")
    if _room(name, 0, 1, attributes_length, limit) >= len(token):
        return [(name, token)]
    count = 2
    rooms = [_room(name, 0, count, attributes_length, limit)]
    total = rooms[0]
    while True:
        # One more cookie adds its room and changes no other: the first's is the same from two cookies on,
        # and each later one's depends on its own number only, shrinking as the numbers grow longer (so the
        # smallest room is the first's or the last's). One pass, not a list of rooms per count tried.
        rooms.append(_room(name, count - 1, count, attributes_length, limit))
        total += rooms[-1]
        if min(rooms[0], rooms[-1]) < 1:
            raise ValueError(
                f"a cookie named {name!r} with {attributes_length} bytes of attributes leaves no room for a value "
                f"within {limit} bytes"
            )
        if total >= len(token):
            break
        count += 1
    if count > max_chunks:
        raise TooManyChunks(needed=count, max_chunks=max_chunks, limit=limit)
    cookies, start = [], 0
    for index, room in enumerate(rooms):
        piece = token[start : start + room]
        start += room
        cookies.append((chunk_name(name, index), f".{count}.{piece}" if index == 0 else piece))
    return cookies


def join_chunks(name: str, cookies: Mapping[str, str], *, max_chunks: int = MAX_CHUNKS) -> str | None:
    """The token the request's cookies carry under ``name``, to verify as any token; None when they carry none.

    ``cookies`` are the request's cookies by name (Django's ``request.COOKIES``, Starlette's
    ``request.cookies``). A first cookie without a chunk header is the token itself. ``IncompleteChunks``
    (a ``BadSignature``) when the set is incomplete: a chunk missing, the first cookie missing while chunks
    of it came, or a count over ``max_chunks``; the session is then empty, as for any bad cookie, and the
    response deletes every cookie the error names.
    """
    _check_cap(max_chunks)
    first = cookies.get(name)
    if first is None:
        if chunks := stale_chunks(name, 0, cookies):
            raise _incomplete(
                name,
                cookies,
                f"cookie {name!r} is missing and {', '.join(map(repr, chunks))} of it came without it (a client "
                "that caps its Cookie header, such as curl at about 8 KB, drops cookies)",
            )
        return None
    header = _HEADER.match(first)
    if header is None:
        return first
    count = int(header.group(1))
    if count > max_chunks:
        raise _incomplete(name, cookies, f"cookie {name!r} is in {count} chunks, more than the {max_chunks} allowed")
    pieces = [first[3:]]
    for index in range(1, count):
        piece = cookies.get(chunk_name(name, index))
        if piece is None:
            raise _incomplete(
                name, cookies, f"cookie {name!r} is in {count} chunks and {chunk_name(name, index)!r} is missing"
            )
        pieces.append(piece)
    return "".join(pieces)


def _incomplete(name: str, cookies: Iterable[str], message: str) -> IncompleteChunks:
    """The error for an incomplete set: every cookie of it to delete, ``name`` whether sent or not."""
    return IncompleteChunks(message, cookies=[name, *stale_chunks(name, 0, cookies)])


def leftover_chunks(name: str, first: str | None) -> list[str]:
    """With chunking off: the chunks of a set written while it was on, for the response to delete.

    ``first`` is the value of the cookie ``name`` the client sent. One that starts with a chunk header
    (``.N.``) is no token but the first of ``N`` cookies, and the others (``name.1`` to ``name.{N-1}``) would
    travel with every request until they expire. Their names come from the header: nothing else is read.
    """
    header = None if first is None else _HEADER.match(first)
    return [] if header is None else [chunk_name(name, index) for index in range(1, int(header.group(1)))]


def refused_set(name: str, cookie_names: Iterable[str]) -> list[str]:
    """The cookies to delete when the token a set of chunks carried was refused: ``name`` and every chunk sent.

    None for a token that came in one cookie: deleting one refused cookie or keeping it is each framework's
    own rule (Django's middleware deletes the cookie of any empty session, Starlette's leaves it). A set of
    chunks is this project's own, so every adapter deletes it (docs/conformance.md).
    """
    chunks = stale_chunks(name, 0, cookie_names)
    return [name, *chunks] if chunks else []


def stale_chunks(name: str, written: int, cookie_names: Iterable[str]) -> list[str]:
    """Chunk cookies of ``name`` the client sent that the response must delete, in order.

    ``written`` is how many cookies the response sets for the token (``len(split_token(...))``; 0 when it
    deletes the session cookie itself); ``cookie_names`` are the names of the request's cookies. Every
    ``name.N`` (N from 1 to 999, written without leading zeros) with N at or past ``written`` is stale.
    ``name`` itself never is: the response either sets it or already deletes it.
    """
    # At most three digits: a name such as "session.111...1" (thousands of digits) from a client is not
    # ours, and int() would refuse to read it.
    pattern = re.compile(re.escape(name) + r"\.([1-9][0-9]{0,2})")
    stale = []
    for cookie in cookie_names:
        match = pattern.fullmatch(cookie)
        if match is not None and int(match.group(1)) >= written:
            stale.append((int(match.group(1)), cookie))
    return [cookie for _, cookie in sorted(stale)]
