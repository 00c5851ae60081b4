"""What one request does with its session, whatever the framework: set-up, read, response. No framework here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from time import perf_counter
from typing import Any, Final, Literal, NamedTuple, TypeVar

from ..exceptions import NotJSON
from ..signing.serializer import SerializerSigner
from ..stores.base import StoreUnavailable
from ..stores.revocation import GENERATION_KEY
from . import options
from .chunks import IncompleteChunks, join_chunks, leftover_chunks, refused_set
from .cookies import BROWSER_COOKIE_LIMIT, OversizePolicy, SessionCookie
from .expiry import longest_expiry
from .revocation import SessionState, store_down_accepted
from .settings import chunk_limit
from .state import Session
from .token import NOT_A_SESSION, TIMED_OUT, ReadToken, SessionTokenReader, session_signers

#: An adapter's per-request revocation state (Starlette's ``SessionToken``).
StateT = TypeVar("StateT", bound=SessionState)
#: Incumbent cookies' reader: a cookie's data and the Unix second it was signed, or None.
Incumbent = Callable[[str], "tuple[dict[str, Any], int] | None"]


def signer_options(values: Mapping[str, Any], purpose: str, fallbacks: Sequence[str | bytes]) -> dict[str, Any]:
    """``get_signer``'s options for a session configuration (``options.signer_options``, with the purpose)."""
    return {"purpose": purpose, "fallbacks": tuple(fallbacks), **options.signer_options(values)}


class SessionSetup:
    """What a session configuration derives from its (valid) option values, decided once at start-up."""

    def __init__(
        self, secret: str | bytes, fallbacks: Sequence[str | bytes], values: Mapping[str, Any], *, purpose: str
    ) -> None:
        self.values = values
        max_age, idle_timeout = values.get("max_age"), values.get("idle_timeout")
        absolute_timeout = values.get("absolute_timeout")
        revocation = values.get("revocation") is not None
        #: An age of zero or less (Starlette allows it): no signer gets it; every cookie has expired on arrival.
        self.expire_every_cookie = isinstance(max_age, (int, float)) and not isinstance(max_age, bool) and max_age <= 0
        self.max_age: int | None = max_age
        self.idle_timeout: int | None = idle_timeout
        self.absolute_timeout: int | None = absolute_timeout
        #: idle_timeout or absolute_timeout: every write signs the session's times (``Session.written``).
        self.timeouts = idle_timeout is not None or absolute_timeout is not None
        #: 0: one cookie; else the most cookies a session may take.
        self.max_chunks: int = chunk_limit(values)
        self.fallbacks = tuple(fallbacks)
        self.signers = session_signers(
            secret,
            max_age=None if self.expire_every_cookie else max_age,
            idle_timeout=None if self.expire_every_cookie else idle_timeout,
            reader_limit=BROWSER_COOKIE_LIMIT * max(self.max_chunks, 1),  # max_chunks cookies' worth
            **signer_options(values, purpose, fallbacks),
        )
        #: A LoadedToken is built only when needed: fallbacks, the session id, idle timeout, encrypt/decrypt.
        self.needs_token = bool(
            fallbacks or revocation or idle_timeout is not None or values.get("encrypt") or values.get("decrypt")
        )
        #: Revocation, Server-Timing or chunks: each request takes the long path; without them, the short one.
        self.extras = bool(revocation or values.get("server_timing") or values.get("chunked"))
        #: A valid token holding a plain session may be read straight into it: nothing else decides how it loads.
        self.direct_read = not (self.timeouts or self.expire_every_cookie or values.get("migrate") or self.extras)
        #: A session verified by a fallback secret is re-signed under the current one, even if never used.
        self.resign_unread = bool(fallbacks)
        #: How long a session can live: how long a "log out everywhere" record is kept.
        self.lifetime = int(max_age or 0)
        #: The attributes of the configuration's session class (``Session``'s; ``session_class``).
        self.session_attributes: dict[str, Any] = {
            "default_age": max_age,
            "longest_expiry": longest_expiry(max_age, revocation),
            "idle_timeout": idle_timeout,
            "absolute_timeout": absolute_timeout,
        }

    def cookie(self, oversize: OversizePolicy, **spelling: Any) -> SessionCookie:
        """The configuration's cookie; ``spelling``: how the framework writes it, and ``max_age`` for another."""
        values = self.values
        spelling.setdefault("max_age", values["max_age"])
        return SessionCookie(
            values["cookie_name"],
            path=values["path"],
            same_site=values.get("same_site"),
            secure=values["secure"],
            domain=values["domain"],
            partitioned=values["partitioned"],
            max_chunks=self.max_chunks,
            oversize=oversize,
            http_only=values.get("http_only", True),
            **spelling,
        )

    def session_class(self, base: type[Session], **namespace: Any) -> type[Session]:
        """``base`` knowing this configuration's lifetimes (its expiry accessors), with the adapter's ``namespace``."""
        return type(base.__name__, (base,), {**self.session_attributes, **namespace})

    def token_reader(
        self, incumbent: Incumbent | None, incumbent_shape: Callable[[str], bool], **names: Any
    ) -> SessionTokenReader:
        """The configuration's cookie reader; ``incumbent``: the framework's own cookies (None: migration off)."""
        return SessionTokenReader(
            self.signers.reader,
            self.signers.unbounded,
            needs_token=self.needs_token,
            idle_timeout=self.idle_timeout,
            absolute_timeout=self.absolute_timeout,
            incumbent=incumbent,
            incumbent_shape=incumbent_shape,
            expire_every_cookie=self.expire_every_cookie,
            **names,
        )


