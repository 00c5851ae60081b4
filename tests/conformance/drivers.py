"""One small driver per framework: the same session scenario, run through each framework's real stack.

A scenario speaks one neutral language:

- **options**, one dict (``NEUTRAL_OPTIONS`` lists the keys), which each driver spells as its framework
  does: Starlette's ``SessionMiddleware(...)`` arguments, Django's ``SESSION_*`` settings and
  ``BLAKE2SIGN_WEB["SESSIONS"]``;
- **operations** on the session, a list per request (``OPERATIONS``), which a view in each framework
  applies to ``request.session`` and answers with what it read;
- **cookies** by neutral name: ``session`` for the session cookie (whatever the framework calls it),
  ``session.1``, ``session.2``... for its chunks.

A driver answers each request with a ``Response``: the status, what the view saw, the Set-Cookie headers
parsed (the name made neutral, deletions recognised), and the error the framework raised, if any. Each
driver keeps a cookie jar, as a browser does (the request's ``Cookie`` header is written from it, so no
client library decides which cookies to send).

Real components only: Django's test client through the whole middleware stack (this project's session
middleware or Django's), Starlette's TestClient (httpx) through the real middleware, a real redis-server
for revocation. Adding a framework means writing one ``Driver`` subclass and adding it to ``DRIVERS``.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from email.utils import parsedate_to_datetime
from http.cookies import SimpleCookie
from typing import Any, Final

from blake2sign_web import SerializerSigner
from tests.hasher import HASHER

SECRET: Final = "conformance-suite-secret-0123456789abcdefghijklmnop"
OLD_SECRET: Final = "conformance-suite-old-secret-0123456789abcdefghijkl"
#: The key prefix of revocation records (both frameworks refuse to run without one).
KEY_PREFIX: Final = "conformance"
TWO_WEEKS: Final = 14 * 24 * 60 * 60

#: The neutral options and their defaults (the defaults both frameworks share, or the neutral choice).
NEUTRAL_OPTIONS: Final[dict[str, Any]] = {
    "cookie_name": None,  # None: the framework's default name (Django "sessionid", Starlette "session")
    "max_age": TWO_WEEKS,  # None: a browser-session cookie (see DIFFERENCES["max_age=None"])
    "path": "/",
    "domain": None,
    "secure": False,
    "same_site": "lax",
    "partitioned": False,
    "fallback_secrets": [],
    "idle_timeout": None,
    "absolute_timeout": None,
    "chunked": False,
    "max_chunks": 2,
    "on_oversize": "raise",
    "typed": False,
    "encrypt": False,
    "decrypt": False,
    "hasher": HASHER,  # BLAKE2SIGN_TEST_HASHER (tests/hasher.py): the signer's hash, in every framework
    "migrate": False,  # read the incumbent's own cookies (Django's signed_cookies, Starlette's middleware)
    "revocation": None,  # a redis:// URL: revocation on, records in that Redis
    "revocation_unavailable": "closed",  # with revocation: a session read while Redis is down is refused, or kept
}

#: The operations a request's view applies to the session, in order; each appends one result.
OPERATIONS: Final = {
    "set": "[set, key, value]: session[key] = value",
    "get": "[get, key]: session.get(key)",
    "delete": "[delete, key]: session.pop(key, None)",
    "clear": "[clear]: session.clear()",
    "flush": "[flush]: Django's flush(); Starlette's clear() (it has no flush)",
    "touch": "[touch]: mark the session modified (re-issued unchanged)",
    "set_expiry": "[set_expiry, spec]: spec None, seconds, {'timedelta': s} or {'datetime_in': s}",
    "accessors": "[accessors]: {age, date, browser_close} from the three expiry accessors",
    "set_typed": "[set_typed, key]: session[key] = TYPED_SAMPLE",
    "types": "[types, key]: {equal: the value == TYPED_SAMPLE, types: each value's type name}",
    "set_blob": "[set_blob, key, n]: session[key] = n characters zstd cannot shrink",
    "blob_length": "[blob_length, key]: len(session.get(key, ''))",
    "login": "[login, user]: a new session id for the same data (cycle_key), then the user's id",
    "logout": "[logout]: end the session (revoked everywhere with revocation on)",
    "everywhere": "[everywhere, user, keep]: log the user out everywhere, keeping this session or not",
}

#: The session key that holds the logged-in user's id: django.contrib.auth's, and Starlette's user_key.
USER_KEY: Final = "_auth_user_id"

#: One value of each type a typed session keeps (``typed`` on), as a view stores it.
TYPED_SAMPLE: Final[dict[str, Any]] = {
    "datetime": datetime(2026, 11, 24, 12, 30, 5, 123456, tzinfo=timezone.utc),
    "date": date(2026, 11, 24),
    "timedelta": timedelta(days=1, seconds=5),
    "uuid": uuid.UUID(int=7),
    "decimal": Decimal("19.90"),
    "set": {1, 2, 3},
    "tuple": (1, "two"),
    "bytes": b"\x00\xff",
}


def plain(value: Any) -> Any:
    """``value`` as JSON can carry it back to the test: anything JSON cannot hold becomes its repr."""
    return json.loads(json.dumps(value, default=repr))


def expiry_argument(spec: Any, now: datetime) -> Any:
    """The ``set_expiry`` argument a spec means: None, seconds, or a timedelta or datetime built now."""
    if isinstance(spec, dict) and "timedelta" in spec:
        return timedelta(seconds=spec["timedelta"])
    if isinstance(spec, dict) and "datetime_in" in spec:
        return now + timedelta(seconds=spec["datetime_in"])
    return spec


def accessors(session: Any) -> dict[str, Any]:
    date_ = session.get_expiry_date()
    return {
        "age": session.get_expiry_age(),
        "date": None if date_ is None else date_.timestamp(),
        "browser_close": session.get_expire_at_browser_close(),
    }


def typed_report(value: Any) -> dict[str, Any]:
    value = value or {}
    return {"equal": value == TYPED_SAMPLE, "types": {key: type(item).__name__ for key, item in value.items()}}


def blob(size: int) -> str:
    """``size`` characters that zstd cannot shrink (a session that really takes its size in the cookie)."""
    return secrets.token_urlsafe(size)[:size]


# --- Responses -------------------------------------------------------------------------------------------


@dataclass
class SetCookie:
    """One Set-Cookie header, parsed: the neutral name, the value, the attributes (names lower-cased)."""

    name: str
    value: str
    #: Attribute name (lower case) to its value; True for a flag (Secure, HttpOnly, Partitioned).
    attributes: dict[str, Any]
    #: The header deletes the cookie (an empty or "null" value with an expiry in the past, or Max-Age <= 0).
    deleted: bool

    def neutral(self) -> dict[str, Any]:
        """What every framework must agree on (DIFFERENCES names what is left out, and why)."""
        if self.deleted:
            # DIFFERENCES["deletion attributes"]: only where the deleted cookie lived.
            return {"deleted": True, **{k: v for k, v in self.attributes.items() if k in ("path", "domain")}}
        attributes = {k: v for k, v in self.attributes.items() if k != "expires"}  # DIFFERENCES["expires"]
        if "samesite" in attributes:
            attributes["samesite"] = str(attributes["samesite"]).lower()
        return {"deleted": False, **attributes}


def parse_set_cookie(header: str, cookie_name: str, received: float) -> SetCookie:
    """A Set-Cookie header as sent; ``cookie_name`` (the framework's) becomes ``session`` in the name."""
    first, *parts = header.split(";")
    name, _, value = first.strip().partition("=")
    if value == '""':
        value = ""
    attributes: dict[str, Any] = {}
    for part in parts:
        key, equals, text = part.strip().partition("=")
        if key:
            attributes[key.lower()] = text if equals else True
    if "max-age" in attributes:
        attributes["max-age"] = int(attributes["max-age"])
    expires = attributes.get("expires")
    expired = isinstance(expires, str) and parsedate_to_datetime(expires).timestamp() < received - 1
    deleted = value in ("", "null") and (expired or attributes.get("max-age", 1) <= 0)
    if not deleted and isinstance(expires, str) and "max-age" in attributes:
        # DIFFERENCES["expires"]: Django writes Expires beside Max-Age; it must say the same thing.
        assert abs(parsedate_to_datetime(expires).timestamp() - (received + attributes["max-age"])) <= 2, header
    return SetCookie(neutral_name(name, cookie_name), value, attributes, deleted)


def neutral_name(name: str, cookie_name: str) -> str:
    if name == cookie_name:
        return "session"
    if name.startswith(cookie_name + "."):
        return "session" + name[len(cookie_name) :]
    return name


@dataclass
class Response:
    """What one request through a driver gave."""

    status: int
    #: What the view answered: {"results": [...], "session": {...}} (None when it did not run to the end).
    view: dict[str, Any] | None
    set_cookies: list[SetCookie]
    #: The exception the framework raised (the test clients re-raise them), or None.
    error: BaseException | None = None
    received: float = field(default_factory=time.time)

    @property
    def results(self) -> list[Any]:
        assert self.view is not None, f"the view did not answer: {self.error!r}"
        return list(self.view["results"])

    @property
    def session(self) -> dict[str, Any]:
        assert self.view is not None, f"the view did not answer: {self.error!r}"
        assert self.view["session"] is not None, "requested with report=False"
        return dict(self.view["session"])

    def cookie(self, name: str = "session") -> SetCookie | None:
        found = [c for c in self.set_cookies if c.name == name]
        assert len(found) <= 1, f"{name} set twice: {found}"
        return found[0] if found else None

    def cookies(self) -> dict[str, dict[str, Any]]:
        """Every Set-Cookie, by neutral name, in its neutral form."""
        return {c.name: c.neutral() for c in self.set_cookies}


# --- Drivers ---------------------------------------------------------------------------------------------


class Driver(ABC):
    """One framework's stack, configured from the neutral options; a cookie jar kept as a browser keeps one."""

    #: The parameter id: "starlette", "django-ours", "django-own" (Django's own session middleware)...
    name: str
    framework: str
    #: Features the stack cannot run (with the DIFFERENCES entry saying why).
    unsupported: frozenset[str] = frozenset()
    #: Keys the framework keeps in the session's data itself, left out of what the view saw (DIFFERENCES).
    private_keys: frozenset[str] = frozenset()

    def __init__(self, options: dict[str, Any]) -> None:
        unknown = set(options) - set(NEUTRAL_OPTIONS)
        assert not unknown, f"unknown neutral options {unknown}"
        self.options = {**NEUTRAL_OPTIONS, **options}
        #: The cookies the client holds, by the framework's names.
        self.jar: dict[str, str] = {}

    @property
    @abstractmethod
    def cookie_name(self) -> str:
        """The session cookie's name in this framework, as configured."""

    @abstractmethod
    def running(self) -> AbstractContextManager[Driver]:
        """The configured stack, for the length of a ``with``."""

    @abstractmethod
    def _send(
        self, ops: list[list[Any]], cookie_header: str, report: bool
    ) -> tuple[int, dict[str, Any] | None, list[str]]:
        """One request: the status, the view's answer and the raw Set-Cookie headers. May raise.

        ``report``: the view answers with the session too (reading it); else it touches only what ``ops`` do.
        """

    @abstractmethod
    def sign(
        self,
        session: dict[str, Any],
        *,
        ago: float = 0,
        expiry: int | None = None,
        started_ago: float | None = None,
        secret: str = SECRET,
        session_id: bytes | None = None,
        hasher: str | None = None,
        **flags: bool,
    ) -> str:
        """A token of this framework's sessions, signed ``ago`` seconds ago (the core's ``clock=``).

        ``expiry``: a ``set_expiry(seconds)`` signed into it; ``started_ago``: when the session began
        (absolute_timeout). Each framework keeps those its own way inside the token: this hides it.
        ``flags`` (``typed``, ``encrypt``) override the configured ones, and ``hasher`` the configured hasher.
        """

    @abstractmethod
    def read_token(self, token: str, *, secret: str = SECRET, hasher: str | None = None, **flags: bool) -> Any:
        """The core's LoadedToken for one of this framework's tokens, verified with ``secret`` alone.

        ``hasher``: verified with that hasher instead of the configured one (which must refuse it, if another).
        """

    def signer_options(self, flags: dict[str, bool], hasher: str | None = None) -> dict[str, Any]:
        """The core's options for a signer of this configuration's tokens: its hasher (or ``hasher``), and its flags,
        ``flags`` overriding them."""
        chosen = {name: bool(self.options[name]) for name in ("typed", "encrypt", "decrypt")}
        chosen.update(flags)
        return {"hasher": hasher or self.options["hasher"], **{name: True for name, on in chosen.items() if on}}

    @abstractmethod
    def incumbent_cookie(self, session: dict[str, Any]) -> str:
        """A cookie of the framework's own signed-cookie sessions (what ``migrate`` reads)."""

    @abstractmethod
    def spelling(self, option: str) -> str:
        """How a user of this framework writes a neutral option in a fix: ``https_only=True``..."""

    # The neutral interface.

    def put(self, name: str, value: str) -> None:
        """Give the client a cookie, by neutral name."""
        self.jar[self.actual_name(name)] = value

    def held(self) -> dict[str, str]:
        """The cookies the client holds, by neutral name."""
        return {neutral_name(name, self.cookie_name): value for name, value in self.jar.items()}

    def actual_name(self, name: str) -> str:
        return self.cookie_name + name[len("session") :] if name.startswith("session") else name

    def request(self, *ops: list[Any], cookies: dict[str, str] | None = None, report: bool = True) -> Response:
        """Apply ``ops`` in a view; send the jar's cookies (or exactly ``cookies``, by neutral name).

        ``report=False``: the view does not read the session to answer with it (a request that never uses the
        session, when ``ops`` is empty).
        """
        if cookies is not None:
            self.jar = {self.actual_name(name): value for name, value in cookies.items()}
        header = "; ".join(f"{name}={value}" for name, value in self.jar.items())
        try:
            status, view, headers = self._send([list(op) for op in ops], header, report)
        except Exception as error:  # the test clients re-raise what the stack raised: a 500 in production
            return Response(500, None, [], error)
        received = time.time()
        if view is not None and view["session"] is not None:
            view["session"] = {k: v for k, v in view["session"].items() if k not in self.private_keys}
        cookies = [parse_set_cookie(h, self.cookie_name, received) for h in headers]
        response = Response(status, view, cookies, received=received)
        for cookie in response.set_cookies:
            actual = self.actual_name(cookie.name)
            if cookie.deleted:
                self.jar.pop(actual, None)
            else:
                self.jar[actual] = cookie.value
        return response

    def read(self) -> dict[str, Any]:
        """The session the client's cookies now hold, as the next request's view sees it."""
        response = self.request()
        assert response.status == 200, response.error
        return response.session


class StarletteDriver(Driver):
    """``blake2sign_web.starlette.SessionMiddleware`` in a Starlette app, through Starlette's TestClient."""

    name = "starlette"
    framework = "starlette"

    @property
    def cookie_name(self) -> str:
        return self.options["cookie_name"] or "session"

    def middleware_options(self) -> dict[str, Any]:
        o = self.options
        options: dict[str, Any] = {
            "secret_key": SECRET,
            "session_cookie": self.cookie_name,
            "max_age": o["max_age"],
            "path": o["path"],
            "same_site": o["same_site"],
            "https_only": o["secure"],
            "domain": o["domain"],
            "partitioned": o["partitioned"],
            "fallback_secrets": o["fallback_secrets"],
            "idle_timeout": o["idle_timeout"],
            "absolute_timeout": o["absolute_timeout"],
            "on_oversize": o["on_oversize"],
            "typed": o["typed"],
            "encrypt": o["encrypt"],
            "decrypt": o["decrypt"],
            "hasher": o["hasher"],
            "migrate_starlette_cookies": o["migrate"],
        }
        if o["chunked"]:
            options.update(chunked=True, max_chunks=o["max_chunks"])
        if o["revocation"] is not None:
            from blake2sign_web.starlette.revocation import RedisStore

            from ..redis_server import PATIENT_TIMEOUT

            options["revocation"] = RedisStore(
                o["revocation"],
                timeout=PATIENT_TIMEOUT,
                key_prefix=KEY_PREFIX,
                on_unavailable=o["revocation_unavailable"],
            )
            options["user_key"] = USER_KEY
        return options

    @contextmanager
    def running(self) -> Iterator[Driver]:
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.routing import Route
        from starlette.testclient import TestClient

        from blake2sign_web.starlette import SessionMiddleware

        from .starlette_app import ops

        app = Starlette(
            routes=[Route("/ops", ops, methods=["POST"])],
            middleware=[Middleware(SessionMiddleware, **self.middleware_options())],
        )
        # The middleware is built at the first request: a configuration error surfaces here, at start-up.
        with TestClient(app, base_url="https://testserver") as self.client:
            yield self

    def _send(
        self, ops: list[list[Any]], cookie_header: str, report: bool
    ) -> tuple[int, dict[str, Any] | None, list[str]]:
        self.client.cookies.clear()
        headers = {"cookie": cookie_header} if cookie_header else {}
        response = self.client.post("/ops", json={"ops": ops, "report": report}, headers=headers)
        self.client.cookies.clear()
        view = response.json() if response.headers.get("content-type") == "application/json" else None
        return response.status_code, view, response.headers.get_list("set-cookie")

    def _signer(
        self, secret: str, at: float | None, flags: dict[str, bool], hasher: str | None = None
    ) -> SerializerSigner:
        clock = {} if at is None else {"clock": lambda: at}
        purpose = f"starlette.sessions:{self.cookie_name}"
        return SerializerSigner(secret, purpose=purpose, **clock, **self.signer_options(flags, hasher))

    def sign(
        self,
        session: dict[str, Any],
        *,
        ago: float = 0,
        expiry: int | None = None,
        started_ago: float | None = None,
        secret: str = SECRET,
        session_id: bytes | None = None,
        hasher: str | None = None,
        **flags: bool,
    ) -> str:
        at = time.time() - ago
        meta: dict[str, Any] = {}
        expires_in = None
        if expiry is not None:
            meta["e"] = expiry
            expires_in = expiry or None
        if started_ago is not None:
            meta["c"] = int(time.time() - started_ago)
        value: Any = [session, meta] if meta else session
        return self._signer(secret, at, flags, hasher).dumps(value, expires_in=expires_in, session_id=session_id)

    def read_token(self, token: str, *, secret: str = SECRET, hasher: str | None = None, **flags: bool) -> Any:
        return self._signer(secret, None, flags, hasher).load_token(token)

    def incumbent_cookie(self, session: dict[str, Any]) -> str:
        from base64 import b64encode

        import itsdangerous

        data = b64encode(json.dumps(session).encode("utf-8"))
        return itsdangerous.TimestampSigner(SECRET).sign(data).decode("utf-8")

    def spelling(self, option: str) -> str:
        return STARLETTE_SPELLING[option]


#: How a Starlette user writes each fix a message names.
STARLETTE_SPELLING: Final = {
    "secure": "https_only=True",
    "max_chunks": "max_chunks",
    "typed": "SessionMiddleware(..., typed=True)",
    "path": "path='/'",
    "domain": "domain=None",
}

DJANGO_MIDDLEWARE: Final = "django.contrib.sessions.middleware.SessionMiddleware"
OUR_DJANGO_MIDDLEWARE: Final = "blake2sign_web.django.middleware.SessionMiddleware"
#: The Django settings' part this suite replaces (the rest is tests.django_settings).
DJANGO_MIDDLEWARE_STACK: Final = [
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]


class DjangoDriver(Driver):
    """``SESSION_ENGINE = "blake2sign_web.django.sessions"`` behind a session middleware, via Django's test client."""

    framework = "django"
    #: DIFFERENCES["_session_expiry"].
    private_keys = frozenset({"_session_expiry"})

    def __init__(self, options: dict[str, Any], *, middleware: str) -> None:
        super().__init__(options)
        self.middleware = middleware

    @property
    def cookie_name(self) -> str:
        return self.options["cookie_name"] or "sessionid"

    def django_settings(self) -> dict[str, Any]:
        o = self.options
        sessions: dict[str, Any] = {
            "IDLE_TIMEOUT": o["idle_timeout"],
            "ABSOLUTE_TIMEOUT": o["absolute_timeout"],
            "OVERSIZE": o["on_oversize"],
            "TYPED": o["typed"],
            "ENCRYPT": o["encrypt"],
            "DECRYPT": o["decrypt"],
            "HASHER": o["hasher"],
            "ACCEPT_DJANGO_SIGNED_COOKIES": o["migrate"],
        }
        if o["chunked"]:
            sessions.update(CHUNKED=True, MAX_CHUNKS=o["max_chunks"])
        overrides: dict[str, Any] = {
            "SECRET_KEY": SECRET,
            "SECRET_KEY_FALLBACKS": list(o["fallback_secrets"]),
            "MIDDLEWARE": [self.middleware, *DJANGO_MIDDLEWARE_STACK],
            "ROOT_URLCONF": "tests.conformance.django_app",
            "SESSION_ENGINE": "blake2sign_web.django.sessions",
            "SESSION_COOKIE_NAME": self.cookie_name,
            # max_age=None: DIFFERENCES["max_age=None"] (Django keeps SESSION_COOKIE_AGE as the server's limit).
            "SESSION_COOKIE_AGE": TWO_WEEKS if o["max_age"] is None else o["max_age"],
            "SESSION_EXPIRE_AT_BROWSER_CLOSE": o["max_age"] is None,
            "SESSION_COOKIE_PATH": o["path"],
            "SESSION_COOKIE_DOMAIN": o["domain"],
            "SESSION_COOKIE_SECURE": o["secure"],
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": o["same_site"].capitalize(),
            "SESSION_COOKIE_PARTITIONED": o["partitioned"],
            "SESSION_SAVE_EVERY_REQUEST": False,
        }
        if o["revocation"] is not None:
            from ..redis_server import PATIENT_OPTIONS

            overrides["CACHES"] = {
                "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
                "sessions": {
                    "BACKEND": "django.core.cache.backends.redis.RedisCache",
                    "LOCATION": o["revocation"],
                    "OPTIONS": PATIENT_OPTIONS,
                },
            }
            sessions.update(
                REVOCATION_CACHE="sessions",
                REVOCATION_KEY_PREFIX=KEY_PREFIX,
                REVOCATION_UNAVAILABLE=o["revocation_unavailable"],
            )
        overrides["BLAKE2SIGN_WEB"] = {"SESSIONS": sessions}
        return overrides

    @contextmanager
    def running(self) -> Iterator[Driver]:
        from django.test import Client, override_settings

        with override_settings(**self.django_settings()):
            self.client = Client()
            yield self

    def _send(
        self, ops: list[list[Any]], cookie_header: str, report: bool
    ) -> tuple[int, dict[str, Any] | None, list[str]]:
        self.client.cookies = SimpleCookie()
        body = json.dumps({"ops": ops, "report": report})
        response = self.client.post(
            "/ops/", body, content_type="application/json", HTTP_COOKIE=cookie_header, secure=True
        )
        view = json.loads(response.content) if response["Content-Type"] == "application/json" else None
        return response.status_code, view, [morsel.OutputString() for morsel in response.cookies.values()]

    def _signer(
        self, secret: str, at: float | None, flags: dict[str, bool], hasher: str | None = None
    ) -> SerializerSigner:
        from blake2sign_web.django import conf

        clock = {} if at is None else {"clock": lambda: at}
        return SerializerSigner(secret, purpose=conf.PURPOSE, **clock, **self.signer_options(flags, hasher))

    def sign(
        self,
        session: dict[str, Any],
        *,
        ago: float = 0,
        expiry: int | None = None,
        started_ago: float | None = None,
        secret: str = SECRET,
        session_id: bytes | None = None,
        hasher: str | None = None,
        **flags: bool,
    ) -> str:
        from blake2sign_web.django.sessions import STARTED

        at = time.time() - ago
        data = dict(session)
        expires_in = None
        if expiry is not None:
            data["_session_expiry"] = expiry  # Django keeps set_expiry() in the session's data
            expires_in = expiry or None
        if started_ago is not None:
            data[STARTED] = int(time.time() - started_ago)
        return self._signer(secret, at, flags, hasher).dumps(data, expires_in=expires_in, session_id=session_id)

    def read_token(self, token: str, *, secret: str = SECRET, hasher: str | None = None, **flags: bool) -> Any:
        return self._signer(secret, None, flags, hasher).load_token(token)

    def incumbent_cookie(self, session: dict[str, Any]) -> str:
        from django.core import signing

        from blake2sign_web.django.sessions import DJANGO_SIGNED_COOKIES_SALT

        return signing.dumps(session, key=SECRET, salt=DJANGO_SIGNED_COOKIES_SALT, compress=True)

    def spelling(self, option: str) -> str:
        return DJANGO_SPELLING[option]


#: How a Django user writes each fix a message names.
DJANGO_SPELLING: Final = {
    "secure": "SESSION_COOKIE_SECURE = True",
    "max_chunks": "BLAKE2SIGN_WEB['SESSIONS']['MAX_CHUNKS']",
    "typed": "BLAKE2SIGN_WEB['SESSIONS']['TYPED'] = True",
    "path": 'SESSION_COOKIE_PATH = "/"',
    "domain": "SESSION_COOKIE_DOMAIN = None",
}


class DjangoOurMiddleware(DjangoDriver):
    name = "django-ours"

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options, middleware=OUR_DJANGO_MIDDLEWARE)


