"""The reference verifier: what a front server decides for a request, from a keyring alone.

Every verifier of ``edge`` decides as this one does, and the test vectors and the differential fuzz hold them to
it. It is ``URLSigner.verify_link`` and the grant cookies' ``grant_for`` under the keyring's keys, and three
answers instead of one: "allow" (serve the file), "refuse" (403), and "origin" for what a front server cannot fully
check (a link it has no key for or whose MAC it cannot compute, such as one bound to a user; single use, groups,
download names; a method other than GET and HEAD): the site chooses whether those go to the origin or are refused.
The order of the checks: docs/link-format.md, "Deciding".
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable
from typing import Final, Literal, NamedTuple

from ..exceptions import BadSignature, SignatureMismatch
from ..links import grants, playlists
from ..links.folders import path_problem
from ..links.signer import URLSigner
from .keyring import Keyring

Decision = Literal["allow", "refuse", "origin"]
#: The methods a front server checks; any other goes to the origin (or is refused).
READS: Final = ("GET", "HEAD")
#: A Host header a host-bound link is checked against: a name or IPv4 address, or an IPv6 one in brackets, and a
#: port. Anything else is refused before it is read as part of a URL.
HOST: Final = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


class Request(NamedTuple):
    """What a front server has of a request: ``target`` is the request line's path and query exactly as sent."""

    method: str
    target: str
    host: str = ""
    scheme: str = "https"
    cookie: str | None = None


class Verdict(NamedTuple):
    """The decision; for an allowed folder link, its ``prefix`` and the decoded path ``below`` it, and whether a
    grant cookie admitted the request (``granted``: its response is ``private``, ``Vary: Cookie``); ``why``: for
    people, never compared."""

    decision: Decision
    why: str
    prefix: str | None = None
    below: str | None = None
    granted: bool = False


class KeyringSigner(URLSigner):
    """``URLSigner`` keyed by a keyring's derived keys instead of a secret: it verifies, and signs only in tests."""

    judges_download_names = False

    def __init__(self, keyring: Keyring, clock: Callable[[], float] = time.time) -> None:
        self._keyring_keys = [k.key for k in keyring.keys]
        placeholder = b"\0" * 16  # never derived from: _derive_keys installs the keyring's keys
        fallbacks = [placeholder] * (len(self._keyring_keys) - 1)
        super().__init__(placeholder, fallbacks=fallbacks, clock=clock, **keyring.signer_options())

    def _derive_keys(self, secrets: list[bytes]) -> None:
        self._install_keys(self._keyring_keys)


def valid_host(host: str) -> bool:
    """``HOST``, and an address in brackets an IPv6 one (not every Python's ``urlsplit`` checks: 3.11.4 and later
    do), so that the verdict is the same on every Python."""
    if not HOST.fullmatch(host):
        return False
    if not host.startswith("["):
        return True
    try:
        ipaddress.IPv6Address(host[1 : host.index("]")])
    except ValueError:
        return False
    return True


def parse_cookies(header: str | None) -> dict[str, str]:
    """The Cookie header's pairs: split at ";", each at its first "=", spaces around both trimmed, the last of a
    name kept; a pair without "=" is skipped. No unquoting: no grant cookie has a quote."""
    cookies: dict[str, str] = {}
    for part in (header or "").split(";"):
        name, equals, value = part.partition("=")
        if equals:
            cookies[name.strip(" \t")] = value.strip(" \t")
    return cookies


def decide(signer: URLSigner, request: Request) -> Verdict:
    """The verdict of a front server holding ``signer``'s keys (a ``KeyringSigner``) on ``request``."""
    if request.method not in READS:
        return Verdict("origin", "a method other than GET or HEAD")
    target = request.target
    if not target.startswith("/") or not target.isascii():
        return Verdict("refuse", "a request target that is not an ASCII path")
    if signer.bind_host and (not valid_host(request.host) or request.scheme not in ("http", "https")):
        return Verdict("refuse", "a malformed Host header or scheme")
    url = f"{request.scheme}://{request.host}{target}" if signer.bind_host else target
    try:
        granted = grants.grant_for(signer, url, request.method, lambda: parse_cookies(request.cookie))
        link = signer.verify_link(url) if granted is None else grants.verify(signer, url, granted, None)
    except SignatureMismatch as error:
        return Verdict("origin", f"{error}: not signed by a key of this keyring (or bound to a user)")
    except BadSignature as error:
        return Verdict("refuse", str(error))
    if link.nonce is not None or link.group is not None or link.disposition is not None:
        return Verdict("origin", "single use, a group or a download name: the origin decides")
    if link.prefix is None:
        problem = path_problem(target.partition("?")[0])
        if problem is not None:  # a file server would resolve it to another file than the link names
            return Verdict("refuse", f"unsafe path: {problem}")
    return Verdict("allow", "valid", link.prefix, link.below, granted is not None)


def playlist_query(signer: URLSigner, target: str) -> str | None:
    """The query an allowed folder link's playlist passes on to its URIs: the request's pairs less the ignored ones,
    re-encoded (``playlists.link_query``); None for a request without a signature in its URL (a grant cookie's)."""
    query = target.partition("#")[0].partition("?")[2]
    return playlists.link_query(query, signer.signature_param, signer.ignores)