def session_from(
    read: ReadToken, session_class: type[Session], cookie_name: str, cookie: str | None, max_chunks: int
) -> Session:
    """The session for what was read of ``cookie``: its data (re-issued when the read says so), or an empty one."""
    if read.data is not None:  # VALID or MIGRATED
        session = session_class(read.data)
        if read.meta is not None:
            session.restore(read.meta)
        if read.reissue:  # re-signed with the current secret, in the current form, or for idle_timeout
            session.modified = True
        return session
    session = session_class()
    if read.outcome == TIMED_OUT:
        session._timed_out = session.modified = True
        return session
    session.refused = True
    if read.outcome == NOT_A_SESSION or max_chunks or cookie is None:
        return session
    if leftovers := leftover_chunks(cookie_name, cookie):
        session.leftovers = leftovers
        session.modified = True  # the response deletes them (as a timed-out session's cookie)
    return session


def settled(session: Session) -> Session:
    """``session`` as read from the client: whether emptying it has a cookie to delete."""
    session.loaded_empty = not dict.__len__(session) and not session._timed_out
    return session


WRITE: Final = "write"
DELETE: Final = "delete"
KEEP: Final = "keep"


class ResponsePlan(NamedTuple):
    """What a response does with the session's cookies."""

    #: WRITE the session (its cookie, or chunks), DELETE its cookie (and chunks sent), or KEEP the client's.
    fate: Literal["write", "delete", "keep"]
    #: Cookies to delete whatever is written (a set's chunks left from when chunking was on).
    stale: Sequence[str] = ()
    #: Cookies to delete unless the session was written (a set sent in part, or whole and refused).
    doomed: Sequence[str] = ()


#: The usual plans: nothing stale (one of them is returned as it is, no tuple built).
_PLANS: Final = {fate: ResponsePlan(fate) for fate in (WRITE, DELETE, KEEP)}
_WRITE_ONLY: Final = _PLANS[WRITE]
VARY_COOKIE: Final = (b"vary", b"Cookie")


def response_plan(
    session: Session, cookie_name: str, sent_chunks: Sequence[str] = (), incomplete: Sequence[str] = ()
) -> ResponsePlan:
    """What the response does with ``session``'s cookie (write, delete or keep), and the stale cookies to delete."""
    fate: Literal["write", "delete", "keep"] = KEEP
    if session.modified:
        if dict.__len__(session):
            fate = WRITE
        elif not session.loaded_empty:
            fate = DELETE
    if session.leftovers:  # the first cookie of a set written while chunking was on, and its chunks
        return ResponsePlan(fate, session.leftovers, () if fate == WRITE else (cookie_name,))
    if incomplete or session.refused:
        return ResponsePlan(fate, (), incomplete or refused_set(cookie_name, sent_chunks))
    return _PLANS[fate]  # the usual response: nothing stale, no tuple built