class DjangoOwnMiddleware(DjangoDriver):
    """The engine behind Django's own SessionMiddleware: what a project that only switches the engine runs."""

    name = "django-own"
    #: DIFFERENCES["chunked needs our Django middleware"], DIFFERENCES["partitioned"].
    unsupported = frozenset({"chunked", "partitioned"})

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options, middleware=DJANGO_MIDDLEWARE)


class FlaskDriver(Driver):
    """``blake2sign_web.flask.FlaskSessions`` in a Flask app, through Flask's (Werkzeug's) test client."""

    name = "flask"
    framework = "flask"

    @property
    def cookie_name(self) -> str:
        return self.options["cookie_name"] or "session"

    def flask_config(self) -> dict[str, Any]:
        o = self.options
        section: dict[str, Any] = {
            "IDLE_TIMEOUT": o["idle_timeout"],
            "ABSOLUTE_TIMEOUT": o["absolute_timeout"],
            "OVERSIZE": o["on_oversize"],
            "TYPED": o["typed"],
            "ENCRYPT": o["encrypt"],
            "DECRYPT": o["decrypt"],
            "HASHER": o["hasher"],
            "ACCEPT_FLASK_COOKIES": o["migrate"],
        }
        if o["chunked"]:
            section.update(CHUNKED=True, MAX_CHUNKS=o["max_chunks"])
        if o["revocation"] is not None:
            from blake2sign_web.flask.revocation import RedisStore

            from ..redis_server import PATIENT_TIMEOUT

            section["REVOCATION"] = RedisStore(
                o["revocation"],
                timeout=PATIENT_TIMEOUT,
                key_prefix=KEY_PREFIX,
                on_unavailable=o["revocation_unavailable"],
                user_key=USER_KEY,
            )
        return {
            "TESTING": True,  # the test client re-raises what the stack raised, as the other drivers' do
            "SECRET_KEY": SECRET,
            "SECRET_KEY_FALLBACKS": list(o["fallback_secrets"]),
            "SESSION_COOKIE_NAME": self.cookie_name,
            # A neutral max_age is a permanent session's lifetime (every session permanent: SESSION_PERMANENT);
            # None, a browser-session cookie, the lifetime kept as the server's limit (DIFFERENCES["max_age=None"]).
            "SESSION_PERMANENT": o["max_age"] is not None,
            "PERMANENT_SESSION_LIFETIME": TWO_WEEKS if o["max_age"] is None else o["max_age"],
            "SESSION_REFRESH_EACH_REQUEST": False,  # the neutral contract writes only a changed session
            "SESSION_COOKIE_PATH": o["path"],
            "SESSION_COOKIE_DOMAIN": o["domain"],
            "SESSION_COOKIE_SECURE": o["secure"],
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": o["same_site"],
            "SESSION_COOKIE_PARTITIONED": o["partitioned"],
            "BLAKE2SIGN_WEB": section,
        }

    @contextmanager
    def running(self) -> Iterator[Driver]:
        from .flask_app import make_app

        app = make_app(self.flask_config())  # init_app: a configuration error surfaces here, at start-up
        self.client = app.test_client(use_cookies=False)
        yield self

    def _send(
        self, ops: list[list[Any]], cookie_header: str, report: bool
    ) -> tuple[int, dict[str, Any] | None, list[str]]:
        headers = {"Cookie": cookie_header} if cookie_header else {}
        response = self.client.post(
            "/ops", json={"ops": ops, "report": report}, headers=headers, base_url="https://testserver"
        )
        view = response.get_json() if response.mimetype == "application/json" else None
        return response.status_code, view, response.headers.getlist("Set-Cookie")

    def _signer(
        self, secret: str, at: float | None, flags: dict[str, bool], hasher: str | None = None
    ) -> SerializerSigner:
        clock = {} if at is None else {"clock": lambda: at}
        purpose = f"flask.sessions:{self.cookie_name}"
        return SerializerSigner(secret, purpose=purpose, **clock, **self.signer_options(flags, hasher))

    def sign(
        self,
        session: dict[str, Any],
        *,
        ago: float = 0,
        expiry: int | None = None,
        started_ago: float | None = None,
        secret: str = SECRET,
        session_id: bytes | None = None,
        hasher: str | None = None,
        **flags: bool,
    ) -> str:
        at = time.time() - ago
        meta: dict[str, Any] = {}
        expires_in = None
        if expiry is not None:
            meta["e"] = expiry
            expires_in = expiry or None
        if started_ago is not None:
            meta["c"] = int(time.time() - started_ago)
        value: Any = [session, meta] if meta else session
        return self._signer(secret, at, flags, hasher).dumps(value, expires_in=expires_in, session_id=session_id)

    def read_token(self, token: str, *, secret: str = SECRET, hasher: str | None = None, **flags: bool) -> Any:
        return self._signer(secret, None, flags, hasher).load_token(token)

    def incumbent_cookie(self, session: dict[str, Any]) -> str:
        import flask
        from flask.sessions import SecureCookieSessionInterface

        app = flask.Flask(__name__)
        app.config["SECRET_KEY"] = SECRET
        serializer = SecureCookieSessionInterface().get_signing_serializer(app)
        assert serializer is not None
        return str(serializer.dumps(session))

    def spelling(self, option: str) -> str:
        return FLASK_SPELLING[option]


