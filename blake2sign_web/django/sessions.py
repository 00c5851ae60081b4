"""Signed-cookie sessions on keyed BLAKE: ``SESSION_ENGINE = "blake2sign_web.django.sessions"``.

Like Django's ``signed_cookies`` backend, the session key *is* the data: a signed,
dated token of the session's JSON, kept by the browser. Unlike it:

- one signer per process and configuration (Django's builds one per call);
- a per-session expiry (``set_expiry``) is signed into the token and enforced here
  (Django's ignores it, ticket #19201); sessions without one last
  ``SESSION_COOKIE_AGE`` seconds from their last save;
- a session whose cookie the browser would drop is never sent silently: by default
  ``SessionTooLarge`` is raised, or with ``"OVERSIZE": "log"`` an error is logged and
  the client keeps its previous cookie;
- with ``"ACCEPT_DJANGO_SIGNED_COOKIES": True``, cookies of Django's ``signed_cookies``
  engine are accepted once and re-issued in this format.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from django.contrib.sessions.backends.base import SessionBase
from django.core import signing
from django.utils import timezone

from ..exceptions import BadSignature, SignatureExpired
from .conf import session_config

__all__ = ["SessionStore", "SessionTooLarge"]

#: Django's logger for session cookies that fail verification (its convention, its name).
suspicious_logger: Final = logging.getLogger("django.security.SuspiciousSession")
logger: Final = logging.getLogger(__name__)
#: The salt of Django's signed_cookies engine, for migration.
DJANGO_SIGNED_COOKIES_SALT: Final = "django.contrib.sessions.backends.signed_cookies"


class SessionTooLarge(ValueError):
    """The session's cookie would exceed the browser limit, so the browser would drop it."""


class SessionStore(SessionBase):
    #: True after save() met an oversized session under ``"OVERSIZE": "log"``: no new cookie.
    oversized = False
    #: The client's cookie when it verified: what ``"OVERSIZE": "log"`` leaves in place.
    _verified_cookie: str | None = None
    # SessionBase's lazily loaded data (absent until loaded, so only annotated here).
    _session_cache: dict[str, Any]
    if TYPE_CHECKING:
        _session: dict[str, Any]

    def load(self) -> dict[str, Any]:
        """Verify and read the cookie; a bad one gives an empty session and a warning, never an error."""
        config = session_config()
        token = self.session_key
        assert token is not None  # SessionBase only loads when there is a key
        try:
            value, issued_at, expires_at, used_fallback = config.signer.load_token(token)
            age = self.get_session_cookie_age()
            if expires_at is None and time.time() - issued_at > age:
                raise SignatureExpired("session is older than SESSION_COOKIE_AGE", expired_at=issued_at + age)
            if not isinstance(value, dict):
                raise BadSignature("session is not a JSON object")
        except BadSignature as error:
            migrated = self._load_django_signed_cookie(token) if config.accept_django_signed_cookies else None
            if migrated is not None:
                return migrated
            suspicious_logger.warning("Session cookie rejected: %s.", _reason(error))
            # Forget the key: the middleware then deletes the bad cookie.
            self._session_key = None
            return {}
        self._verified_cookie = token
        if used_fallback:
            self.modified = True  # verified by a SECRET_KEY_FALLBACKS key: re-sign with SECRET_KEY
        return value

    async def aload(self) -> dict[str, Any]:
        return self.load()

    def _load_django_signed_cookie(self, token: str) -> dict[str, Any] | None:
        """Read a cookie of Django's signed_cookies engine and mark it for re-issue in this format."""
        if ":" not in token:  # Django's tokens are "payload:timestamp:signature"; ours have no colon
            return None
        try:
            value = signing.loads(
                token,
                salt=DJANGO_SIGNED_COOKIES_SALT,
                serializer=self.serializer,
                max_age=self.get_session_cookie_age(),
            )
        except Exception:  # BadSignature, or whatever the serializer raises
            return None
        if not isinstance(value, dict):
            return None
        self.modified = True
        return value

    def create(self) -> None:
        """No store to create a key in: mark the session so the middleware sends a cookie."""
        self.modified = True

    async def acreate(self) -> None:
        self.create()

    def save(self, must_create: bool = False) -> None:
        """Sign the session into its key; SessionTooLarge (or a logged error) if the browser would drop it."""
        config = session_config()
        self.oversized = False
        try:
            token = config.signer.dumps(self._session, expires_in=self._expires_in())
        except ValueError as error:  # over max_token_length or MAX_DECOMPRESSED_SIZE
            self._too_large(config.cookie_size_limit, f"the session cannot be signed within the limits: {error}")
            return
        size = len(config.cookie_name) + len(token) + config.cookie_overhead
        if size > config.cookie_size_limit:
            self._too_large(config.cookie_size_limit, f"its Set-Cookie would take {size} bytes")
            return
        self._session_key = token
        self.modified = True

    async def asave(self, must_create: bool = False) -> None:
        self.save(must_create=must_create)

    def _expires_in(self) -> int | None:
        """Seconds the token lives by set_expiry(); None for the global policy and browser-close."""
        expiry = self._session.get("_session_expiry")
        if not expiry:  # None: SESSION_COOKIE_AGE; 0: browser close, server-side SESSION_COOKIE_AGE
            return None
        if isinstance(expiry, str):
            expiry = datetime.fromisoformat(expiry)
        if isinstance(expiry, datetime):
            expiry = (expiry - timezone.now()).total_seconds()
        # A past expiry still needs a valid token: it lives one second and the cookie's Max-Age is <= 0.
        return max(1, int(expiry))

    def _too_large(self, limit: int, detail: str) -> None:
        config = session_config()
        message = (
            f"Session for cookie {config.cookie_name!r} is too large for browsers: {detail}, over the limit of "
            f"{limit} bytes. Store less in the session (keep large data server-side, keyed by the user)."
        )
        if config.raise_on_oversize:
            raise SessionTooLarge(message)
        logger.error("%s The client keeps its previous session cookie.", message)
        self.oversized = True
        if self._verified_cookie is not None:
            self._session_key = self._verified_cookie
        else:
            # Django's own middleware writes *some* value: an empty session, not the string "None".
            self._session_key = config.signer.dumps({})

    def exists(self, session_key: str | None = None) -> bool:
        """A key that is the data never collides with another session."""
        return False

    async def aexists(self, session_key: str | None = None) -> bool:
        return False

    def delete(self, session_key: str | None = None) -> None:
        """Empty the session; the middleware then deletes the cookie."""
        self._session_key = ""
        self._session_cache = {}
        self.modified = True

    async def adelete(self, session_key: str | None = None) -> None:
        self.delete(session_key)

    def cycle_key(self) -> None:
        """A new key is a new token of the same data: sign it now, as Django's signed_cookies does."""
        self.save()

    async def acycle_key(self) -> None:
        self.cycle_key()

    @classmethod
    def clear_expired(cls) -> None:
        """Nothing stored server-side: expired cookies are refused when they arrive."""

    @classmethod
    async def aclear_expired(cls) -> None:
        pass


def _reason(error: BadSignature) -> str:
    """Why a cookie was refused, from the core's messages, which never quote the token."""
    if isinstance(error, SignatureExpired):
        return f"expired at {error.expired_at_datetime.isoformat()}"
    return str(error).rstrip(".")
