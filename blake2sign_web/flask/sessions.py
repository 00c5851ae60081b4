"""Flask sessions on the session core: ``FlaskSessions``, a ``SessionInterface`` configured the Flask way."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from functools import partial
from importlib.metadata import version
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import flask
from flask.sessions import SecureCookieSessionInterface, SessionInterface, SessionMixin

from ..sessions import options
from ..sessions.cookies import BROWSER_COOKIE_LIMIT, OversizePolicy
from ..sessions.loading import LazySession, SessionLoader, lazy_class
from ..sessions.request import SessionSetup, SessionWriter, joined_token
from ..sessions.revocable import StorePart
from ..sessions.state import ReadTrackingSession, Session
from ..sessions.token import RefusalWords
from ..signing.times import seconds
from ..stores import base as stores
from ..stores.plans import drive

if TYPE_CHECKING:
    from flask import Flask
    from flask.wrappers import Request, Response

logger = logging.getLogger("blake2sign_web.flask")

SETTING: Final = "BLAKE2SIGN_WEB"  # the config key of the options Flask has no key of its own for
#: Options no Flask adapter offers (Server-Timing; the RedisStore's own arguments): a key for them is unknown.
NOT_OFFERED: Final = frozenset(
    {"revocation_unavailable", "revocation_clock_skew", "revocation_key_prefix", "server_timing"}
)
#: The keys of ``app.config["BLAKE2SIGN_WEB"]``, each an option of the core's.
SECTION_KEYS: Final = {name: key for name, key in options.section_keys(options.FLASK).items() if key not in NOT_OFFERED}
#: Flask 3.1.3 marks the session accessed when ``flask.session`` is used; before it, reads have to.
FLASK_MARKS_ACCESS: Final = tuple(int(part) for part in version("flask").split(".")[:3] if part.isdigit()) >= (3, 1, 3)


class SessionCookieTooLarge(ValueError):
    """The session would make a cookie over the browser limit, which browsers silently drop."""


class SessionParts:
    """What a request's session carries for its interface; ``pending``: a write loading asked for, done on use."""

    sent_chunks: Sequence[str] = ()
    incomplete: Sequence[str] = ()
    configuration: Any = None
    revocation: Any = None
    pending: bool = False
    #: Not used yet, its cookie not read (the configuration's ``lazy_class``): saving it writes nothing.
    unused: bool = False

    @property
    def nothing_to_save(self) -> bool:
        """Never used, and no cookie to re-issue: with SESSION_REFRESH_EACH_REQUEST on, one never used is still
        read when saved (a permanent session's cookie is re-issued on every response, Flask's contract)."""
        return self.unused and not self.configuration.refresh


class FlaskSession(ReadTrackingSession if not FLASK_MARKS_ACCESS else Session, SessionParts, SessionMixin):  # type: ignore[misc]
    """``flask.session``: the core's session with Flask's ``permanent`` (``SessionMixin``, the ``_permanent`` key)."""


def flask_cookie_reader(secret: str | bytes, fallbacks: Any, max_age: int) -> Callable[[str], Any]:
    """Flask's own cookies read for migration: a cookie's session and the Unix second it was signed, or None."""
    from itsdangerous import URLSafeTimedSerializer

    theirs = SecureCookieSessionInterface
    kwargs = {"key_derivation": theirs.key_derivation, "digest_method": theirs.digest_method}
    keys: Any = [*fallbacks, secret]  # itsdangerous signs with the last, verifies with each
    serializer = URLSafeTimedSerializer(keys, salt=theirs.salt, serializer=theirs.serializer, signer_kwargs=kwargs)

    def read_dated(cookie: str) -> tuple[dict[str, Any], int] | None:
        try:
            data, signed_at = serializer.loads(cookie, max_age=max_age, return_timestamp=True)
        except Exception:  # BadSignature, or whatever the tagged serializer raises on a verified oddity
            return None
        return (data, int(signed_at.timestamp())) if isinstance(data, dict) else None

    return read_dated


def flask_shape(cookie: str) -> bool:
    """Whether a cookie looks like Flask's own (``[.]data.timestamp.signature``; ours have no ".")."""
    return cookie.count(".") >= 2