class QuartDriver(FlaskDriver):
    """``blake2sign_web.flask.QuartSessions`` in a Quart app (Flask's configuration), through Quart's test client
    on one event loop of its own for the whole run: the asyncio store's client belongs to the loop it connected on."""

    name = "quart"

    def flask_config(self) -> dict[str, Any]:
        config = super().flask_config()
        section = config["BLAKE2SIGN_WEB"]
        if "REVOCATION" in section:
            from blake2sign_web.flask.quart import RedisStore

            blocking = section["REVOCATION"]
            section["REVOCATION"] = RedisStore(
                self.options["revocation"],
                timeout=blocking.timeout,
                key_prefix=blocking.key_prefix,
                on_unavailable=blocking.on_unavailable,
                user_key=blocking.user_key,
            )
            blocking.close()
        return config

    @contextmanager
    def running(self) -> Iterator[Driver]:
        import asyncio

        from quart.signals import got_request_exception

        from .quart_app import make_app

        self.loop, self.raised = asyncio.new_event_loop(), list[Exception]()
        try:
            app = make_app(self.flask_config())
            self.quart_client: Any = app.test_client(use_cookies=False)
            # Quart's test client answers 500 for what the stack raised: the driver raises it, as Flask's client does.
            got_request_exception.connect(self._raised, app, weak=False)
            yield self
        finally:
            self.loop.close()

    def _raised(self, sender: Any, exception: Exception, **extra: Any) -> None:
        self.raised.append(exception)

    def _send(
        self, ops: list[list[Any]], cookie_header: str, report: bool
    ) -> tuple[int, dict[str, Any] | None, list[str]]:
        headers = {"Cookie": cookie_header} if cookie_header else {}
        body = {"ops": ops, "report": report}
        response: Any = None
        try:
            response = self.loop.run_until_complete(
                self.quart_client.post("/ops", json=body, headers=headers, scheme="https")
            )
        except Exception:  # Quart's debug page, rendering what was raised, can fail outside the request
            if not self.raised:
                raise
        if self.raised:  # the first: what the view or the session raised
            first, self.raised[:] = self.raised[0], []
            raise first
        view = self.loop.run_until_complete(response.get_json()) if response.mimetype == "application/json" else None
        return response.status_code, view, response.headers.getlist("Set-Cookie")


#: How a Flask user writes each fix a message names.
FLASK_SPELLING: Final = {
    "secure": "SESSION_COOKIE_SECURE = True",
    "max_chunks": "BLAKE2SIGN_WEB['MAX_CHUNKS']",
    "typed": "BLAKE2SIGN_WEB['TYPED'] = True",
    "path": 'SESSION_COOKIE_PATH = "/"',
    "domain": "SESSION_COOKIE_DOMAIN = None",
}

#: Every driver, by its parameter id. A third framework adds its driver here.
DRIVERS: Final[dict[str, type[Driver]]] = {
    "starlette": StarletteDriver,
    "django-ours": DjangoOurMiddleware,
    "django-own": DjangoOwnMiddleware,
    "flask": FlaskDriver,
    "quart": QuartDriver,
}
