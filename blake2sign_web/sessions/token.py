"""Reading a session cookie's token into what it holds, with every outcome named. No framework here.

A session token's value is the session's data, or ``[data, meta]`` when a write signed more beside it
(``sessions.state.Session.written``: its ``set_expiry()`` as ``e`` seconds or ``t`` a Unix second, and the
session's first write ``c`` for the absolute timeout). ``SessionTokenReader.read`` verifies a cookie
(verify before decode: the signer's order) and answers a ``ReadToken`` whose ``outcome`` is one of:

- ``VALID``: the data (and meta); ``reissue`` when the response should write it again (a fallback secret
  or an outdated form verified it, or more than a quarter of the idle timeout has passed);
- ``MIGRATED``: a cookie of the incumbent framework's own sessions (``incumbent``), to re-issue;
- ``EXPIRED``: past its age or its own expiry; ``TIMED_OUT``: past a timeout (the response deletes it);
- ``BAD``: not verified (``error`` says why, never quoting the token); ``INCUMBENT_SHAPE``: not verified,
  and shaped like the incumbent's cookie while migration is off; ``NOT_A_SESSION``: verified, but its
  value holds no session.

The adapter turns the outcome into its framework's session and log line; the rules are decided here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from ..exceptions import BadSignature, SignatureExpired
from ..signing.cache import get_signer
from ..signing.serializer import MAX_DECOMPRESSED_SIZE, LoadedToken, SerializerSigner
from ..signing.signer import MAC_LENGTH
from ..stores.revocation import GENERATION_KEY, derived_session_id
from .expiry import SessionTimedOut, check_timeouts, idle_past

VALID: Final = "valid"
MIGRATED: Final = "migrated"
EXPIRED: Final = "expired"
TIMED_OUT: Final = "timed out"
BAD: Final = "bad"
INCUMBENT_SHAPE: Final = "incumbent shape"
NOT_A_SESSION: Final = "not a session"


def longest_written_token(max_decompressed_size: int = MAX_DECOMPRESSED_SIZE) -> int:
    """Characters of the longest token a session can make: its largest JSON, framed, in base64.

    The frame is at most 18 bytes and a 32-byte tag for a signed token; 58 bytes (flags, times, session id,
    dictionary id, 24-byte nonce, 16-byte GCM tag) and one marker character for an encrypted one.
    """
    return (max_decompressed_size + 64) * 4 // 3 + MAC_LENGTH + 8


class SessionSigners(NamedTuple):
    """The cached signers of one session configuration (``session_signers``)."""

    #: Verifies cookies within max_age, refusing any longer than ``reader_limit`` before hashing them.
    reader: SerializerSigner
    #: Signs with the same keys and no length limit of its own, so an oversized session's size can be told.
    writer: SerializerSigner
    #: Reads a token past max_age, accepted only when it carries a set_expiry() of its own.
    unbounded: SerializerSigner


def session_signers(
    secret: str | bytes, *, max_age: int | None, idle_timeout: int | None, reader_limit: int, **options: Any
) -> SessionSigners:
    """The signers for sessions of ``max_age`` (None: no limit) and ``idle_timeout``, from the process cache.

    The idle timeout is the signer's ``max_age`` when it is shorter: a token not re-issued for that long is
    refused as one older than the session's age is. ``options``: ``get_signer``'s others (purpose, keys, form).
    """
    limit = max_age if idle_timeout is None else idle_timeout if max_age is None else min(max_age, idle_timeout)
    return SessionSigners(
        get_signer(secret, max_age=limit, max_token_length=reader_limit, **options),
        get_signer(
            secret,
            max_age=limit,
            max_token_length=longest_written_token(options.get("max_decompressed_size", MAX_DECOMPRESSED_SIZE)),
            **options,
        ),
        get_signer(secret, max_age=None, max_token_length=reader_limit, **options),
    )


class ReadToken(NamedTuple):
    """What a session cookie held: the outcome, and for ``VALID``/``MIGRATED`` the session's data."""

    outcome: str
    data: dict[str, Any] | None = None
    #: What a write signed beside the data (``Session.restore`` reads it back); None: nothing.
    meta: dict[str, Any] | None = None
    #: The verified token, when the reader was asked to build one (``needs_token``, or past ``max_age``).
    token: LoadedToken | None = None
    #: MIGRATED: the Unix second the incumbent's cookie was signed.
    migrated_at: int | None = None
    #: Write the session again on this response though nothing changed.
    reissue: bool = False
    #: Why the cookie was refused (EXPIRED, BAD, INCUMBENT_SHAPE, TIMED_OUT: a SessionTimedOut naming the setting).
    error: BadSignature | None = None
    #: When the session began, for the absolute timeout: what the token carries (else, with ``started_key``,
    #: when it was signed; without, None).
    started: int | None = None


