"""Signed links in Django: ``sign_url``, the ``signed_url_required`` view decorator, and the core's decisions
(``links.requests``, ``links.targets``: every status and header, the same in Starlette) as Django's responses:
a 403 is PermissionDenied, so the site's 403 page renders. Options: ``BLAKE2SIGN_WEB["SIGNED_URLS"]``
(``links.options``); keys from SECRET_KEY under their own purpose. Guide: docs/signed-urls.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Final, TypeVar, overload

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.wsgi import WSGIRequest
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.csrf import CsrfViewMiddleware, get_token
from django.urls import get_script_prefix
from django.utils.encoding import escape_uri_path, iri_to_uri
from django.utils.http import escape_leading_slashes
from django.utils.module_loading import import_string

from ..links import confirmation
from ..links import grants as link_cookies
from ..links import guard as link_guard
from ..links import options as link_options
from ..links import requests as link_requests
from ..links import targets as link_targets
from ..links.guard import LinkGuard
from ..links.requests import Refusal
from ..links.signer import Bound, ConsumeOn, Disposition, URLSigner, VerifiedLink
from . import revocation
from .conf import link_settings
from .cookies import request_cookies

SETTING: Final = "BLAKE2SIGN_WEB"
SECTION: Final = "SIGNED_URLS"
#: The keys of ``BLAKE2SIGN_WEB["SIGNED_URLS"]`` and their defaults (``links.options``).
DEFAULTS: Final = link_options.DEFAULTS

V = TypeVar("V", bound=Callable[..., Any])
BindFunction = Callable[[HttpRequest], Bound | None]
ClientFunction = Callable[[HttpRequest], str]
#: Renders the confirmation page of a ``consume_on="post"`` link: (request, verified link) -> response.
ConfirmFunction = Callable[[HttpRequest, VerifiedLink], HttpResponse]


def default_client(request: HttpRequest) -> str:
    """The client's address and User-Agent: who may continue a single-use download. Behind a proxy REMOTE_ADDR is
    the proxy's unless the server sets it (uvicorn's --forwarded-allow-ips); else set SINGLE_USE_CLIENT."""
    return link_requests.client_identity(request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_USER_AGENT", ""))


_guard: LinkGuard | None = None


def get_signer() -> URLSigner:
    """The URLSigner for the current settings, built once (and again after a settings change)."""
    return _link_guard().signer


def _link_guard() -> LinkGuard:
    """The settings' signer and link options (``links.guard``), built once (and again after a settings change)."""
    global _guard
    guard = _guard
    if guard is None:
        config = link_settings(default_client)
        fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", ())
        try:
            _guard = guard = LinkGuard.from_settings(config, settings.SECRET_KEY, fallbacks)
        except (TypeError, ValueError) as error:
            raise ImproperlyConfigured(f"{SETTING}[{SECTION!r}] or SECRET_KEY: {error}") from None
    return guard


def _reset(*, setting: str, **kwargs: Any) -> None:
    global _guard
    if setting in (SETTING, "SECRET_KEY", "SECRET_KEY_FALLBACKS"):
        _guard = None


setting_changed.connect(_reset, dispatch_uid="blake2sign_web.signed_urls.reset")


def _check_store(function: str, single_use: bool, group: str | None) -> None:
    """ImproperlyConfigured when ``function`` signs a single-use or grouped link and no store can check it."""
    if (single_use or group is not None) and _link_guard().store is None:
        asked = "single_use=True" if single_use else "group=..."
        raise ImproperlyConfigured(
            f"{function}({asked}) needs {SETTING}[{SECTION!r}]['SINGLE_USE_CACHE']: the alias of a cache "
            "shared by every process (RedisCache), where each link is marked used and link groups are revoked."
        )


