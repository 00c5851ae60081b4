"""A session's cookies, for every adapter: the size policy and the cookie's Set-Cookie attributes."""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable, Mapping, Sequence
from http.cookies import Morsel, SimpleCookie, _unquote  # what Starlette's cookie_parser and Django's parse_cookie use
from typing import Any, Final, NamedTuple

from .chunks import TooManyChunks, leftover_chunks, split_token, stale_chunks
from .cookie_attributes import expires_for

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
    #: The largest Set-Cookie a browser keeps (the adapter's setting, where it has one).
    limit: int = BROWSER_COOKIE_LIMIT

    def refuse(self, problem: str, *, limit: bool = True, chunks_fix: str = "") -> None:
        """The adapter's exception, or an error logged; ``limit``: add ``over_limit`` (``problem`` does not say it);
        ``chunks_fix``: how to turn chunks on, in the user's words, offered where they would carry the session."""
        advice = (
            f"{self.advice.rstrip('.')}, or {chunks_fix} to split it over several cookies."
            if chunks_fix
            else self.advice
        )
        message = f"Session cookie {self.cookie_name!r} {problem}{self.over_limit if limit else ''}: {advice}"
        if self.raise_error:
            raise self.exception(message)
        self.logger.error("%s %s", message, self.kept)


def token_cookies(
    oversize: OversizePolicy,
    token: str,
    *,
    attributes_length: int,
    max_chunks: int,
    max_chunks_name: str,
    chunks_fix: str = "",
) -> list[tuple[str, str]] | None:
    """The cookies ``(name, value)`` that carry ``token``; None when ``oversize`` refused them."""
    name = oversize.cookie_name
    if max_chunks:
        try:
            return split_token(
                name, token, attributes_length=attributes_length, limit=oversize.limit, max_chunks=max_chunks
            )
        except TooManyChunks as error:
            oversize.refuse(error.problem(max_chunks_name), limit=False)
            return None
    size = len(name) + 1 + len(token) + attributes_length  # name=value and its attributes
    if size > oversize.limit:
        oversize.refuse(f"would take {size} bytes", chunks_fix=chunks_fix)
        return None
    return [(name, token)]


def parse_cookie_header(header: str) -> dict[str, str]:
    """A Cookie header's cookies, as Starlette's ``cookie_parser`` and Django's ``parse_cookie`` read it (the same
    algorithm: browsers disregard RFC 6265 often enough that ``SimpleCookie.load`` would drop real cookies)."""
    cookies: dict[str, str] = {}
    for chunk in header.split(";"):
        key, equals, value = chunk.partition("=")
        if not equals:
            key, value = "", chunk  # an empty name (https://bugzilla.mozilla.org/show_bug.cgi?id=169091)
        key, value = key.strip(), value.strip()
        if key or value:
            cookies[key] = _unquote(value)
    return cookies