def werkzeug_domain(domain: Any) -> Any:
    """SESSION_COOKIE_DOMAIN as Werkzeug's ``dump_cookie`` writes it: no port, no leading dot, IDNA."""
    try:
        return (
            domain.partition(":")[0].lstrip(".").encode("idna").decode("ascii") if isinstance(domain, str) else domain
        )
    except UnicodeError:
        return domain  # the core's rule names it


class Configuration:
    """What one set of config values makes: the session class, the reader and the two writers (permanent or not)."""

    def __init__(
        self,
        secret: Any,
        fallbacks: Any,
        config: Mapping[str, Any],
        path: str,
        base: type[Session],
        asynchronous: bool,
        app_logger: logging.Logger,
    ) -> None:
        section = config.get(SETTING, {})
        found = options.section_problems(section, SETTING, SECTION_KEYS)
        options.raise_first(found)
        lifetime = config["PERMANENT_SESSION_LIFETIME"]
        given = {SECTION_KEYS[name]: value for name, value in section.items()}
        given |= {
            "cookie_name": config["SESSION_COOKIE_NAME"], "domain": werkzeug_domain(config["SESSION_COOKIE_DOMAIN"]),
            "path": path,
            "http_only": config["SESSION_COOKIE_HTTPONLY"], "secure": config["SESSION_COOKIE_SECURE"],
            "partitioned": config.get("SESSION_COOKIE_PARTITIONED", False),
            "max_age": int(lifetime.total_seconds()) if isinstance(lifetime, timedelta) else lifetime,
        }  # fmt: skip
        if config["SESSION_COOKIE_SAMESITE"] is not None:  # None: no attribute, as Flask writes it
            given["same_site"] = config["SESSION_COOKIE_SAMESITE"]
        if (store := given.get("revocation")) is not None:
            stores.check_store(store, f"{SETTING}['REVOCATION']", "is_revoked")
            user, module = ("QuartSessions", "quart") if asynchronous else ("FlaskSessions", "revocation")
            fix = f"blake2sign_web.flask.{module}.RedisStore(url, key_prefix=...)"
            stores.check_store_kind(store, asynchronous, f'app.config["{SETTING}"]["REVOCATION"]', user, fix)
            given["revocation_key_prefix"] = store.key_prefix
        if given.get("format") != 1:  # format 1 (a rolling upgrade's) cannot be typed
            given.setdefault("typed", True)  # Flask's own sessions keep tuples, bytes, datetimes, UUIDs...
        found = options.secret_problems(secret, fallbacks, options.FLASK) + options.problems(given, options.FLASK)
        options.raise_first(found)
        values = {**options.DEFAULTS, **given, "same_site": given.get("same_site")}
        name, lifetime = values["cookie_name"], values["max_age"]
        setup = SessionSetup(secret, list(fallbacks), values, purpose=f"flask.sessions:{name}")
        # Permanent: cookie and token live PERMANENT_SESSION_LIFETIME; else a browser-session cookie, the token bounded
        # by the lifetime. SESSION_PERMANENT (Flask-Session's key): sessions are permanent unless made otherwise.
        self.permanent = permanent_default = bool(config.get("SESSION_PERMANENT", False))

        def permanent_of(session: Any) -> bool:
            return bool(dict.get(session, "_permanent", permanent_default))

        setter = SessionMixin.permanent.fset  # type: ignore[attr-defined]
        age = property(lambda session: lifetime if permanent_of(session) else None)
        self.session_class = setup.session_class(
            base, __module__=__name__, permanent=property(permanent_of, setter), default_age=age, configuration=self
        )  # (what saves a session of the class: no second look at app.config)
        over = f", over the browser limit of {BROWSER_COOKIE_LIMIT} bytes"
        advice = "store less in flask.session (keep an id and load the rest server-side)."
        kept, raising = "The response keeps the client's previous session cookie.", values["on_oversize"] == "raise"
        # Under "log", a session too large is an error Flask users see by default: app.logger (Flask's convention).
        oversize = OversizePolicy(
            name, raising, SessionCookieTooLarge, over, advice, kept, app_logger, values["cookie_size_limit"]
        )
        chunks = options.FLASK.name(options.BY_KEY["max_chunks"])
        spelling = {"dated": True, "deleted_value": "", "max_chunks_name": chunks}  # Werkzeug's: expires, "name=;"
        spelling["chunks_fix"] = options.chunks_fix(options.FLASK)
        self.cookie = permanent = setup.cookie(oversize, **spelling)
        browser = setup.cookie(oversize, max_age=None, **spelling)
        ended = "Session cookie %r deleted: the session has ended (set_expiry() or ABSOLUTE_TIMEOUT)"
        words: dict[str, Any] = {"typed_name": f"{SETTING}['TYPED'] = True", "logger": logger, "ended": ended}
        self.writers = {True: SessionWriter(setup, permanent, **words), False: SessionWriter(setup, browser, **words)}
        legacy = flask_cookie_reader(secret, fallbacks, lifetime) if values["migrate"] else None
        reader = setup.token_reader(legacy, flask_shape)
        refusals = RefusalWords(
            f"expired (PERMANENT_SESSION_LIFETIME = {seconds(lifetime) if lifetime is not None else lifetime})",
            f"past {SETTING}['ABSOLUTE_TIMEOUT'] = {values['absolute_timeout']!r}",
            "it has the shape of a cookie of Flask's own session interface (itsdangerous); while migrating from "
            f"it, set {SETTING}['ACCEPT_FLASK_COOKIES'] = True",
            "not a valid session cookie",
        )
        # A refused cookie of Flask's own goes on app.logger too: a switch that logs everyone out must show.
        self.loader = SessionLoader(
            setup, permanent, reader, self.session_class, lazy=False, logger=logger, words=refusals, alert=app_logger
        )
        self.loader.pending_writes = True  # Flask's session.modified is the application's (``opened``)
        self.name, self.max_chunks = name, setup.max_chunks
        #: Revocation's RedisStore, how long its records last, and its part of a request (``StorePart``).
        self.store, self.lifetime = values["revocation"], setup.lifetime
        part = StorePart.of(self.store, self.loader, self.lifetime, name, "RedisStore on_unavailable")
        self.loading, self.writing, self.ask = part
        self.refresh = bool(config["SESSION_REFRESH_EACH_REQUEST"])
        self._refused = partial(logger.warning, "Rejected session cookie %r: %s", name)  # an incomplete set
        #: Read on first use unless chunked, store-checked or migrating (with refresh on, read when saved).
        self.lazy = not (self.max_chunks or self.store is not None or values["migrate"])
        self.lazy_class = lazy_class(
            self.session_class,
            # Flask 3.1.3's request context marks the session accessed before the application sees it: the use.
            accessed=property(lambda session: False, _lazy_accessed),
            # Read straight from the dict by the session class: loaded first.
            permanent=property(_lazy_permanent, setter),
            unused=True,
        )

    def lazy_session(self, header: bytes | None) -> Session:
        """The session of a request whose Cookie ``header`` (bytes, or None) is read on first use."""
        if header is None:
            session = self.session_class()
        else:
            session = self.lazy_class()
            session.source = (header, self.loader)
        return session  # (its configuration: its class's)

    def token(self, header: str | None, cookies: Callable[[], Mapping[str, str]]) -> tuple[Any, ...]:
        """The session token of a request's Cookie ``header``, the chunks sent and an incomplete set's (``opened``)."""
        token: str | None = None
        sent: Mapping[str, str] = {}
        incomplete: list[str] = []
        if not self.max_chunks:
            if header:
                found = self.cookie.token_in(header.encode("latin-1", "replace"))
                token = found.decode("latin-1").strip() if isinstance(found, bytes) else found
        else:
            sent = cookies()
            token = joined_token(self.name, sent, self.max_chunks, incomplete, self._refused)
        return token, sent, incomplete

    def open(self, header: str | None, cookies: Callable[[], Mapping[str, str]]) -> Session:
        """The session of a request (``token``), checked against a blocking store if there is one."""
        token, sent, incomplete = self.token(header, cookies)
        session = self.loader.for_cookie(token) if self.store is None else drive(self.loading(token), self.ask)
        return self.opened(session, sent, incomplete)

    def opened(self, session: Any, sent: Mapping[str, str], incomplete: list[str]) -> Session:
        """``session`` with what its interface needs to save it."""
        if self.max_chunks:
            session.sent_chunks = [name for name in sent if name.startswith(self.name + ".")]
            session.incomplete = incomplete
        if session.modified:  # Flask's session.modified is the application's: false until it changes the session
            session.modified, session.pending = False, True
        session.configuration = self  # what saves it: no second look at app.config
        return session  # type: ignore[no-any-return]

    def set_cookies(self, session: Any) -> list[bytes]:
        """The Set-Cookie values of the response for ``session`` (the core's plan); [] when it keeps the cookie."""
        permanent = self.refreshed(session)
        return self.cookies(session, permanent, None if self.store is None else drive(self.writing(session), self.ask))

    def save(self, session: Any, response: Any, written: list[bytes] | None = None) -> None:
        """Vary and the session's Set-Cookie values on ``response`` (``written``: those a store's awaited part gave)."""
        if session.unused:  # SESSION_REFRESH_EACH_REQUEST: read now, to re-issue it if permanent
            LazySession.load(session)
        if written is None:
            written = self.set_cookies(session)
        headers = response.headers
        for value in written:
            headers.add("Set-Cookie", value.decode("latin-1"))
        if session.accessed or written:  # read, or its cookie written: a cache must not share the response
            # Werkzeug's ``_list`` read directly (``"Vary" in headers`` raises and catches a BadRequestKeyError
            # when absent), and a constant, valid value appended: on every request that reads the session.
            pairs = headers._list
            for name, _ in pairs:
                if name.lower() == "vary":
                    response.vary.add("Cookie")  # joined to what is there, once
                    break
            else:
                pairs.append(("Vary", "Cookie"))

    def refreshed(self, session: Any) -> bool:
        """Whether ``session`` is permanent, marked modified if its cookie is re-issued (before the store's part)."""
        permanent = bool(dict.get(session, "_permanent", self.permanent))
        if (permanent and self.refresh and dict.__len__(session)) or (session.pending and session.accessed):
            session.modified = True  # SESSION_REFRESH_EACH_REQUEST: a permanent session's cookie is re-issued
        return permanent

    def cookies(self, session: Any, permanent: bool, session_id: bytes | None) -> list[bytes]:
        """``set_cookies`` once the store had its part (``session_id``: the id the token carries)."""
        if not (session.modified or session.incomplete or (session.refused and session.accessed)):
            return []  # (a refused set of chunks is deleted once read, as by the other adapters)
        return self.writers[permanent].set_cookies(session, session_id, session.sent_chunks, session.incomplete)


