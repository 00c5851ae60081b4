"""Signed links in Flask: Werkzeug requests and responses around the core's decisions (docs/flask.md)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple, NoReturn, TypeVar, cast
from urllib.parse import quote, urlsplit

import flask
from werkzeug.exceptions import abort
from werkzeug.wrappers import Response
from werkzeug.wsgi import wrap_file

from ..links import confirmation, files
from ..links import files as file_readers
from ..links import grants as link_cookies
from ..links import guard as link_guard
from ..links import requests as link_requests
from ..links import targets as link_targets
from ..links.signer import Bound, ConsumeOn, Disposition, URLSigner, VerifiedLink
from ..links.stored_files import open_local
from ..links.text import PATH_SAFE

View = TypeVar("View", bound=Callable[..., Any])
BindFunction = Callable[[flask.Request], Bound | None]
#: Renders the confirmation page of a ``consume_on="post"`` link: (request, verified link) -> response.
ConfirmFunction = Callable[[flask.Request, VerifiedLink], Response]
Times = int | float | timedelta | None


def sign_url(
    signer: URLSigner, endpoint: str, /, *, base_url: str | None = None, expires_in: Times = None,
    expires_at: int | datetime | None = None, starts: int | datetime | None = None, bind: Bound | None = None,
    single_use: bool = False, consume_on: ConsumeOn | None = None, download_as: str | None = None,
    disposition: Disposition | None = None, group: str | None = None, **values: Any,
) -> str:  # fmt: skip
    """Sign a link to ``endpoint`` (``url_for`` with ``values``): relative, or absolute on ``base_url`` (your
    public URL with any path prefix, for links that leave the request: never the ``Host`` a client sent; it
    needs no request, nor SERVER_NAME: ``public_url``). ``download_as``: the signed ``filename``."""
    base = link_targets.public_base(
        base_url, bind_host=signer.bind_host, function="sign_url", own_host="request.url_root"
    )
    url = flask.url_for(endpoint, **values) if base is None else public_url(base, endpoint, values)
    options = {"expires_in": expires_in, "expires_at": expires_at, "starts": starts, "bind": bind, "group": group}
    return signer.sign(
        url, single_use=single_use, consume_on=consume_on, filename=download_as, disposition=disposition,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip


def public_url(base: str, endpoint: str, values: dict[str, Any]) -> str:
    """``url_for(endpoint, **values)`` on ``base``, the public URL, whose path is the prefix. Built on the app's
    URL map: a mail job has no request, and maybe no SERVER_NAME."""
    if not {"_external", "_scheme", "_anchor"}.isdisjoint(values):
        raise TypeError("sign_url(..., base_url=...) takes no _external, _scheme or _anchor: base_url is the link's")
    app = flask.current_app
    if endpoint.startswith("."):  # relative to the request's blueprint, as url_for reads it
        blueprint = flask.request.blueprint if flask.has_request_context() else None
        endpoint = f"{blueprint}{endpoint}" if blueprint else endpoint[1:]
    method = values.pop("_method", None)
    app.inject_url_defaults(endpoint, values)
    parts = urlsplit(base)
    adapter = app.url_map.bind(parts.netloc, script_name=parts.path or "/", url_scheme=parts.scheme)
    url = adapter.build(endpoint, values, method=method)
    # A rule of another host or subdomain comes back absolute; any other keeps the base's scheme and host as given.
    return f"{parts.scheme}://{parts.netloc}{url}" if url.startswith("/") else url


def grant_cookie(
    response: Response, signer: URLSigner, prefix: str, /, *, expires_in: Times = None,
    expires_at: int | datetime | None = None, starts: int | datetime | None = None, bind: Bound | None = None,
    group: str | None = None, secure: bool | None = None, samesite: link_cookies.SameSite = "Lax",
    httponly: bool = True, domain: str | None = None,
) -> link_cookies.GrantCookie:  # fmt: skip
    """Set on ``response`` the cookie that lets this browser GET every file under the folder ``prefix`` without a
    signature in its URL (``links.grants.grant``: an expiry required). ``samesite``, ``httponly``: spelt as
    Werkzeug's ``set_cookie``; ``secure``: default, whether the request came over https."""
    request = flask.request
    cookie = link_cookies.grant(
        signer, prefix, secure=request.scheme == "https" if secure is None else secure,
        origin=f"{request.scheme}://{request.host}" if signer.bind_host else "", expires_in=expires_in,
        expires_at=expires_at, starts=starts, bind=bind, group=group, same_site=samesite, http_only=httponly,
        domain=domain,
    )  # fmt: skip
    response.set_cookie(
        cookie.name, cookie.value, max_age=cookie.max_age, path=cookie.path, domain=cookie.domain,
        secure=cookie.secure, httponly=cookie.http_only, samesite=cookie.same_site,
    )  # fmt: skip
    return cookie


