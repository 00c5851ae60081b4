"""Signed links in Django: ``sign_url`` and the ``signed_url_required`` view decorator.

Keys come from SECRET_KEY (SECRET_KEY_FALLBACKS verify during rotation) under their
own purpose; options come from ``settings.BLAKE2SIGN_WEB["SIGNED_URLS"]``::

    BLAKE2SIGN_WEB = {
        "SIGNED_URLS": {
            "PURPOSE": "blake2sign_web.signed_urls",  # separate keys per use if you need them
            "HASHER": "blake2b",                      # or "blake2s", "blake3"
            "SIGNATURE_PARAM": "signature",
            "EXPIRES_PARAM": "expires",
            "IGNORED_PARAMS": (),                     # e.g. ("utm_*", "fbclid")
            "BIND_HOST": False,                       # True: links only work on the host they name
            "EXPIRED_STATUS": 410,                    # or 403 to hide that a link once worked
        },
    }

Answers: 403 (PermissionDenied, so the site's 403 page renders) for a missing,
malformed or wrong signature; ``EXPIRED_STATUS`` (410 Gone by default) for a link
whose signature is right but whose time has passed, so the page can say "ask for a
new link" instead of "forbidden".
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, Final, TypeVar, overload

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.core.handlers.wsgi import WSGIRequest
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.utils.encoding import escape_uri_path, iri_to_uri
from django.utils.http import escape_leading_slashes

from ..exceptions import BadSignature, SignatureExpired
from ..keys import HASHERS
from ..urls import Bound, URLSigner, get_url_signer

logger = logging.getLogger("blake2sign_web.signed_urls")

SETTING: Final = "BLAKE2SIGN_WEB"
SECTION: Final = "SIGNED_URLS"
#: At most this many characters of a refused path are logged (escaped with repr).
LOGGED_PATH_LENGTH: Final = 200
DEFAULTS: Final[Mapping[str, Any]] = {
    "PURPOSE": "blake2sign_web.signed_urls",
    "HASHER": "blake2b",
    "SIGNATURE_PARAM": "signature",
    "EXPIRES_PARAM": "expires",
    "IGNORED_PARAMS": (),
    "BIND_HOST": False,
    "EXPIRED_STATUS": 410,
}

V = TypeVar("V", bound=Callable[..., Any])
BindFunction = Callable[[HttpRequest], Bound | None]

_signer: URLSigner | None = None
_expired_status = 410


def options() -> dict[str, Any]:
    """The SIGNED_URLS options with defaults filled in; ImproperlyConfigured names any bad key."""
    raw = getattr(settings, SETTING, {})
    section = raw.get(SECTION, {}) if isinstance(raw, Mapping) else {}
    name = f"{SETTING}[{SECTION!r}]"
    if not isinstance(section, Mapping):
        raise ImproperlyConfigured(f"{name} must be a dict, not {type(section).__name__}.")
    unknown = [key for key in section if key not in DEFAULTS]
    if unknown:
        raise ImproperlyConfigured(f"{name} has unknown keys {unknown}; the known keys are {', '.join(DEFAULTS)}.")
    result = {**DEFAULTS, **section}
    if result["HASHER"] not in HASHERS:
        raise ImproperlyConfigured(f"{name}['HASHER'] must be one of {', '.join(HASHERS)}; got {result['HASHER']!r}.")
    if result["EXPIRED_STATUS"] not in (403, 410):
        raise ImproperlyConfigured(f"{name}['EXPIRED_STATUS'] must be 410 or 403; got {result['EXPIRED_STATUS']!r}.")
    if isinstance(result["IGNORED_PARAMS"], str):
        raise ImproperlyConfigured(f"{name}['IGNORED_PARAMS'] must be a tuple of names or patterns like 'utm_*'.")
    return result


def get_signer() -> URLSigner:
    """The URLSigner for the current settings, built once (and again after a settings change)."""
    global _signer, _expired_status
    signer = _signer
    if signer is None:
        config = options()
        try:
            signer = get_url_signer(
                settings.SECRET_KEY,
                purpose=config["PURPOSE"],
                fallbacks=_fallbacks(),
                hasher=config["HASHER"],
                signature_param=config["SIGNATURE_PARAM"],
                expires_param=config["EXPIRES_PARAM"],
                ignore=tuple(config["IGNORED_PARAMS"]),
                bind_host=config["BIND_HOST"],
            )
        except (TypeError, ValueError) as error:
            raise ImproperlyConfigured(f"{SETTING}[{SECTION!r}] or SECRET_KEY: {error}") from None
        _expired_status = config["EXPIRED_STATUS"]
        _signer = signer
    return signer


def _fallbacks() -> Any:
    """SECRET_KEY_FALLBACKS as the cache needs it: a list becomes a tuple; a str is passed on for the core to refuse.

    ``tuple("old")`` would make every character a secret (so a one-character key forges links).
    """
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
    return tuple(fallbacks) if isinstance(fallbacks, (list, tuple)) else fallbacks


def _reset(*, setting: str, **kwargs: Any) -> None:
    global _signer
    if setting in (SETTING, "SECRET_KEY", "SECRET_KEY_FALLBACKS"):
        _signer = None


setting_changed.connect(_reset, dispatch_uid="blake2sign_web.signed_urls.reset")


def sign_url(
    url_or_path: str,
    *,
    expires_in: int | float | timedelta | None = None,
    bind: Bound | None = None,
    request: HttpRequest | None = None,
) -> str:
    """Sign a path (``reverse(...)``) or absolute URL; with ``request``, a path becomes absolute first.

    With ``BIND_HOST`` a path needs ``request`` (or an absolute URL) to know the host.
    """
    if request is not None and url_or_path.startswith("/"):
        url_or_path = request.build_absolute_uri(url_or_path)
    return get_signer().sign(url_or_path, expires_in=expires_in, bind=bind)


def verify_request(request: HttpRequest, *, bind: BindFunction | None = None) -> HttpResponse | None:
    """None when the request's URL is correctly signed; otherwise the response to send (or PermissionDenied)."""
    signer = get_signer()
    url = request_url(request)
    if signer.bind_host:
        url = f"{request.scheme}://{request.get_host()}{url}"
    # Logged with repr: the decoded path may hold CR, LF, ESC or U+2028 that would forge log lines.
    logged_path = request.path[:LOGGED_PATH_LENGTH]
    try:
        signer.verify(url, bind=None if bind is None else bind(request))
    except SignatureExpired:
        logger.info("expired signed URL for %r", logged_path)
        if _expired_status == 410:
            return HttpResponse("This link has expired.", status=410, content_type="text/plain; charset=utf-8")
        raise PermissionDenied("This link has expired.") from None
    except BadSignature as error:
        # The reason, not the URL: its query holds the signature.
        logger.warning("rejected signed URL for %r: %s", logged_path, error)
        raise PermissionDenied("This link is not valid.") from None
    return None