def sign_url(
    url_or_path: str,
    *,
    expires_in: int | float | timedelta | None = None,
    bind: Bound | None = None,
    request: HttpRequest | None = None,
    single_use: bool = False,
    consume_on: ConsumeOn | None = None,
    filename: str | None = None,
    disposition: Disposition | None = None,
    expires_at: int | datetime | None = None,
    starts: int | datetime | None = None,
    group: str | None = None,
) -> str:
    """Sign a path (``reverse(...)``) or absolute URL (the options: ``URLSigner.sign``); with ``request``, a path
    becomes absolute first, on ``request.get_host()`` (checked against ``ALLOWED_HOSTS``): with ``BIND_HOST`` a
    path needs it. ``single_use=True`` and ``group=`` need ``SINGLE_USE_CACHE``."""
    signer = get_signer()
    _check_store("sign_url", single_use, group)
    if request is not None and url_or_path.startswith("/"):
        url_or_path = request.build_absolute_uri(url_or_path)
    return signer.sign(
        url_or_path,
        expires_in=expires_in,
        expires_at=expires_at,
        starts=starts,
        bind=bind,
        single_use=single_use,
        consume_on=consume_on,
        filename=filename,
        disposition=disposition,
        group=group,
    )


def grant_cookie(
    response: HttpResponseBase,
    request: HttpRequest,
    prefix: str,
    *,
    expires_in: int | float | timedelta | None = None,
    expires_at: int | datetime | None = None,
    starts: int | datetime | None = None,
    bind: Bound | None = None,
    group: str | None = None,
    secure: bool | None = None,
    samesite: link_cookies.SameSite = "Lax",
    httponly: bool = True,
    domain: str | None = None,
) -> link_cookies.GrantCookie:
    """Set on ``response`` the cookie that lets this browser GET every file under the folder ``prefix`` (a path
    ending with "/") without a signature in its URL, as ``sign_prefix`` would sign it (an expiry is required);
    ``secure``: default ``request.is_secure()``."""
    _check_store("grant_cookie", False, group)
    guard = _link_guard()
    origin = f"{request.scheme}://{request.get_host()}" if guard.signer.bind_host else ""
    cookie = link_cookies.grant(
        guard.signer,
        prefix,
        secure=request.is_secure() if secure is None else secure,
        origin=origin,
        expires_in=expires_in,
        expires_at=expires_at,
        starts=starts,
        bind=bind,
        group=group,
        same_site=samesite,
        http_only=httponly,
        domain=domain,
    )
    response.set_cookie(cookie.name, cookie.value, **cookie.set_cookie_arguments)
    return cookie


def verify_request(
    request: HttpRequest, *, bind: BindFunction | None = None, confirm: ConfirmFunction | None = None
) -> HttpResponse | None:
    """None when the request's URL is correctly signed; otherwise the response to send (or PermissionDenied).
    A single-use link is used up, a grouped one checked, in SINGLE_USE_CACHE (a blocking cache call)."""
    link = admit(request, bind=bind, confirm=confirm)
    if not isinstance(link, VerifiedLink) or not link_requests.needs_store(link):
        return None if isinstance(link, VerifiedLink) else link
    return consume_single_use(request, link)


async def averify_request(
    request: HttpRequest, *, bind: BindFunction | None = None, confirm: ConfirmFunction | None = None
) -> HttpResponse | None:
    """``verify_request`` for async views: the cache call of a single-use or grouped link runs in a thread."""
    link = admit(request, bind=bind, confirm=confirm)
    if not isinstance(link, VerifiedLink) or not link_requests.needs_store(link):
        return None if isinstance(link, VerifiedLink) else link
    return await sync_to_async(consume_single_use)(request, link)


