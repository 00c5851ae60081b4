"""Signed links in Starlette and FastAPI: ASGI requests and responses around the core's decisions
(``links.requests``, ``links.targets``: every status and header, the same in Django): ``sign_url_for``,
``grant_cookie``, ``require_signature`` (a FastAPI dependency), ``signed_url_required`` (a decorator),
``SignedFiles`` and ``signed_file_response`` (a file opened once and streamed from that descriptor).
Guide: docs/signed-urls.md.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import anyio.to_thread
from starlette.datastructures import URL, URLPath
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from ..links import confirmation, files, stored_files
from ..links import files as file_readers
from ..links import grants as link_cookies
from ..links import guard as link_guard
from ..links import requests as link_requests
from ..links import targets as link_targets
from ..links.guard import LinkGuard
from ..links.requests import FileAnswer, Refusal
from ..links.signer import Bound, ConsumeOn, Disposition, URLSigner, VerifiedLink
from ..links.stored_files import StoredFile
from ..sessions.cookies import cookies_in

if TYPE_CHECKING:
    from .revocation import RedisStore


BindFunction = Callable[[Request], Bound | None]
#: Who is asking, for single-use links: the same text may continue a download it started.
ClientFunction = Callable[[Request], str]
Endpoint = Callable[[Request], Awaitable[Response]]
#: Renders the confirmation page of a ``consume_on="post"`` link: (request, verified link) -> response.
ConfirmFunction = Callable[[Request, VerifiedLink], Response]


class ConfirmationRequired(Exception):
    """GET or HEAD of a ``consume_on="post"`` link: ``response`` is the confirmation page, raised because a FastAPI
    dependency can only stop a request so; ``confirmation_handler`` answers it."""

    def __init__(self, response: Response) -> None:
        super().__init__(
            "a consume_on='post' link needs its confirmation page: "
            "app.add_exception_handler(ConfirmationRequired, confirmation_handler)"
        )
        self.response = response


async def confirmation_handler(request: Request, exc: Exception) -> Response:
    """The exception handler that answers ``ConfirmationRequired`` with its page."""
    if not isinstance(exc, ConfirmationRequired):  # registered for another exception: not ours to answer
        raise exc
    return exc.response


def confirmation_response(request: Request, link: VerifiedLink, confirm: ConfirmFunction | None = None) -> Response:
    """The page in front of a ``consume_on="post"`` link: the built-in one, or ``confirm``'s, made unframeable."""
    if confirm is not None:
        return confirmation.secured(confirm(request, link))
    body, headers = confirmation.built_in()
    return Response(body, headers=headers)


def sign_url_for(
    request: Request,
    signer: URLSigner,
    name: str,
    /,
    *,
    base_url: str | URL | None = None,
    expires_in: int | float | timedelta | None = None,
    expires_at: int | datetime | None = None,
    starts: int | datetime | None = None,
    bind: Bound | None = None,
    single_use: bool = False,
    consume_on: ConsumeOn | None = None,
    download_as: str | None = None,
    disposition: Disposition | None = None,
    group: str | None = None,
    **path_params: Any,
) -> str:
    """Sign a link to the route ``name``: relative by default, or absolute on ``base_url`` (your public URL, for
    links that leave the request; ``request.base_url``, the ``Host`` the client sent, only when asked).
    ``download_as`` is the signed ``filename`` (so a route's own ``filename`` still reaches ``url_for``)."""
    base = link_targets.public_base(
        str(base_url) if isinstance(base_url, URL) else base_url, bind_host=signer.bind_host
    )
    if base is None:
        absolute = request.url_for(name, **path_params)
        url = str(absolute).removeprefix(f"{absolute.scheme}://{absolute.netloc}")
    else:
        url = str(_url_path_for(request, name, path_params).make_absolute_url(base))
    return signer.sign(
        url,
        expires_in=expires_in,
        expires_at=expires_at,
        starts=starts,
        bind=bind,
        single_use=single_use,
        consume_on=consume_on,
        filename=download_as,
        disposition=disposition,
        group=group,
    )