class SessionTokenReader:
    """Reads session cookies for one configuration: its signers, timeouts and incumbent reader, built once.

    ``signer`` verifies within its ``max_age`` (``session_signers``: the smaller of the session's age and
    its idle timeout); ``unbounded``, the same keys without it, reads a token past it that carries a
    ``set_expiry()`` of its own (None: ``read(default_age=)`` bounds only a token without one). ``incumbent``:
    the framework's own session cookies (``data``, signed Unix second) or None for anything else, tried for a
    cookie of ``incumbent_shape``; None when migration is off. ``started_key``: the data's key holding when
    the session began (Django's layout; taken out of the data); None: the meta's ``c`` (Starlette's).
    ``timeout_names``: the idle and absolute timeouts as the user's framework names them, for messages.
    """

    def __init__(
        self,
        signer: SerializerSigner,
        unbounded: SerializerSigner | None,
        *,
        needs_token: bool,
        idle_timeout: int | None,
        absolute_timeout: int | None,
        incumbent: Callable[[str], tuple[dict[str, Any], int] | None] | None,
        incumbent_shape: Callable[[str], bool],
        expire_every_cookie: bool = False,
        started_key: str | None = None,
        timeout_names: tuple[str, str] = ("idle_timeout", "absolute_timeout"),
    ) -> None:
        self.signer, self.unbounded = signer, unbounded
        self.needs_token = needs_token
        self.idle_timeout, self.absolute_timeout = idle_timeout, absolute_timeout
        self.timeouts = idle_timeout is not None or absolute_timeout is not None
        self.started_key, self.timeout_names = started_key, timeout_names
        #: Nothing to decide after verification but the data's shape (``of_value``'s short way).
        self.plain = not self.timeouts and started_key is None
        self.incumbent, self.incumbent_shape = incumbent, incumbent_shape
        #: A configured age of zero or less: every cookie has expired when it arrives.
        self.expire_every_cookie = expire_every_cookie

    def read_at_once(self, cookie: str) -> bool:
        """Whether ``cookie`` is read when the request comes, not when the session is first used: an incumbent's
        cookie (migration on) is re-issued in this project's format on any request."""
        return self.incumbent is not None and self.incumbent_shape(cookie)

    def read(self, cookie: str, *, default_age: int | None = None) -> ReadToken:
        """What ``cookie`` holds; never raises for a bad cookie. ``default_age``: how long a token without an
        expiry of its own lives (Django's ``SESSION_COOKIE_AGE``; it builds the token)."""
        if self.expire_every_cookie:
            return ReadToken(EXPIRED)
        if self.incumbent is not None and self.incumbent_shape(cookie):
            dated = self.incumbent(cookie)
            if dated is None:
                return ReadToken(BAD)
            read = self._timed(dated[0], None, None, dated[1], True)
            return read._replace(outcome=MIGRATED, migrated_at=dated[1]) if read.outcome == VALID else read
        loaded: LoadedToken | None = None
        try:
            if default_age is not None:
                loaded = self.signer.load_token(cookie, default_age=default_age)
                value, rewrite = loaded.value, loaded.rewrite
            elif self.needs_token:
                loaded = self.signer.load_token(cookie)
                value, rewrite = loaded.value, loaded.rewrite
            else:  # the common case: skip building a LoadedToken
                value, rewrite = self.signer.loads(cookie), False
        except BadSignature as error:  # the core's messages never quote the token
            if self.incumbent_shape(cookie):
                return ReadToken(INCUMBENT_SHAPE, error=error)
            if not isinstance(error, SignatureExpired):
                return ReadToken(BAD, error=error)
            loaded = None if self.unbounded is None else self._own_expiry(cookie, self.unbounded)
            if loaded is None:
                return ReadToken(TIMED_OUT if self.timeouts else EXPIRED, error=error)
            value, rewrite = loaded.value, loaded.rewrite  # older than max_age, within its own set_expiry()
        return self.of_value(value, loaded, rewrite)

    def of_value(self, value: Any, loaded: LoadedToken | None, rewrite: bool) -> ReadToken:
        """What a verified token's value holds (``read``'s second half): the data, its meta, the timeouts."""
        meta: dict[str, Any] | None = None
        if type(value) is list and len(value) == 2 and type(value[1]) is dict:
            value, meta = value
        if not isinstance(value, dict):
            return ReadToken(NOT_A_SESSION)
        if self.plain:  # no timeouts, no start in the data: the usual read, without another call
            return ReadToken(VALID, value, meta, loaded, None, rewrite)
        key = self.started_key
        if key is not None and not self.timeouts:  # Django's usual read: only the start to take out of the data
            started = value.pop(key, None)
            if type(started) is not int:
                started = None if loaded is None else loaded.issued_at
            return ReadToken(VALID, value, meta, loaded, None, rewrite, None, started)
        return self._timed(value, meta, loaded, None if loaded is None else loaded.issued_at, rewrite)

    def _timed(
        self,
        data: dict[str, Any],
        meta: dict[str, Any] | None,
        loaded: LoadedToken | None,
        issued_at: int | None,
        rewrite: bool,
    ) -> ReadToken:
        """A verified session's data under the timeouts (``timeouts.check_timeouts``): valid, to re-issue (more
        than a quarter of the idle timeout since it was issued: the idle timer restarts), or timed out."""
        if self.started_key is not None:  # Django's layout: the start is a key of the data, not the application's
            started = data.pop(self.started_key, None)
            started = started if type(started) is int else issued_at
        else:
            started = None if meta is None else meta.get("c")
            started = started if type(started) is int else None
        if self.timeouts:
            idle_name, absolute_name = self.timeout_names
            try:
                refresh = check_timeouts(
                    issued_at,
                    started,
                    self.idle_timeout,
                    self.absolute_timeout,
                    idle_name=idle_name,
                    absolute_name=absolute_name,
                )
            except SessionTimedOut as error:
                return ReadToken(TIMED_OUT, error=error)
            rewrite = rewrite or (refresh and bool(data))
        return ReadToken(VALID, data, meta, loaded, None, rewrite, None, started)

    def _own_expiry(self, cookie: str, unbounded: SerializerSigner) -> LoadedToken | None:
        """A cookie older than max_age: its token, if a set_expiry() of seconds or a date was signed into it.

        The core has checked that expiry (``expires_at``) and the signature; browser-close (0) and no
        set_expiry() keep max_age. Runs only for such a cookie, never on the path of a valid one.
        """
        try:
            loaded = unbounded.load_token(cookie)
        except BadSignature:
            return None
        value = loaded.value
        if not (type(value) is list and len(value) == 2 and type(value[1]) is dict):
            return None
        if not value[1].get("e", value[1].get("t")):
            return None
        if idle_past(loaded.issued_at, self.idle_timeout):
            return None  # the idle timeout bounds every session
        return loaded