def _lazy_accessed(session: Any, accessed: bool) -> None:
    """Setting ``accessed`` on a session not yet loaded: loaded (and marked) if it is the application's use."""
    if accessed:
        LazySession.mark_accessed(session)


def _lazy_permanent(session: Any) -> bool:
    """``permanent`` of a session not yet loaded: loaded, then read."""
    LazySession.load(session)
    return bool(session.permanent)


#: The config keys a configuration is made of: those Flask's and Quart's default configs have, then two more.
DEFAULT_KEYS: Final = (
    "SECRET_KEY", "SECRET_KEY_FALLBACKS", "SESSION_COOKIE_PATH", "APPLICATION_ROOT", "SESSION_COOKIE_NAME",
    "SESSION_COOKIE_DOMAIN", "SESSION_COOKIE_HTTPONLY", "SESSION_COOKIE_SECURE", "SESSION_COOKIE_SAMESITE",
    "SESSION_COOKIE_PARTITIONED", "PERMANENT_SESSION_LIFETIME", "SESSION_REFRESH_EACH_REQUEST",
)  # fmt: skip
DEFAULT_VALUES: Final = itemgetter(*DEFAULT_KEYS)
CONFIG_KEYS: Final = (*DEFAULT_KEYS, SETTING, "SESSION_PERMANENT")
SECTION_AT: Final = CONFIG_KEYS.index(SETTING)
FALLBACKS_AT: Final = CONFIG_KEYS.index("SECRET_KEY_FALLBACKS")