def grant_cookie(
    response: Response,
    request: Request,
    signer: URLSigner,
    prefix: str,
    /,
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
    ending with "/", as ``url_path_for`` writes it) without a signature in its URL, as ``signer.sign_prefix``
    would sign it (an expiry is required); ``secure``: default, whether the request came over https."""
    url = request.url
    cookie = link_cookies.grant(
        signer,
        prefix,
        secure=url.scheme == "https" if secure is None else secure,
        origin=f"{url.scheme}://{url.netloc}" if signer.bind_host else "",
        expires_in=expires_in,
        expires_at=expires_at,
        starts=starts,
        bind=bind,
        group=group,
        same_site=samesite,
        http_only=httponly,
        domain=domain,
    )
    response.set_cookie(
        cookie.name, cookie.value, **cookie.set_cookie_arguments | {"samesite": cookie.same_site.lower()}
    )
    return cookie


def _url_path_for(request: Request, name: str, path_params: dict[str, Any]) -> URLPath:
    """The route's path as ``request.url_for`` finds it, before it adds the request's base URL."""
    provider = request.scope.get("router") or request.scope.get("app")
    if provider is None:
        raise RuntimeError("sign_url_for can only be used inside a Starlette application or with a router")
    path: URLPath = provider.url_path_for(name, **path_params)
    return path


def default_client(request: Request) -> str:
    """The client's address and User-Agent. Behind a proxy, use ProxyHeadersMiddleware so the address is real."""
    host = request.client.host if request.client is not None else ""
    return link_requests.client_identity(host, request.headers.get("user-agent", ""))


def request_url(request: Request, signer: URLSigner) -> str | None:
    """The URL to verify (``links.targets.scope_target``), or None for a path that is not text."""
    origin = (request.url.scheme, request.url.netloc) if signer.bind_host else None
    return link_targets.scope_target(request.scope, origin)


def check_signature(
    request: Request, signer: URLSigner, bind: Bound | None = None, expired_status: int = 410
) -> VerifiedLink:
    """Raise HTTPException(403), or ``expired_status`` for an expired link, unless the URL is correctly signed
    (a single-use link passes: ``require_signature`` uses it up)."""
    # The decoded path for the log (not request.url.path: building the URL silently drops CR, LF and tab).
    outcome = link_requests.verify(
        signer, request_url(request, signer), bind, link_targets.scope_path(request.scope), expired_status
    )
    if isinstance(outcome, Refusal):
        _raise_refusal(outcome)
    return outcome


def _raise_refusal(refusal: Refusal) -> NoReturn:
    raise HTTPException(refusal.status, refusal.message, headers=dict(refusal.headers) or None)


def require_signature(
    signer: URLSigner,
    *,
    bind: BindFunction | None = None,
    expired_status: int = 410,
    single_use: RedisStore | None = None,
    client: ClientFunction = default_client,
    confirm: ConfirmFunction | None = None,
) -> Callable[[Request], Awaitable[None]]:
    """A dependency for FastAPI: ``@app.get("/x", dependencies=[Depends(require_signature(signer))])``.
    ``single_use``: the store that consumes single-use links (without one they are refused); ``client``: who is
    asking, to let a download continue; ``confirm``: the page of a ``consume_on="post"`` link."""
    guard = _Guard(LinkGuard.for_store(signer, expired_status, single_use, client, "starlette"), bind, confirm)

    async def signature_required(request: Request) -> None:
        link = guard.admit(request, False)
        if link_requests.needs_store(link):  # single-use (used up here) or grouped (checked)
            await guard.consume(request, link, link_guard.NO_TERMS)

    return signature_required


