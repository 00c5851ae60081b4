"""Grant cookies: a folder link's signed query kept in a cookie scoped to the folder, so that a browser or a
player fetching many relative URLs under it needs no signature in each (what CloudFront calls signed cookies).

``grant`` signs a prefix (``URLSigner.sign_prefix``) and says the cookie to set; ``grant_for`` finds the cookie
that a GET or HEAD without a signature in its URL is verified by: its query after the request's path and query,
through the signer's own ``verify_link``, so a cookie grants nothing the folder link would not. A response to
such a request is made ``private``. The cookie and what it grants: docs/signed-urls.md, "Grant cookies".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from hashlib import blake2b, sha256
from typing import Any, Final, Literal, NamedTuple

from ..exceptions import BadSignature
from ..signing.serializer import Seconds
from .folders import SignedPrefix
from .signer import URLSigner, VerifiedLink
from .text import Bound, canonical_path, parse_query

SameSite = Literal["Lax", "Strict", "None"]
#: The start of every grant cookie's name (after ``__Secure-`` or ``__Host-``): no session cookie starts so.
NAME: Final = "b2s_grant_"
_NAMES: Final = (NAME, "__Secure-" + NAME, "__Host-" + NAME)
#: Longest cookie value read or written, in characters: a longer one is refused unread.
MAX_VALUE_LENGTH: Final = 600
#: Deepest prefix a cookie can grant, in segments: a request looks at most this many folders up for its cookie.
MAX_DEPTH: Final = 16
#: What a cookie value may hold: a signed query (RFC 3986 unreserved, "%", "&") with its "=" written ":".
_VALUE: Final = re.compile(r"[A-Za-z0-9._~%&:-]+")
#: What a prefix granted by cookie may hold: its Path attribute ends at ";", and "," splits some parsers.
_PATH: Final = re.compile(r"/[A-Za-z0-9/%._~!$&'()*+=:@-]*")
#: The methods a grant cookie admits.
READS: Final = ("GET", "HEAD")


class GrantCookie(NamedTuple):
    """The cookie that grants ``signed`` (the folder link): set it as it says, on the response that grants."""

    name: str
    value: str
    path: str
    max_age: int
    secure: bool
    http_only: bool
    same_site: SameSite
    domain: str | None
    signed: SignedPrefix

    @property
    def set_cookie_arguments(self) -> dict[str, Any]:
        """The attributes as the keywords of Django's and Starlette's ``set_cookie`` (Starlette spells ``samesite``
        in lower case)."""
        return {
            "max_age": self.max_age,
            "path": self.path,
            "domain": self.domain,
            "secure": self.secure,
            "httponly": self.http_only,
            "samesite": self.same_site,
        }


@lru_cache(maxsize=1024)
def grant_name(prefix: str, hasher: str = "blake2b") -> str:
    """The name of the cookie granting ``prefix`` (canonical, ending with "/"), before any ``__Secure-``: 4 bytes of
    its BLAKE2b hash in hex, or of its SHA-256 under HMAC-SHA-256 links, so that a verifier without BLAKE2 (a front
    server) can find the cookie too."""
    raw = prefix.encode("ascii", "surrogateescape")
    digest = sha256(raw).digest()[:4] if hasher == "hmac-sha256" else blake2b(raw, digest_size=4).digest()
    return NAME + digest.hex()


def cookie_name(prefix: str, secure: bool, domain: str | None, hasher: str = "blake2b") -> str:
    """The full name: ``__Host-`` for a Secure grant of "/" without Domain, ``__Secure-`` for another Secure one."""
    if not secure:
        return grant_name(prefix, hasher)
    return ("__Host-" if prefix == "/" and domain is None else "__Secure-") + grant_name(prefix, hasher)


def grant(
    signer: URLSigner,
    prefix: str,
    *,
    secure: bool,
    origin: str = "",
    expires_in: Seconds | None = None,
    expires_at: int | datetime | None = None,
    starts: int | datetime | None = None,
    bind: Bound | None = None,
    group: str | None = None,
    same_site: SameSite = "Lax",
    http_only: bool = True,
    domain: str | None = None,
) -> GrantCookie:
    """The cookie granting the folder ``prefix`` (a path ending with "/"), signed with ``signer`` and the times,
    ``bind`` and ``group`` of ``sign_prefix``; ``origin``: ``scheme://host`` of the request, used when the signer
    binds the host. ValueError for a grant without expiry or already expired, a prefix deeper than ``MAX_DEPTH`` or with
    ``;`` or ``,``, a value over ``MAX_VALUE_LENGTH``, SameSite=None without Secure."""
    if expires_in is None and expires_at is None:
        raise ValueError(
            "a grant cookie needs an expiry (expires_in= or expires_at=): the browser keeps it, and a cookie "
            "without one is restored with the browser's session"
        )
    if same_site not in ("Lax", "Strict", "None"):
        # Named as every adapter's grant_cookie spells it, after its framework's set_cookie.
        raise ValueError(f"samesite must be 'Lax', 'Strict' or 'None'; got {same_site!r}")
    if same_site == "None" and not secure:
        raise ValueError("samesite='None' needs a Secure cookie (browsers refuse it otherwise)")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
    signed = signer.sign_prefix(
        origin + prefix if signer.bind_host and prefix.startswith("/") else prefix,
        expires_in=expires_in,
        expires_at=expires_at,
        starts=starts,
        bind=bind,
        group=group,
    )
    path = signed.prefix
    if not _PATH.fullmatch(path):
        raise ValueError(f"cannot grant a cookie for prefix {path[:40]!r}: its Path would hold ';' or ','")
    if path.count("/") - 1 > MAX_DEPTH:
        raise ValueError(f"cannot grant a cookie for a prefix deeper than {MAX_DEPTH} segments")
    value = signed.query.replace("=", ":")
    if len(value) > MAX_VALUE_LENGTH:
        raise ValueError(f"grant cookie of {len(value)} characters exceeds {MAX_VALUE_LENGTH}: grant a shorter prefix")
    expires = next(int(v) for k, v in parse_query(signed.query) if k == signer.expires_param)
    max_age = expires - int(signer._clock())
    if max_age <= 0:
        raise ValueError("the grant has already expired: pass a later expires_at")
    name = cookie_name(path, secure, domain, signer.hasher)
    return GrantCookie(name, value, path, max_age, secure, http_only, same_site, domain, signed)


def grant_for(signer: URLSigner, url: str | None, method: str, cookies: Callable[[], Mapping[str, str]]) -> str | None:
    """The value of the grant cookie to verify the request by, or None to verify its URL (one with a signature,
    a method other than GET or HEAD, or no grant cookie). ``url``: the path and query to verify (absolute when
    the signer binds the host); ``cookies``: the request's, read only when needed.

    With one grant cookie, it is the one (its MAC and prefix decide); with several, the one named for the
    deepest folder of the path that a grant can name (``MAX_DEPTH`` segments at most: a hash each).
    """
    if url is None or method not in READS:
        return None
    head, _, query = url.partition("?")
    if query and _has(query, signer.signature_param):
        return None
    grants = [(name, value) for name, value in cookies().items() if name.startswith(_NAMES)]
    if len(grants) <= 1:
        return grants[0][1] if grants else None
    named = {name[name.index(NAME) :]: value for name, value in grants}
    path = canonical_path(_path(head))
    ends: list[int] = []  # where the folders of the path a grant can name end ("/" to MAX_DEPTH segments deep)
    end = path.find("/")
    while end >= 0 and len(ends) <= MAX_DEPTH:
        ends.append(end)
        end = path.find("/", end + 1)
    for end in reversed(ends):
        value = named.get(grant_name(path[: end + 1], signer.hasher))
        if value is not None:
            return value
    return None


def verify(signer: URLSigner, url: str, value: str, bind: Bound | None) -> VerifiedLink:
    """The link the grant cookie ``value`` gives the request ``url`` (as ``grant_for`` read them): the signer's
    ``verify_link`` of the URL with the cookie's query; BadSignature (or subclass) unless it is a folder link's."""
    if len(value) > MAX_VALUE_LENGTH or not _VALUE.fullmatch(value):
        raise BadSignature("malformed grant cookie")
    head, _, query = url.partition("?")
    granted = value.replace(":", "=")
    link = signer.verify_link(f"{head}?{query}&{granted}" if query else f"{head}?{granted}", bind=bind)
    if link.prefix is None:
        raise BadSignature("grant cookie is not a folder link")
    return link


def private(cache_control: str | None, vary: str | None) -> tuple[str, str]:
    """The ``Cache-Control`` and ``Vary`` of a response to a request admitted by a grant cookie, from those the
    response has (None: none): its URL is no secret, so no shared cache may keep it for others (``private``, no
    ``public`` or ``s-maxage``; ``no-store`` kept), and a browser's cache keeps it per cookie (``Vary: Cookie``)."""
    directives = [d.strip() for d in (cache_control or "").split(",") if d.strip()]
    kept = [d for d in directives if d.lower() != "public" and not d.lower().startswith("s-maxage")]
    if not any(d.lower() in ("private", "no-store") for d in kept):
        kept.append("private")
    varied = [v.strip() for v in (vary or "").split(",") if v.strip()]
    if not any(v == "*" or v.lower() == "cookie" for v in varied):
        varied.append("Cookie")
    return ", ".join(kept), ", ".join(varied)


def _has(query: str, name: str) -> bool:
    """Whether ``query`` has a parameter spelled ``name=`` (any other spelling of it fails verification later, with
    the cookie's signature added to the URL's)."""
    return f"&{name}=" in f"&{query}"


def _path(head: str) -> str:
    """The path of ``head``, a path or an absolute URL without its query."""
    if head[:1] == "/":
        return head
    start = head.find("/", head.find("://") + 3)
    return head[start:] if start >= 0 else "/"