class SessionWriter:
    """Writes a session into its cookies' Set-Cookie values, the same bytes in every framework."""

    def __init__(
        self, setup: SessionSetup, cookie: SessionCookie, *, typed_name: str, logger: logging.Logger, ended: str
    ) -> None:
        self.writer: SerializerSigner = setup.signers.writer
        self.cookie = cookie
        self.timeouts = setup.timeouts
        #: One cookie, undated, no timeouts: ``usual_headers`` may write a session in one call (decided here, once).
        self.direct = not (cookie.max_chunks or cookie.dated or setup.timeouts)
        #: What surrounds the token in that write's Set-Cookie, and the size past which the policy refuses it.
        self._name_equals, self._suffix, self._limit = cookie.name + "=", cookie.suffix, cookie.oversize.limit
        #: The typed option in the user's framework's words, named by a NotJSON.
        self.typed_name = typed_name
        #: The warning for a session that has ended when written (its cookie is deleted), in the framework's words.
        self.logger, self.ended = logger, ended

    def set_cookies(
        self,
        session: Session,
        session_id: bytes | None,
        sent_chunks: Sequence[str] = (),
        incomplete: Sequence[str] = (),
    ) -> list[bytes]:
        """Every Set-Cookie value the response carries for ``session`` (``response_plan``)."""
        plan = response_plan(session, self.cookie.name, sent_chunks, incomplete)
        if plan is _WRITE_ONLY:  # the usual write, kept short
            return self.written(session, session_id, sent_chunks)
        written: list[bytes] = []
        if plan.fate == WRITE:
            written = self.written(session, session_id, sent_chunks)
        elif plan.fate == DELETE:
            written = self.cookie.delete_all(sent_chunks)  # the cookie and every chunk the client sent
        if plan.doomed and not written:  # a set sent in part, or whole and refused: every cookie of it deleted
            written.extend(map(self.cookie.delete_named, plan.doomed))
        if plan.stale:
            written.extend(map(self.cookie.delete_named, plan.stale))
        return written

    def usual_headers(
        self, session: Session, headers: Iterable[tuple[bytes, bytes]]
    ) -> list[tuple[bytes, bytes]] | None:
        """``response_headers`` of a request without revocation, chunks or Server-Timing: the usual write, one call."""
        if (
            self.direct
            and session.modified
            and session._expiry is None
            and not session.leftovers
            and dict.__len__(session)
        ):
            try:
                token = self.writer.dumps(session)
            except (TypeError, ValueError):  # NotJSON, JSON over the reader's size: named or refused below
                return self.response_headers(session, headers, None)
            header = self._name_equals + token + self._suffix
            if len(header) <= self._limit:
                if not session.accessed:
                    out = list(headers)
                else:
                    for name, _ in headers:
                        if name == b"vary":
                            out = with_vary_cookie(headers)
                            break
                    else:  # the usual case, without a call: no Vary yet (with_vary_cookie's first branch)
                        out = [*headers, VARY_COOKIE]
                out.append((b"set-cookie", header.encode("latin-1")))
                return out
        return self.response_headers(session, headers, None)

    def response_headers(
        self,
        session: Session,
        headers: Iterable[tuple[bytes, bytes]],
        session_id: bytes | None,
        load_ms: float | None = None,
        sent_chunks: Sequence[str] = (),
        incomplete: Sequence[str] = (),
    ) -> list[tuple[bytes, bytes]] | None:
        """A response's raw header list (ASGI's) with what ``session`` adds: Vary when it was read, its Set-Cookie
        values (``set_cookies``), and Server-Timing when ``load_ms`` is given; None when it adds nothing."""
        if not (session.accessed or session.modified or load_ms is not None or incomplete):
            return None
        started = 0.0 if load_ms is None else perf_counter()
        out = with_vary_cookie(headers) if session.accessed else list(headers)
        for cookie in self.set_cookies(session, session_id, sent_chunks, incomplete):
            out.append((b"set-cookie", cookie))  # a loop, not a comprehension: no frame of its own (Python 3.11)
        if load_ms is not None:
            load_ms += session.__dict__.get("load_ms", 0.0)  # a lazy session's own load, if it happened
            out.append((b"server-timing", server_timing_header(load_ms, started)))
        return out

    def written(self, session: Session, session_id: bytes | None, sent_chunks: Sequence[str] = ()) -> list[bytes]:
        """The Set-Cookie values writing ``session`` (deleting an ended one's); none when refused for its size."""
        value: Any = session
        expires_in = None
        cookie = self.cookie
        suffix = cookie.suffix_for(cookie.max_age) if cookie.dated else cookie.suffix  # dated: expires of now
        if session._expiry is not None or self.timeouts:
            written = session.written()
            if written is None:
                self.logger.warning(self.ended, self.cookie.name)
                return self.cookie.delete_all(sent_chunks)
            value, expires_in = written.value, written.expires_in
            suffix = self.cookie.suffix_for(written.cookie_max_age)
        token = signed_token(
            self.writer,
            value,
            expires_in=expires_in,
            session_id=session_id,
            typed_name=self.typed_name,
            oversize=self.cookie.oversize,
        )
        if token is None:
            return []
        if self.cookie.max_chunks:
            return self.cookie.set_chunks(token, suffix, list(sent_chunks))
        header = self.cookie.set_cookie(token, suffix)
        return [] if header is None else [header]


def server_timing_value(load_ms: float, save_ms: float) -> str:
    """The Server-Timing value for a session's load and save (signing included), in milliseconds."""
    return f"b2sw-load;dur={load_ms:.3f}, b2sw-save;dur={save_ms:.3f}"