def default_client(request: flask.Request) -> str:
    """The client's address and User-Agent. Behind a proxy, use Werkzeug's ProxyFix so the address is real."""
    return link_requests.client_identity(request.remote_addr or "", request.headers.get("User-Agent", ""))


def request_url(request: flask.Request, signer: URLSigner) -> str | None:
    """The path and query a link is verified as; None for a query that is not UTF-8."""
    query = link_targets.werkzeug_query(request.environ.get("QUERY_STRING", ""))
    if query is None:
        return None
    path = quote(request.script_root + request.path, safe=PATH_SAFE, errors="surrogateescape")
    origin = (request.scheme, request.host) if signer.bind_host else None
    return link_requests.request_target(path, query, origin)


def _refuse(refusal: link_requests.Refusal) -> NoReturn:
    """Answer with the refusal (private, as every answer to a request a grant cookie admitted)."""
    abort(privately(Response(refusal.message, refusal.status, refusal.headers, mimetype="text/plain")))


class _Guard(NamedTuple):
    """The options of ``signed_url_required`` and ``SignedFiles``: the core's ``LinkGuard``, checked at start-up."""

    links: link_guard.LinkGuard
    bind: BindFunction | None
    confirm: ConfirmFunction | None

    @classmethod
    def of(cls, signer: URLSigner, bind: Any, expired_status: Any, store: Any, client: Any, confirm: Any) -> _Guard:
        return cls(link_guard.LinkGuard.for_store(signer, expired_status, store, client, "flask"), bind, confirm)

    def admit(self, serves_file: bool) -> VerifiedLink:
        """The verified link, also ``flask.g.signed_link`` (``g.signed_by_cookie``: a grant cookie gave it); else
        the request is answered (``abort``) with its refusal or the confirmation page."""
        request, links = flask.request, self.links
        url, method, path = request_url(request, links.signer), request.method, request.script_root + request.path
        grant = links.grant(url, method, lambda: request.cookies)
        bound = None if self.bind is None else self.bind(request)
        outcome = links.check(url, bound, path, method, serves_file, grant)
        if isinstance(outcome, link_requests.Refusal):
            _refuse(outcome)
        flask.g.signed_link, flask.g.signed_by_cookie = getattr(outcome, "link", outcome), grant is not None
        if isinstance(outcome, link_requests.Confirmation):
            if self.confirm is not None:
                abort(confirmation.secured(self.confirm(request, outcome.link)))
            body, headers = confirmation.built_in(csrf_fields())
            abort(Response(body, headers=headers))
        return outcome

    def use(self, link: VerifiedLink, terms: link_requests.Consumption = link_guard.NO_TERMS) -> None:
        """Use up a single-use link, or check a grouped one, in the store; answered with the refusal unless this
        request may have it (a cross-site confirmation POST is refused: Flask has no CSRF check of its own)."""
        request, store = flask.request, self.links.store
        consume, check = getattr(store, "consume_link", None), getattr(store, "check_link", None)
        headers, path = cast(Mapping[str, str], request.headers), request.script_root + request.path
        refusal = self.links.use(link, path, consume, request, headers=headers, terms=terms, check=check)
        if refusal is not None:
            _refuse(refusal)