class _Guard(NamedTuple):
    """An endpoint's ``LinkGuard`` (``require_signature``, ``SignedFiles``), checked at start-up, and its readers."""

    links: LinkGuard
    bind: BindFunction | None
    confirm: ConfirmFunction | None

    def admit(self, request: Request, serves_file: bool) -> VerifiedLink:
        """The verified link, set as ``request.state.signed_link`` (``request.state.signed_by_cookie``: True when a
        grant cookie gave it); HTTPException, or ConfirmationRequired."""
        bound = None if self.bind is None else self.bind(request)
        # A WebSocket's handshake (a GET) has no method in its scope; require_signature also checks those.
        method, path = request.scope.get("method", "GET"), link_targets.scope_path(request.scope)
        url = request_url(request, self.links.signer)
        # A grant cookie is for HTTP reads, never a WebSocket's handshake (link_cookies).
        # Every Cookie header (request.cookies reads only the first before Starlette 0.48; HTTP/2 clients split them).
        cookies = functools.partial(cookies_in, request.scope["headers"])
        grant = self.links.grant(url, method, cookies) if request.scope["type"] == "http" else None
        outcome = self.links.check(url, bound, path, method, serves_file, grant)
        if type(outcome) is VerifiedLink:
            request.state.signed_link = outcome
            if grant is not None:
                request.state.signed_by_cookie = True
            return outcome
        if isinstance(outcome, link_requests.Confirmation):
            request.state.signed_link = outcome.link
            raise ConfirmationRequired(confirmation_response(request, outcome.link, self.confirm))
        _raise_refusal(outcome)  # type: ignore[arg-type]

    async def consume(self, request: Request, link: VerifiedLink, terms: link_requests.Consumption) -> None:
        """Use up a single-use link (or check a grouped one) in the store; HTTPException unless this request may
        have it."""
        path = link_targets.scope_path(request.scope)
        # Starlette has no CSRF check: a confirmation's POST from another site's page is refused (``headers``).
        refusal = await self.links.ause(link, path, request, headers=request.headers, terms=terms)
        if refusal is not None:
            _raise_refusal(refusal)


def signed_url_required(
    signer: URLSigner,
    *,
    bind: BindFunction | None = None,
    expired_status: int = 410,
    single_use: RedisStore | None = None,
    client: ClientFunction = default_client,
    confirm: ConfirmFunction | None = None,
) -> Callable[[Endpoint], Endpoint]:
    """Decorate a Starlette ``async def endpoint(request)`` so that only signed URLs reach it (``require_signature``;
    the confirmation page of a ``consume_on="post"`` link is answered, its POST reaches the endpoint)."""
    check = require_signature(
        signer, bind=bind, expired_status=expired_status, single_use=single_use, client=client, confirm=confirm
    )

    def decorate(endpoint: Endpoint) -> Endpoint:
        @functools.wraps(endpoint)
        async def wrapper(request: Request) -> Response:
            try:
                await check(request)
            except ConfirmationRequired as page:
                return page.response
            except HTTPException as error:  # a refusal after a grant cookie admitted it (a revoked group)
                if getattr(request.state, "signed_by_cookie", False):
                    error.headers = dict(privately(request, Response(headers=error.headers)).headers)
                raise
            return privately(request, await endpoint(request))

        return wrapper

    return decorate


class _OpenFileResponse(Response):
    """Streams an already open file, whole (200) or one range (206): Starlette's FileResponse would open it again
    by name, undoing ``files.open_under`` (a path checked, then another file opened)."""

    def __init__(self, stored: StoredFile, answer: FileAnswer, chunk_size: int = files.CHUNK_SIZE) -> None:
        headers = dict(answer.headers)
        # Starlette's own: a text type gets "; charset=utf-8" (media_type), as in its FileResponse.
        media_type = headers.pop("Content-Type")
        super().__init__(status_code=answer.status, headers=headers, media_type=media_type)
        handle, start, length = stored.body(answer.byte_range)
        self.reader = file_readers.AsyncRangeReader(handle, start, length, chunk_size, anyio.to_thread.run_sync)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            await file_readers.send_body(send, None if scope["method"] == "HEAD" else self.reader)
        finally:
            self.reader.close()
        if self.background is not None:
            await self.background()


async def signed_file_response(
    request: Request,
    root: str | os.PathLike[str],
    name: str,
    *,
    as_attachment: bool = True,
    link: VerifiedLink | None = None,
) -> Response:
    """Serve ``name`` under ``root`` (check the signature first). The signed ``filename`` and ``disposition`` of
    ``link`` (default: ``request.state.signed_link``), where it has them, name the download."""
    if link is None:
        link = getattr(request.state, "signed_link", None)
    return privately(request, await _serve(request, root, name, as_attachment, link))


