"""Which part of a request a signed link is verified as, and the public URL links for e-mail start with.

The signature covers the path and query as the view will read them (after ``scheme://host`` when the
signer binds the host: ``links.requests.request_target``), with the path prefix a proxy took off put
back (``links.requests.with_prefix``). An adapter hands over its request's values: an ASGI scope as it
is (``scope_target``), Django's decoded path and raw query (``script_path``, ``wsgi_query``), Flask's raw query
(``werkzeug_query``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .requests import public_base_problem, request_target, with_prefix
from .text import PATH_SAFE


def scope_path(scope: Mapping[str, Any]) -> str:
    """The decoded path of an ASGI scope with its ``root_path`` (servers put it into ``path``; some adapters do not)."""
    return with_prefix(scope["path"], scope.get("root_path", ""))


def scope_target(scope: Mapping[str, Any], origin: tuple[str, str] | None = None) -> str | None:
    """The URL an ASGI request is verified as: the raw path, so a decoded '%25' cannot be decoded twice (without
    ``raw_path``, as Mangum sends, the decoded path re-encoded, '%' included), and the raw ``query_string`` read
    as latin-1, as Starlette's ``query_params`` reads it. None for a path that is not text (a lone surrogate)."""
    raw_path: bytes | None = scope.get("raw_path")
    root_path: str = scope.get("root_path", "")
    if raw_path:
        # ASGI's raw_path has no query string, but some clients (Starlette's TestClient before 0.38)
        # put it there. uvicorn puts root_path (a prefix a proxy took off, which url_for signed) into
        # raw_path; other servers do not.
        path = raw_path.partition(b"?")[0].decode("latin-1")
        if root_path:
            path = with_prefix(path, quote(root_path, safe=PATH_SAFE))
    else:
        try:
            path = quote(scope_path(scope), safe=PATH_SAFE, encoding="utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            return None
    return request_target(path, scope.get("query_string", b"").decode("latin-1"), origin)


def wsgi_query(query: str, charset: str) -> str:
    """The query as Django's ``request.GET`` reads it, not as WSGI spells it.

    Under WSGI, QUERY_STRING holds the raw bytes decoded as latin-1, while ``request.GET`` decodes them
    as ``charset`` (UTF-8): raw ``q=\\xc3\\xa9`` would be checked as ``q=Ã©`` and read as ``q=é``. The
    bytes are decoded here as QueryDict decodes them, so the signature covers the text the view sees.
    """
    if query.isascii():
        return query
    raw = query.encode("iso-8859-1")
    try:
        return raw.decode(charset)
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")  # QueryDict's own fallback


def werkzeug_query(query: str) -> str | None:
    """The query as Werkzeug's ``request.args`` (Flask's) reads it: the raw bytes (QUERY_STRING, read as latin-1)
    decoded as UTF-8, as ``wsgi_query`` does for Django; None when they are not UTF-8, which ``request.args``
    cannot read, so no link is verified on them."""
    if query.isascii():
        return query
    try:
        return query.encode("iso-8859-1").decode("utf-8")
    except UnicodeError:
        return None


def script_path(path: str, path_info: str, prefix: str, *, asgi: bool = True) -> str:
    """The decoded path with the script prefix that ``reverse()`` writes into links: under ASGI, behind a proxy
    that took the prefix off (``FORCE_SCRIPT_NAME = "/app"``, nginx ``proxy_pass http://app/;``), put back before
    the path the view routes on (``path_info``); under WSGI (``asgi=False``) the path has it (SCRIPT_NAME)."""
    if not asgi:
        return path
    return path if with_prefix(path, prefix) == path else with_prefix(path_info, prefix)


def public_base(
    base_url: object, *, bind_host: bool = False, function: str = "sign_url_for", own_host: str = "request.base_url"
) -> str | None:
    """``base_url`` checked as the site's public URL (http or https, a host, no query or fragment): TypeError or
    ValueError. A link for an e-mail starts with it, never with the ``Host`` a client sent. None: a relative
    link, which a signer that binds the host cannot sign (``function``, ``own_host``: how the framework spells
    the signing function and the request's own base URL)."""
    if base_url is None:
        if bind_host:
            raise ValueError(
                f"this URLSigner binds the host (bind_host=True): pass {function}(..., base_url=...), your public "
                f"URL for links that leave the request, or {own_host} for links shown to this client"
            )
        return None
    if not isinstance(base_url, str):
        raise TypeError(f"base_url must be a str such as 'https://example.com' or a URL, not {type(base_url).__name__}")
    problem = public_base_problem(base_url)
    if problem is not None:
        raise ValueError(problem)
    return base_url