def cookies_in(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Every cookie of every ``Cookie`` header of raw (ASGI) headers, the last of a name winning: HTTP/2 clients
    send one header per cookie (RFC 9113, 8.2.3), and ASGI servers pass them on split."""
    cookies: dict[str, str] = {}
    for name, raw in headers:
        if name == b"cookie":
            cookies.update(parse_cookie_header(raw.decode("latin-1")))
    return cookies


#: What a deleted cookie carries instead of Max-Age: a date long past (Starlette's spelling).
EXPIRED: Final = "expires=Thu, 01 Jan 1970 00:00:00 GMT"


class SessionCookie:
    """A session's cookie as HTTP carries it, formatted once, in the spelling of Starlette's own middleware."""

    def __init__(
        self,
        name: str,
        *,
        path: str,
        max_age: int | None,
        same_site: str | None,
        secure: bool,
        domain: str | None,
        partitioned: bool,
        max_chunks: int,
        oversize: OversizePolicy,
        http_only: bool = True,
        dated: bool = False,
        deleted_value: str = "null",
        max_chunks_name: str = "max_chunks",
        chunks_fix: str = "pass chunked=True",
    ) -> None:
        self.name = name
        #: 0: one cookie; else a session may take up to this many (``blake2sign_web.sessions.chunks``).
        self.max_chunks = max_chunks
        self.oversize = oversize
        self.name_bytes = name.encode("latin-1")
        self.prefix = self.name_bytes + b"="
        self.prefix_length = len(self.prefix)
        flags = ["httponly"] if http_only else []
        if same_site is not None:  # None: no attribute (Flask's default; browsers then apply Lax)
            flags.append("samesite=" + same_site)
        if secure:
            flags.append("secure")
        if domain is not None:
            flags.append(f"domain={domain}")
        if partitioned:
            flags.append("partitioned")
        #: The attributes after Path and Max-Age, as Starlette writes them ("; " before each).
        self.flags = "".join(f"; {flag}" for flag in flags)
        self.path = path
        self.max_age = max_age
        #: Write ``expires`` beside Max-Age (Werkzeug's cookies, which Flask's tests read): a suffix per write.
        self.dated = dated
        self.deleted_value = deleted_value
        #: The chunk limit's name in the user's framework, for the size policy's message.
        self.max_chunks_name = max_chunks_name
        #: How to turn chunks on, in the user's framework, offered when one cookie cannot carry the session.
        self.chunks_fix = chunks_fix
        #: What follows the value of a cookie with the configured Max-Age.
        self.suffix = self.suffix_for(max_age)
        #: The Set-Cookie value that deletes the session cookie.
        self.deletion = self.delete_named(name)

    def suffix_for(self, max_age: int | None) -> str:
        """What follows the value of a cookie with this Max-Age (None: a browser-session cookie)."""
        if max_age is None:
            return f"; path={self.path}{self.flags}"
        expires = f"; expires={expires_for(max_age)}" if self.dated else ""
        return f"; path={self.path}{expires}; Max-Age={max_age}{self.flags}"

    def delete_named(self, name: str) -> bytes:
        """The Set-Cookie value that deletes the cookie ``name`` (the session's or a chunk), with its attributes."""
        return f"{name}={self.deleted_value}; path={self.path}; {EXPIRED}{self.flags}".encode("latin-1")

    # --- Reading -----------------------------------------------------------------------------------------

    def read(self, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """The session cookie's value in a request's headers, as Starlette's ``request.cookies`` gives it."""
        found = self.find(headers)
        return None if found is None else self.text(found)

    def find(self, headers: Iterable[tuple[bytes, bytes]]) -> str | bytes | None:
        """``read``, except that in the usual case it returns the header's bytes, decoded when the session is used."""
        # Single-byte ints, not ``bytes in bytes``: CPython tries that operand as an int first and clears the
        # TypeError, which cost most of this method (about 0.2 us per test on a 300-byte header).
        value: str | bytes | None = None
        for name, raw in headers:
            if name != b"cookie":
                continue
            if raw.startswith(self.prefix) and 59 not in raw and 34 not in raw:  # no ";" nor '"'
                value = raw  # the usual case: one cookie, ours
                continue
            if raw.find(self.name_bytes) < 0:
                continue
            for chunk in raw.decode("latin-1").split(";"):
                key, equals, text = chunk.partition("=")
                if equals and key.strip() == self.name:
                    value = _unquote(text.strip())
        return value

    def token_in(self, header: bytes) -> str | bytes | None:
        """The session cookie's value in one Cookie header, or None; bytes in the usual case (only our cookie)."""
        if header.startswith(self.prefix) and 59 not in header and 34 not in header:  # no ";" nor '"'
            return header[self.prefix_length :]
        found = self.find(((b"cookie", header),))
        return None if found is None else self.text(found)

    def text(self, cookie: str | bytes) -> str:
        """The cookie's value from ``find``'s answer."""
        if isinstance(cookie, bytes):
            return cookie[self.prefix_length :].decode("latin-1").strip()
        return cookie

    def sent_cookies(self, headers: Iterable[tuple[bytes, bytes]], sent_chunks: list[str]) -> dict[str, str]:
        """Every cookie of every Cookie header, for ``join_chunks``; ``sent_chunks`` gets the chunk cookies' names."""
        cookies = cookies_in(headers)
        prefix = self.name + "."
        sent_chunks.extend(name for name in cookies if name.startswith(prefix))
        return cookies

    # --- Writing -----------------------------------------------------------------------------------------

    def set_cookie(self, token: str, suffix: str) -> bytes | None:
        """The Set-Cookie value carrying ``token``; None (refused by the size policy, logged) if too large."""
        header = f"{self.name}={token}{suffix}"
        if len(header) > self.oversize.limit:
            self.oversize.refuse(f"would take {len(header)} bytes", chunks_fix=self.chunks_fix)
            return None
        return header.encode("latin-1")

    def set_chunks(self, token: str, suffix: str, sent_chunks: list[str]) -> list[bytes]:
        """The Set-Cookie values carrying ``token`` in chunks; empty when the size policy refused it."""
        try:
            cookies = split_token(self.name, token, attributes_length=len(suffix), max_chunks=self.max_chunks)
        except TooManyChunks as error:
            self.oversize.refuse(error.problem(self.max_chunks_name), limit=False)
            return []
        headers = [f"{name}={text}{suffix}".encode("latin-1") for name, text in cookies]
        headers.extend(map(self.delete_named, stale_chunks(self.name, len(cookies), sent_chunks)))
        return headers

    def delete_all(self, sent_chunks: Iterable[str]) -> list[bytes]:
        """The Set-Cookie values that delete the session cookie and every chunk the client sent."""
        return [self.deletion, *map(self.delete_named, sent_chunks)]


def morsel_overhead(
    *, path: str, domain: str | None, same_site: str | bool | None, secure: bool, http_only: bool, partitioned: bool
) -> int:
    """Bytes the attributes ``Morsel.OutputString`` writes after a value, at their widest (the size policy's)."""
    parts = ["; expires=Thu, 01 Jan 1970 00:00:00 GMT", "; Max-Age=" + "9" * 10]
    if path:
        parts.append(f"; Path={path}")
    if domain:
        parts.append(f"; Domain={domain}")
    if same_site:
        parts.append(f"; SameSite={same_site}")
    if secure:
        parts.append("; Secure")
    if http_only:
        parts.append("; HttpOnly")
    if partitioned:
        parts.append("; Partitioned")
    return 1 + sum(map(len, parts))


def longest_token(cookie_size_limit: int, max_chunks: int) -> int:
    """Characters of the longest token a session's cookies carry: a reader refuses longer before hashing it."""
    return cookie_size_limit * max(max_chunks, 1)


# --- As ``http.cookies`` Morsels (Django) -------------------------------------------------------------------

#: What a deleted cookie carries as ``expires`` (beside ``Max-Age=0``), as Django's ``delete_cookie`` writes it.
EXPIRED_DATE: Final = "Thu, 01 Jan 1970 00:00:00 GMT"


class PartitionedMorsel(Morsel[str]):
    """A Morsel with the ``Partitioned`` attribute (CHIPS), which ``http.cookies`` writes only from Python 3.14
    and Django's ``set_cookie`` not yet (its support is an open pull request)."""

    def OutputString(self, attrs: Container[str] | None = None) -> str:
        return super().OutputString(attrs) + "; Partitioned"


#: One cookie a response sets or deletes: its name, value and Morsel items (``http.cookies`` keys).
MorselCookie = tuple[str, str, dict[str, Any]]


class SessionMorsels:
    """A session's cookies as ``http.cookies`` Morsels (Django's), by ``SessionCookie``'s rules; ``Secure`` for a
    ``Partitioned`` cookie, which browsers refuse otherwise."""

    def __init__(
        self,
        name: str,
        *,
        path: str,
        domain: str | None,
        secure: bool,
        httponly: bool,
        samesite: str | bool | None,
        partitioned: bool,
        max_chunks: int,
    ) -> None:
        self.name = name
        #: 0: one cookie; else a session may take up to this many.
        self.max_chunks = max_chunks
        self.partitioned = partitioned
        attributes: dict[str, Any] = {}
        if path:
            attributes["path"] = path
        if domain:
            attributes["domain"] = domain
        if secure:
            attributes["secure"] = True
        if httponly:
            attributes["httponly"] = True
        if samesite:
            attributes["samesite"] = samesite
        #: The attributes after the value's lifetime, the same on every cookie of the session.
        self.attributes = attributes
        deleted: dict[str, Any] = {"expires": EXPIRED_DATE, "max-age": 0, "path": path}
        if domain is not None:
            deleted["domain"] = domain
        if samesite:
            deleted["samesite"] = samesite
        self._deleted = deleted
        self._secure_deletion = partitioned or (isinstance(samesite, str) and samesite.lower() == "none")

    def deleted(self, name: str) -> MorselCookie:
        """The cookie that deletes ``name`` (the session's or a chunk)."""
        attributes = self._deleted
        if self._secure_deletion or name.startswith(("__Secure-", "__Host-")):
            attributes = {**attributes, "secure": True}
        return (name, "", attributes)

    def writes(
        self, cookies: Sequence[tuple[str, str]], sent: Mapping[str, str], max_age: int | None, *, chunked: bool
    ) -> list[MorselCookie]:
        """The cookies that carry the session's token, and those deleting the client's that no longer belong."""
        if max_age is None:  # a browser-session cookie: no Max-Age nor expires
            attributes = {"expires": "", "max-age": "", **self.attributes}
        else:
            attributes = {"expires": expires_for(max_age), "max-age": max_age, **self.attributes}
        written: list[MorselCookie] = []
        for name, value in cookies:  # a loop, not a comprehension: on every write, usually of one cookie
            written.append((name, value, attributes))
        if chunked:
            written += map(self.deleted, stale_chunks(self.name, len(cookies), sent))
        elif not self.max_chunks:
            written += map(self.deleted, leftover_chunks(self.name, sent.get(self.name)))
        return written

    def put(self, jar: SimpleCookie, writes: list[MorselCookie]) -> None:
        """``writes`` on a response's ``jar`` (Django's ``response.cookies``) as Morsels, not re-validated."""
        for name, value, attributes in writes:
            morsel = PartitionedMorsel() if self.partitioned else Morsel()
            morsel.set(name, *jar.value_encode(value))
            dict.update(morsel, attributes)
            dict.__setitem__(jar, name, morsel)

    def put_session(
        self,
        jar: SimpleCookie,
        chunks: list[tuple[str, str]] | None,
        key: str,
        sent: Mapping[str, str],
        max_age: int | None,
    ) -> None:
        """The cookie ``key`` (or its ``chunks``, chunked) and the deletions ``writes`` adds, on ``jar`` (``put``)."""
        self.put(jar, self.writes(chunks or ((self.name, key),), sent, max_age, chunked=chunks is not None))

    def deletions(self, sent: Mapping[str, str]) -> list[MorselCookie]:
        """The cookies that delete an emptied session: its cookie and its chunks (``sent``: the request's cookies)."""
        name = self.name
        stale = stale_chunks(name, 0, sent) if self.max_chunks else leftover_chunks(name, sent.get(name))
        return [self.deleted(self.name), *map(self.deleted, stale)]