def request_url(request: HttpRequest) -> str:
    """The path and query to verify: the query as ``request.GET`` will read it, not as WSGI spells it.

    Under WSGI, QUERY_STRING holds the raw bytes decoded as latin-1, and
    ``get_full_path()`` would percent-encode those latin-1 characters, while
    ``request.GET`` decodes the bytes as UTF-8: raw ``q=\xc3\xa9`` would be checked as
    ``q=Ã©`` and read as ``q=é``. The bytes are decoded here as QueryDict decodes them,
    so the signature covers the text the view sees. The path likewise: a link whose path
    holds a ``%2F`` that ``reverse()`` did not write (``/a%2Fb``) does not verify, because
    the view would see ``/a/b``, which is another path to the signer.
    """
    query = request.META.get("QUERY_STRING", "")
    if isinstance(request, WSGIRequest) and not query.isascii():
        raw = query.encode("iso-8859-1")
        try:
            query = raw.decode(request.encoding or settings.DEFAULT_CHARSET)
        except UnicodeDecodeError:
            query = raw.decode("iso-8859-1")  # QueryDict's own fallback
    # The path as reverse() writes the arguments the view receives: Django routes on the
    # decoded path, and reverse() escapes a leading "//" as "/%2F" (escape_leading_slashes).
    path = escape_leading_slashes(escape_uri_path(request.path))
    return f"{path}?{iri_to_uri(query)}" if query else path


@overload
def signed_url_required(view: V, /) -> V: ...


@overload
def signed_url_required(*, bind: BindFunction | None = None) -> Callable[[V], V]: ...


def signed_url_required(view: V | None = None, /, *, bind: BindFunction | None = None) -> V | Callable[[V], V]:
    """Let through only requests whose URL carries a valid, unexpired signature.

    Use as ``@signed_url_required`` or ``@signed_url_required(bind=lambda r: r.user.pk)``
    on function views (sync or async), or with ``method_decorator(..., name="dispatch")``
    on class-based views. 403 for a bad signature, 410 (EXPIRED_STATUS) for an expired one.
    """

    def decorate(view: V) -> V:
        if iscoroutinefunction(view):

            async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                refused = verify_request(request, bind=bind)
                return refused if refused is not None else await view(request, *args, **kwargs)

            wrapper: Callable[..., Any] = markcoroutinefunction(async_wrapper)
        else:

            def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                refused = verify_request(request, bind=bind)
                return refused if refused is not None else view(request, *args, **kwargs)

        return functools.wraps(view)(wrapper)  # type: ignore[return-value]

    return decorate if view is None else decorate(view)