def server_timing_header(load_ms: float, save_started: float) -> bytes:
    """``server_timing_value`` for a load of ``load_ms`` and a save from ``save_started`` (perf_counter) to now."""
    return server_timing_value(load_ms, (perf_counter() - save_started) * 1000).encode("ascii")


def chunked_token(
    cookie: SessionCookie,
    headers: Iterable[tuple[bytes, bytes]],
    sent_chunks: list[str],
    incomplete: list[str],
    refused: Callable[[IncompleteChunks], None],
) -> str | None:
    """The token a chunked session's cookies carry (``joined_token`` of ``SessionCookie.sent_cookies``)."""
    return joined_token(cookie.name, cookie.sent_cookies(headers, sent_chunks), cookie.max_chunks, incomplete, refused)


def read_with_revocation(session: Session, state: SessionState, refused: bool) -> Session:
    """``session`` as read with revocation on: read as empty with the store down, its cookie is kept."""
    session.loaded_empty = not dict.__len__(session) and not refused and not state.unchecked and not session._timed_out
    session.modified = session.modified or refused
    return session


def checked_session(
    session: Session,
    fresh: StateT,
    revoked: bool | StoreUnavailable,
    *,
    fails_open: bool,
    setting: str,
    unchecked: Callable[[], StateT],
) -> tuple[Session, StateT]:
    """A verified cookie's session after its revocation check (``revoked``: the store's answer, or why it gave
    none), and the state its response writes with. The store down and not accepted: read as empty, cookie kept."""
    if isinstance(revoked, StoreUnavailable):
        if store_down_accepted(revoked, fails_open=fails_open, setting=setting):
            return read_with_revocation(session, fresh, False), fresh
        state = unchecked()
        state.unchecked = True
        return read_with_revocation(type(session)(), state, False), state
    if revoked:
        fresh.ended()
        return read_with_revocation(type(session)(), fresh, True), fresh
    return read_with_revocation(session, fresh, False), fresh


class RevocationSteps(NamedTuple):
    """What revocation does to the request's session before its response writes it."""

    #: Read as empty because the store was down: nothing is written (it would replace the real session for good).
    discard: bool
    #: The client's session ends (emptied, or cleared): its record is written, the next token is a new session's.
    end: bool
    #: A session with data is written: its user's generation is signed into it.
    stamp: bool


def revocation_steps(session: Session, state: SessionState) -> RevocationSteps:
    """What the response does about revocation for ``session``, read with ``state``."""
    discard = state.unchecked and not session.cleared and session.modified
    modified = session.modified and not discard
    filled = bool(dict.__len__(session))
    return RevocationSteps(discard, session.cleared or (modified and not filled), modified and filled)


def generation_to_sign(session: Session, generation: str) -> None:
    """Sign ``generation`` (the user's, "" for none) into ``session``: the engine's key, not a change of the session."""
    if generation:
        dict.__setitem__(session, GENERATION_KEY, generation)


def with_vary_cookie(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A copy of a raw header list varying by Cookie (one Vary joining every value), as a response that read the
    session must. A copy: a response's own list may be sent again by a later request."""
    for name, _ in headers:
        if name == b"vary":
            break
    else:  # the usual case: no Vary yet
        return [*headers, VARY_COOKIE]
    values = [value for name, value in headers if name == b"vary"]
    joined: tuple[bytes, bytes] | None = (b"vary", b", ".join([*values, b"Cookie"]))
    out: list[tuple[bytes, bytes]] = []
    for item in headers:
        if item[0] != b"vary":
            out.append(item)
        elif joined is not None:  # the first Vary's place
            out.append(joined)
            joined = None
    return out


def joined_token(
    name: str,
    cookies: Mapping[str, str],
    max_chunks: int,
    incomplete: list[str],
    refused: Callable[[IncompleteChunks], None],
) -> str | None:
    """The token a chunked session's cookies carry; an incomplete set's cookies go in ``incomplete``."""
    try:
        return join_chunks(name, cookies, max_chunks=max_chunks)
    except IncompleteChunks as error:
        refused(error)
        incomplete.extend(error.cookies)
        return None


def signed_token(
    writer: SerializerSigner,
    value: Any,
    *,
    expires_in: float | None,
    session_id: bytes | None,
    typed_name: str,
    oversize: OversizePolicy,
) -> str | None:
    """A session's token; a NotJSON names the typed option, and JSON too large is refused (None)."""
    try:
        return writer.dumps(value, expires_in=expires_in, session_id=session_id)
    except NotJSON as error:  # a datetime, a UUID...: name the option that stores it as itself
        error.name_option(typed_name)
        raise
    except ValueError:
        oversize.refuse(f"holds over {writer.max_decompressed_size} bytes of JSON")
        return None