def csrf_fields() -> dict[str, str]:
    """The hidden field of the built-in confirmation page: Flask-WTF's CSRF token when the app checks it
    (``CSRFProtect``), else none. Flask-WTF is read only if the app loaded it: this package does not need it."""
    app, wtf = flask.current_app, sys.modules.get("flask_wtf.csrf")
    if wtf is None or not isinstance(app.extensions.get("csrf"), wtf.CSRFProtect):
        return {}
    if not app.config.get("WTF_CSRF_ENABLED", True):
        return {}
    return {app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"): wtf.generate_csrf()}


def privately(response: Response) -> Response:
    """``response``, made private when a grant cookie admitted the request (``links.grants.private``)."""
    if flask.g.get("signed_by_cookie"):
        headers = response.headers
        headers["Cache-Control"], headers["Vary"] = link_cookies.private(headers.get("Cache-Control"),
                                                                         headers.get("Vary"))  # fmt: skip
    return response


def signed_url_required(
    signer: URLSigner, *, bind: BindFunction | None = None, expired_status: int = 410, single_use: Any = None,
    client: Callable[[flask.Request], str] = default_client, confirm: ConfirmFunction | None = None,
) -> Callable[[View], View]:  # fmt: skip
    """Decorate a view so that only signed URLs reach it (``flask.g.signed_link``). ``single_use``: the store
    that uses single-use links up (``flask.revocation.RedisStore``); ``client``: who is asking, to let a download
    continue; ``confirm``: the page of a ``consume_on="post"`` link (its POST reaches the view)."""
    guard = _Guard.of(signer, bind, expired_status, single_use, client, confirm)

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Response:
            link = guard.admit(False)
            if link_requests.needs_store(link):
                guard.use(link)
            return privately(flask.make_response(view(*args, **kwargs)))

        return wrapper  # type: ignore[return-value]

    return decorate


def send_signed_file(root: str | os.PathLike[str], name: str, *, as_attachment: bool = True) -> Response:
    """Serve ``name`` under ``root`` from a view behind ``signed_url_required``, named as its link says."""
    return privately(_serve(root, name, flask.g.get("signed_link"), as_attachment))


class SignedFiles:
    """A view serving files under ``root`` by signed link (the options as ``signed_url_required``'s):
    ``app.add_url_rule("/files/<path:name>", view_func=SignedFiles(signer, root))`` (docs/flask.md)."""

    #: The link decides (405 with its Allow: GET and HEAD, POST for a consume_on="post" link), not the router.
    methods, provide_automatic_options = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"), False

    def __init__(
        self, signer: URLSigner, root: str | os.PathLike[str], *, as_attachment: bool = True,
        bind: BindFunction | None = None, expired_status: int = 410, single_use: Any = None,
        client: Callable[[flask.Request], str] = default_client, confirm: ConfirmFunction | None = None,
        accel_redirect: str | None = None, chunk_size: int = files.CHUNK_SIZE, sign_playlists: bool = True,
        path_param: str = "name", endpoint: str = "signed_files",
    ) -> None:  # fmt: skip
        self.root = files.served_root(root, "SignedFiles root")
        self.guard = _Guard.of(signer, bind, expired_status, single_use, client, confirm)
        self.as_attachment, self.accel_redirect, self.chunk_size = as_attachment, accel_redirect, chunk_size
        self.sign_playlists, self.path_param, self.__name__ = sign_playlists, path_param, endpoint

    def __ne__(self, other: object) -> bool:
        """Flask compares a view with the one already registered on its endpoint: another ``SignedFiles`` there
        stops start-up, naming the fix."""
        if isinstance(other, SignedFiles) and other is not self:
            raise ValueError(
                f"two SignedFiles views on the endpoint {self.__name__!r}: give the second its own, "
                f"SignedFiles(..., endpoint='...') or app.add_url_rule(..., endpoint='...'), and sign its links "
                f"with sign_url(signer, that endpoint, ...)"
            )
        return other is not self

    def __call__(self, **view_args: str) -> Response:
        link = self.guard.admit(True)  # a confirmation page is answered: no file opened
        name = view_args[self.path_param]
        signer = self.guard.links.signer if self.sign_playlists else None
        return privately(
            _serve(self.root, name, link, self.as_attachment, self.guard, signer, self.accel_redirect, self.chunk_size)
        )


def _serve(
    root: str | os.PathLike[str], name: str, link: VerifiedLink | None, as_attachment: bool,
    guard: _Guard | None = None, playlist_signer: URLSigner | None = None, accel: str | None = None,
    chunk_size: int = files.CHUNK_SIZE,
) -> Response:  # fmt: skip
    """Open ``name`` once and answer: streamed, a playlist, or headers only (``guard``: uses a link up)."""
    request, environ = flask.request, flask.request.environ
    stored = open_local(root, name, link)
    if isinstance(stored, link_requests.Refusal):
        _refuse(stored)
    try:
        sent = cast(Mapping[str, str], request.headers)
        query_string = link_targets.werkzeug_query(environ.get("QUERY_STRING", "")) or ""  # as the link verified
        asked = link_guard.FileRequest(
            request.method, sent, name, stored, link, offloaded=accel is not None, playlist_signer=playlist_signer,
            query_string=query_string,
        )  # fmt: skip
        if (use := asked.use()) is not None and guard is not None:
            guard.use(*use)
        if asked.playlist is not None:
            return _playlist(asked, as_attachment)
        answer = asked.answer(as_attachment, (accel, False))
        if answer.status not in (200, 206) or request.method == "HEAD" or accel is not None:
            stored.close()  # no body, or nginx sends it
            return Response(status=answer.status, headers=answer.headers)
        handle, start, length = stored.body(answer.byte_range)
        body: Iterable[bytes] = file_readers.RangeReader(handle, start, length, chunk_size)
        if answer.byte_range is None:  # whole: the WSGI server's sendfile sends it
            body = wrap_file(environ, handle, chunk_size)
        return Response(body, answer.status, answer.headers, direct_passthrough=True)
    except BaseException:
        stored.close()
        raise


def _playlist(asked: link_guard.FileRequest, as_attachment: bool) -> Response:
    """The playlist with the link's query after its URIs (``playlists``), whole; HEAD without rewriting it, so
    without Content-Length (which Werkzeug would otherwise write as 0)."""
    request = flask.request
    outcome = asked.rewritten(f"{request.scheme}://{request.host}", as_attachment)
    if isinstance(outcome, link_requests.Refusal):
        _refuse(outcome)
    answer, body = outcome
    if request.method == "HEAD":
        response = Response(headers=answer.headers)
        response.automatically_set_content_length = False
        return response
    return Response(body, headers=answer.headers)