async def _serve(
    request: Request,
    root: str | os.PathLike[str],
    name: str,
    as_attachment: bool,
    link: VerifiedLink | None,
    guard: _Guard | None = None,
    playlist_signer: URLSigner | None = None,
) -> Response:
    """Open ``name`` once; with ``guard``, use a single-use link up (or check a grouped one) knowing the file;
    answer. With ``playlist_signer``, a playlist served by a folder link passes the link on (``playlists``)."""
    stored = await _open(root, name, link)
    try:
        query = request.scope.get("query_string", b"").decode("latin-1")
        asked = link_guard.FileRequest(
            request.method, request.headers, name, stored, link, playlist_signer=playlist_signer, query_string=query
        )
        # Its first use, or a continuation of a download by the same client within the file's size.
        use = asked.use()
        if guard is not None and use is not None:
            await guard.consume(request, *use)
        if asked.playlist is not None:
            return await _playlist(request, asked, as_attachment)
        answer = asked.answer(as_attachment)
        if answer.status in (200, 206):
            return _OpenFileResponse(stored, answer)
        stored.close()  # 304, 412, 416: no body
        return Response(status_code=answer.status, headers=answer.headers)
    except BaseException:
        stored.close()
        raise


async def _playlist(request: Request, asked: link_guard.FileRequest, as_attachment: bool) -> Response:
    """The playlist with the link's query after its URIs (``playlists``), whole: read and rewritten in a thread;
    HEAD without rewriting it, so without content-length (which Response would write as 0)."""
    origin = f"{request.url.scheme}://{request.url.netloc}"
    outcome = await anyio.to_thread.run_sync(asked.rewritten, origin, as_attachment)
    if isinstance(outcome, Refusal):
        _raise_refusal(outcome)
    answer, body = outcome
    response = Response(body, headers=answer.headers)
    if request.method == "HEAD":
        del response.headers["content-length"]
    return response


async def _open(root: str | os.PathLike[str], name: str, link: VerifiedLink | None) -> StoredFile:
    stored = await anyio.to_thread.run_sync(stored_files.open_local, root, name, link)
    if isinstance(stored, Refusal):
        _raise_refusal(stored)
    return stored


class SignedFiles:
    """Serves files under ``root`` by signed link: ``Route("/files/{name:path}", SignedFiles(signer, root))``."""

    def __init__(
        self,
        signer: URLSigner,
        root: str | os.PathLike[str],
        *,
        path_param: str = "name",
        as_attachment: bool = True,
        bind: BindFunction | None = None,
        expired_status: int = 410,
        single_use: RedisStore | None = None,
        client: ClientFunction = default_client,
        confirm: ConfirmFunction | None = None,
        sign_playlists: bool = True,
    ) -> None:
        self.root = files.served_root(root, "SignedFiles root")
        #: An HLS playlist served by a folder link is sent with that link's query after each URI in the folder.
        self.sign_playlists = sign_playlists
        self.guard = _Guard(LinkGuard.for_store(signer, expired_status, single_use, client, "starlette"), bind, confirm)
        self.path_param = path_param
        self.as_attachment = as_attachment

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # An ASGI app (Starlette's Route calls class instances that way), answering its own errors.
        request = Request(scope, receive)
        try:
            response = await self.respond(request)
        except ConfirmationRequired as page:
            response = page.response
        except HTTPException as error:  # a refusal after a grant cookie admitted it (a revoked group) is private too
            response = PlainTextResponse(error.detail, status_code=error.status_code, headers=error.headers)
            response = privately(request, response)
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        link = self.guard.admit(request, True)  # a confirmation page is raised: no file opened
        name = request.path_params[self.path_param]
        signer = self.guard.links.signer if self.sign_playlists else None
        return privately(request, await _serve(request, self.root, name, self.as_attachment, link, self.guard, signer))


def privately(request: Request, response: Response) -> Response:
    """``response``, made private when the request was admitted by a grant cookie (``links.grants.private``)."""
    if getattr(request.state, "signed_by_cookie", False):
        cache_control, vary = link_cookies.private(response.headers.get("cache-control"), response.headers.get("vary"))
        response.headers["Cache-Control"], response.headers["Vary"] = cache_control, vary
    return response