def admit(
    request: HttpRequest,
    *,
    bind: BindFunction | None = None,
    confirm: ConfirmFunction | None = None,
    serves_file: bool = False,
) -> VerifiedLink | HttpResponse:
    """The verified link (as ``request.signed_link``; ``request.signed_by_cookie``: a grant cookie gave it), or the
    response that stands in for the view (PermissionDenied for a bad link); nothing is used up here."""
    guard, bound = _link_guard(), None if bind is None else bind(request)
    url = request_url(request, bind_host=guard.signer.bind_host)
    method = request.method or "GET"
    grant = guard.grant(url, method, lambda: request_cookies(request))  # read only without a signature in the URL
    outcome = guard.check(url, bound, request.path, method, serves_file, grant)
    if type(outcome) is VerifiedLink:
        request.signed_link = outcome  # type: ignore[attr-defined]
        if grant is not None:
            request.signed_by_cookie = True  # type: ignore[attr-defined]
        return outcome
    if isinstance(outcome, link_requests.Confirmation):
        request.signed_link = outcome.link  # type: ignore[attr-defined]
        return confirmation_response(request, outcome.link, confirm)
    return refusal_response(outcome)  # type: ignore[arg-type]


def privately(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """``response``, made private when the request was admitted by a grant cookie (``links.grants.private``)."""
    if getattr(request, "signed_by_cookie", False):
        cache_control, vary = link_cookies.private(response.headers.get("Cache-Control"), response.headers.get("Vary"))
        response.headers["Cache-Control"], response.headers["Vary"] = cache_control, vary
    return response


def refusal_response(refusal: Refusal) -> HttpResponse:
    """Django's answer to a refusal: a 403 is PermissionDenied (the site's 403 page renders), else plain text."""
    if refusal.status == 403:
        raise PermissionDenied(refusal.message)
    return HttpResponse(
        refusal.message, status=refusal.status, content_type="text/plain; charset=utf-8", headers=refusal.headers
    )


def confirmation_response(
    request: HttpRequest, link: VerifiedLink, confirm: ConfirmFunction | None = None
) -> HttpResponse:
    """The page in front of a ``consume_on="post"`` link: the built-in one (with Django's CSRF token when
    CsrfViewMiddleware is installed), or ``confirm``'s (its form needs ``{% csrf_token %}``), made unframeable."""
    if confirm is not None:
        return confirmation.secured(confirm(request, link))
    fields = {} if _csrf_middleware(_middleware()) is None else {"csrfmiddlewaretoken": get_token(request)}
    body, headers = confirmation.built_in(fields)
    return HttpResponse(body, headers=headers)


def csrf_refusal(request: HttpRequest) -> HttpResponse | None:
    """The installed CsrfViewMiddleware's check of a confirmation's POST (CSRF_TRUSTED_ORIGINS apply), even in a
    ``csrf_exempt`` view: None, or the 403 to send (docs/signed-urls.md, "Why the confirmation's POST is
    CSRF-checked")."""
    middleware = _csrf_middleware(_middleware())
    if middleware is None:
        return None
    return middleware(_never_called).process_view(request, _never_called, (), {})


def _middleware() -> tuple[str, ...]:
    return tuple(getattr(settings, "MIDDLEWARE", None) or ())


def _never_called(request: HttpRequest) -> HttpResponse:
    """The middleware's next handler and the view ``csrf_refusal`` checks for (one that is not exempt)."""
    raise AssertionError("only process_view is called")  # pragma: no cover


@functools.lru_cache(maxsize=8)
def _csrf_middleware(middleware: tuple[str, ...]) -> type[CsrfViewMiddleware] | None:
    """The installed CsrfViewMiddleware (or subclass), or None."""
    for dotted in middleware:
        try:
            found = import_string(dotted)
        except ImportError:
            continue
        if isinstance(found, type) and issubclass(found, CsrfViewMiddleware):
            return found
    return None


def consume_single_use(
    request: HttpRequest, link: VerifiedLink, terms: link_requests.Consumption = link_guard.NO_TERMS
) -> HttpResponse | None:
    """Use up a single-use link, or check a grouped one: None when this request may have it, else the response
    (410/403/503). ``terms``: a file's link, as ``links.requests.consumption`` gives them."""
    if link.consume_on == "post":  # the confirmation's POST: a cross-site form must not use the link up
        refused = csrf_refusal(request)
        if refused is not None:
            return refused
    guard = _link_guard()
    alias: str | None = guard.store
    consume = check = None
    if alias is not None:
        cache = revocation.get_cache(alias)
        consume, check = (
            functools.partial(revocation.consume_link, cache),
            functools.partial(revocation.check_link, cache),
        )
    refusal = guard.use(link, request.path, consume, request, terms=terms, check=check)
    return None if refusal is None else refusal_response(refusal)


def request_query(request: HttpRequest) -> str:
    """The query as the view reads it (``request.GET``: under WSGI, raw bytes decoded as Django decodes them), in
    URI form: what a link verifies, and what a playlist served by a folder link passes on."""
    query = request.META.get("QUERY_STRING", "")
    if isinstance(request, WSGIRequest):
        query = link_targets.wsgi_query(query, request.encoding or settings.DEFAULT_CHARSET)
    uri: str = iri_to_uri(query)
    return uri


def request_url(request: HttpRequest, *, bind_host: bool = False) -> str:
    """The path and query to verify, as the view reads them (``links.targets``), after ``scheme://host`` with
    ``BIND_HOST``."""
    query = request_query(request)
    # The path as reverse() writes the arguments the view receives: Django routes on the decoded path,
    # so a "%2F" that reverse() did not write does not verify; reverse() escapes a leading "//" as "/%2F".
    path = escape_leading_slashes(escape_uri_path(client_path(request)))
    origin = (request.scheme or "http", request.get_host()) if bind_host else None
    return link_requests.request_target(path, query, origin)


def client_path(request: HttpRequest) -> str:
    """The decoded path with the script prefix ``reverse()`` writes into links, put back under ASGI if a proxy took
    it off (``links.targets.script_path``): the handler's, from FORCE_SCRIPT_NAME or root_path (not Django 4.2's
    META["SCRIPT_NAME"], root_path alone)."""
    asgi = isinstance(request, ASGIRequest)
    return link_targets.script_path(request.path, request.path_info, get_script_prefix(), asgi=asgi)


@overload
def signed_url_required(view: V, /) -> V: ...


@overload
def signed_url_required(
    *, bind: BindFunction | None = None, confirm: ConfirmFunction | None = None
) -> Callable[[V], V]: ...


def signed_url_required(
    view: V | None = None, /, *, bind: BindFunction | None = None, confirm: ConfirmFunction | None = None
) -> V | Callable[[V], V]:
    """Let through only requests whose URL carries a valid, unexpired signature: ``@signed_url_required`` or
    ``@signed_url_required(bind=lambda r: r.user.pk)`` on function views (sync or async),
    ``method_decorator(..., name="dispatch")`` on class-based views. ``confirm``: (request, link) -> the page of a
    ``consume_on="post"`` link, which POSTs to the same URL (``csrf_refusal``)."""

    def decorate(view: V) -> V:
        async def checked_async(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            refused = await averify_request(request, bind=bind, confirm=confirm)
            return privately(request, refused if refused is not None else await view(request, *args, **kwargs))

        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            refused = verify_request(request, bind=bind, confirm=confirm)
            return privately(request, refused if refused is not None else view(request, *args, **kwargs))

        if iscoroutinefunction(view):
            wrapper: Callable[..., Any] = markcoroutinefunction(checked_async)
        elif _dispatches_async(view):
            # The sync dispatch() of an async class-based view: Django awaits what it returns,
            # so a refusal must be awaitable too (a bare HttpResponse there is a 500).
            wrapper = checked_async
        else:
            wrapper = checked
        return functools.wraps(view)(wrapper)  # type: ignore[return-value]

    return decorate if view is None else decorate(view)


def _dispatches_async(view: Callable[..., Any]) -> bool:
    """Whether ``view`` is ``dispatch`` of an async class-based view: method_decorator passes
    ``partial(dispatch bound to the view instance)``, whose ``view_is_async`` says."""
    bound = getattr(view, "func", None)
    instance = getattr(bound, "__self__", None)
    return bool(getattr(instance, "view_is_async", False))