class RefusalWords(NamedTuple):
    """The adapter's words for why a cookie was refused (its settings' names), for ``refusal_reason``."""

    #: EXPIRED without an error of its own (a configured age of zero or less).
    expired: str
    #: Past the absolute timeout (the idle one is the signer's age: its error says so).
    timed_out: str
    #: Added to the error of a cookie shaped like the incumbent's, while migration is off ("": nothing added).
    incumbent_hint: str
    #: Anything else (an incumbent's cookie that did not verify).
    otherwise: str
    #: NOT_A_SESSION: a verified value that holds no session.
    not_a_session: str = "its value is not a session"
    #: Say when an expired cookie expired (a timeout's error with it), and no error's full stop (Django's).
    dated: bool = False


def refusal_reason(read: ReadToken, words: RefusalWords) -> str:
    """Why the cookie of ``read`` (no data) was refused, for the adapter's log line; one rule for every outcome."""
    error = read.error
    if words.dated and isinstance(error, SignatureExpired):
        when = f"expired at {error.expired_at_datetime.isoformat()}"
        return f"{error}: {when}" if isinstance(error, SessionTimedOut) else when
    if read.outcome == INCUMBENT_SHAPE and words.incumbent_hint:
        return f"{error}; {words.incumbent_hint}"
    if isinstance(error, SessionTimedOut):
        return words.timed_out
    if error is not None:
        return str(error).rstrip(".") if words.dated else str(error)
    if read.outcome == EXPIRED:
        return words.expired
    return words.not_a_session if read.outcome == NOT_A_SESSION else words.otherwise


class Presented(NamedTuple):
    """What revocation checks of a verified session cookie (both adapters: one rule)."""

    #: The token's session id; one derived from the cookie when it carries none (an incumbent's cookie, or
    #: one of ours signed before revocation was on), so that every copy of it ends together.
    session_id: bytes
    #: When it was signed (an incumbent's cookie: its own signed timestamp).
    issued_at: int
    #: The user's generation it was signed with (taken out of the data: the engine's, never the application's);
    #: None for an incumbent's cookie, which cannot carry one.
    generation: str | None


def presented(token: LoadedToken | None, migrated_at: int | None, cookie: str, data: dict[str, Any]) -> Presented:
    """What revocation checks of a cookie read as ``token`` (or, migrated, signed at ``migrated_at``)."""
    generation = dict.pop(data, GENERATION_KEY, None)  # dict's: a session class would count it as a change
    if type(generation) is not str:
        generation = ""
    if token is None:
        return Presented(derived_session_id(cookie), migrated_at or 0, None)
    session_id = token.session_id if token.session_id is not None else derived_session_id(cookie)
    return Presented(session_id, token.issued_at, generation)