class Watched:
    """A config class counting its changes: ``Configurations.of`` sees an unchanged config by one comparison."""

    __slots__ = ()
    #: Changes made to this config since it was watched.
    blake2sign_web_changes = 0

    def _changed(self: Any) -> None:
        vars(self)["blake2sign_web_changes"] = self.blake2sign_web_changes + 1

    def __setitem__(self: Any, key: str, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self._changed()

    def __delitem__(self: Any, key: str) -> None:
        dict.__delitem__(self, key)
        self._changed()

    def update(self: Any, *args: Any, **kwargs: Any) -> None:
        dict.update(self, *args, **kwargs)
        self._changed()

    def setdefault(self: Any, key: str, default: Any = None) -> Any:
        self._changed()
        return dict.setdefault(self, key, default)

    def pop(self: Any, key: str, *default: Any) -> Any:
        self._changed()
        return dict.pop(self, key, *default)

    def popitem(self: Any) -> tuple[str, Any]:
        self._changed()
        return dict.popitem(self)

    def clear(self: Any) -> None:
        dict.clear(self)
        self._changed()

    def __ior__(self: Any, other: Any) -> Any:
        dict.update(self, other)
        self._changed()
        return self


class WatchedConfig(Watched, flask.Config):
    """Flask's ``Config``, watched (``Watched``): what ``app.config`` becomes under this interface."""

    __slots__ = ()


#: The config classes ``watch`` replaces, and by what (``blake2sign_web.flask.quart`` adds Quart's).
WATCHED: dict[type, type] = {flask.Config: WatchedConfig}


def watch(config: Any) -> bool:
    """Whether ``config`` is watched (``Watched``), made so if its class is Flask's or Quart's own."""
    if isinstance(config, Watched):
        return True
    watched = WATCHED.get(type(config))
    if watched is None:
        return False  # an application's own config class: compared by its values on each request
    try:
        config.__class__ = watched
    except TypeError:  # pragma: no cover - a layout that cannot change (no known config class)
        return False
    return True


def _copy(value: Any) -> Any:
    """A copy of a dict or a list (what a test may change in place), compared with the value on later requests."""
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


def check_app(app: Any, asynchronous: bool) -> None:
    """A TypeError at once for the other framework's app, which would otherwise fail later, or not at all."""
    quart = sys.modules.get("quart")
    if asynchronous and isinstance(app, flask.Flask):
        raise TypeError("QuartSessions serves a Quart app, and this is a Flask app: use FlaskSessions(app)")
    if not asynchronous and quart is not None and isinstance(app, quart.Quart):
        raise TypeError("FlaskSessions serves a Flask app, and this is a Quart app: use QuartSessions(app)")


class Configurations:
    """The configuration of each app an interface serves, built (and checked) once per set of config values."""

    def __init__(self, session_base: type[Session], *, asynchronous: bool = False) -> None:
        self.session_base, self.asynchronous = session_base, asynchronous
        self.built: dict[Any, Configuration] = {}
        #: The last configuration used: ``CONFIG_KEYS``' values, the app, copies of the two containers, it.
        self.last: tuple[tuple[Any, ...], Any, Any, Any, Configuration] | None = None
        #: The last configuration found for a watched config, with its count of changes and the containers' copies.
        self.seen: tuple[Any, int, Any, Any, Any, Any, Any, Configuration] | None = None

    def of(self, app: Any) -> Configuration | None:
        """The configuration of ``app.config`` as it is now; None without a secret (Flask's null session)."""
        config = app.config
        seen = self.seen
        if (
            seen is not None
            and config is seen[0]
            and config.blake2sign_web_changes == seen[1]
            and seen[2] == seen[3]
            and seen[4] == seen[5]
            and app is seen[6]
        ):
            return seen[7]
        return self.compared(app)

    def compared(self, app: Any) -> Configuration | None:
        """``of`` by the config's values, compared with the last ones used; only a change builds a key."""
        config = app.config
        try:
            values = DEFAULT_VALUES(config)  # one call, not a get per key
        except KeyError:  # one of them deleted (or an older Flask's config)
            values = tuple(map(config.get, DEFAULT_KEYS))
        values += (config.get(SETTING), config.get("SESSION_PERMANENT"))
        last = self.last
        if (
            last is not None
            and values == last[0]
            and app is last[1]
            and values[SECTION_AT] == last[2]
            and values[FALLBACKS_AT] == last[3]
        ):
            found = last[4]
        else:
            built = self.configured(app, values)
            if built is None or self.last is None or self.last[4] is not built:
                return built  # (no secret, or an unhashable value: compared again on each request)
            found = built
        if watch(config):
            section, fallbacks = values[SECTION_AT], values[FALLBACKS_AT]
            changes = config.blake2sign_web_changes
            self.seen = (config, changes, section, _copy(section), fallbacks, _copy(fallbacks), app, found)
        return found

    def configured(self, app: Any, values: tuple[Any, ...]) -> Configuration | None:
        """``of``, when the config changed: built and checked once per set of ``values`` (``CONFIG_KEYS``')."""
        secret = app.secret_key
        if not secret:
            return None
        config = app.config
        fallbacks = config.get("SECRET_KEY_FALLBACKS") or ()
        path = config["SESSION_COOKIE_PATH"] or config["APPLICATION_ROOT"]
        section = config.get(SETTING)
        key = (
            secret, fallbacks if isinstance(fallbacks, str) else tuple(fallbacks), path, config["SESSION_COOKIE_NAME"],
            config["SESSION_COOKIE_DOMAIN"], config["SESSION_COOKIE_HTTPONLY"], config["SESSION_COOKIE_SECURE"],
            config["SESSION_COOKIE_SAMESITE"], config.get("SESSION_COOKIE_PARTITIONED", False),
            config["PERMANENT_SESSION_LIFETIME"], config["SESSION_REFRESH_EACH_REQUEST"],
            tuple(section.items()) if isinstance(section, dict) else repr(section), config.get("SESSION_PERMANENT"),
            app.name,  # its logger's
        )  # fmt: skip
        try:
            found = self.built[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable value: built afresh (and checked) on each request
            return Configuration(secret, fallbacks, config, path, self.session_base, self.asynchronous, app.logger)
        else:
            self.last = (values, app, _copy(values[SECTION_AT]), _copy(values[FALLBACKS_AT]), found)
            return found
        check_app(app, self.asynchronous)  # app.session_interface = FlaskSessions() on a Quart app
        found = Configuration(secret, fallbacks, config, path, self.session_base, self.asynchronous, app.logger)
        if len(self.built) >= 8:  # configs come and go in tests: keep the few recent ones
            self.built.clear()
        self.built[key] = found
        self.last = (values, app, _copy(values[SECTION_AT]), _copy(values[FALLBACKS_AT]), found)
        return found

    def save(self, app: Any, session: Any, response: Any, written: list[bytes] | None = None) -> None:
        """Vary and the session's Set-Cookie values on ``response`` (Werkzeug's, or Quart's: ``written``)."""
        if session is None or session.nothing_to_save:  # opening it failed (a bad setting, already raised): no
            return  # second error; or never used, with nothing to re-issue
        configuration = session.configuration or self.of(app)
        if configuration is not None:
            configuration.save(session, response, written)


class FlaskSessions(SessionInterface):
    """This project's signed-cookie sessions for a Flask app: ``FlaskSessions(app)``, or ``init_app(app)``."""

    def __init__(self, app: Flask | None = None) -> None:
        self.configurations = Configurations(FlaskSession)
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Make this ``app``'s session interface, its configuration checked now."""
        check_app(app, asynchronous=False)
        app.session_interface = self
        self.configurations.of(app)

    def open_session(self, app: Flask, request: Request) -> SessionMixin | None:
        configuration = self.configurations.of(app)
        if configuration is None:
            return None
        header = request.environ.get("HTTP_COOKIE")
        if configuration.lazy:
            return configuration.lazy_session(header.encode("latin-1", "replace") if header else None)  # type: ignore[return-value]
        return configuration.open(header, lambda: request.cookies)  # type: ignore[return-value]

    def is_null_session(self, obj: object) -> bool:
        """Whether Flask skips saving the session: its null session, and one never used. An attribute read, not
        ``isinstance(obj, NullSession)``, which ``SessionMixin``'s ABC makes a Python call on every request."""
        try:
            return obj.nothing_to_save  # type: ignore[attr-defined,no-any-return]
        except AttributeError:  # not a session of this interface's
            return super().is_null_session(obj)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        self.configurations.save(app, session, response)
