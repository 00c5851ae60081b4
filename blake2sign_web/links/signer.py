"""URLSigner: signed, optionally expiring links that nobody can alter to reach something else.

A link carries ``signature``, ``Signer``'s MAC (under a domain of its own) over a canonical form of the URL,
``url1``, so that proxies and frameworks that re-encode a URL do not break it; and the signer's own parameters
(``expires``, ``starts``, ``once``, ``consume``, ``disposition``, ``filename``), which ``sign`` writes only from
its keywords: it refuses (ValueError) a URL that already has one, and one whose link would point elsewhere than
its input (a path starting with ``//``, an absolute URL without a host, a first segment with a ``:``). The form
and the parameters: docs/format.md, "Signed URLs"; what each option does: docs/signed-urls.md. A link's text is
``links.text``'s, folders ``links.folders``'s, and what a request by a link gets ``links.requests``'.
"""

from __future__ import annotations

import re
import secrets
import time
from binascii import b2a_base64
from collections.abc import Callable, Iterable
from datetime import datetime
from fnmatch import fnmatchcase
from hmac import compare_digest
from typing import Any, Final, NamedTuple
from urllib.parse import quote, urlunsplit

from ..exceptions import BadSignature, SignatureMismatch
from ..signing.cache import cached
from ..signing.keys import DIGEST_SIZE, KEY_ID_LENGTH, derive_key, key_id
from ..signing.serializer import Seconds
from ..signing.signer import MAC_LENGTH, URLSAFE, MacKeys, Signer, is_count, keyed_mac_keys, keys_by_id
from . import folders as link_prefix
from . import groups as link_groups
from . import text as link_times
from .folders import SignedPrefix
from .text import (
    DEFAULT_PORTS,
    FRAGMENT_SAFE,
    LINK_PARAMETERS,
    MAX_EXPIRES_AT,
    MAX_FILENAME_LENGTH,
    Bound,
    ConsumeOn,
    Disposition,
    bound_text,
    canonical_path,
    check_link_parameters,
    encode,
    filename_problem,
    parse_query,
    read_link_options,
    refuse_reserved,
    split,
)

# What other modules and earlier releases import from here.
__all__ = [
    "CONSUME_ON",
    "DISPOSITIONS",
    "LINK_PARAMETERS",
    "MAX_EXPIRES_AT",
    "MAX_FILENAME_LENGTH",
    "MAX_URL_LENGTH",
    "NONCE_BYTES",
    "Bound",
    "ConsumeOn",
    "Disposition",
    "SignedPrefix",
    "URLSigner",
    "VerifiedLink",
    "check_link_parameters",
    "filename_problem",
    "get_url_signer",
]
_split = split  # the names tests and fuzz targets know
_parse_query = parse_query

#: Default bound on a URL's length, checked before parsing; servers rarely accept more.
MAX_URL_LENGTH: Final = 8192
#: Random bytes in a single-use link's nonce (22 base64url characters).
NONCE_BYTES: Final = 16
#: What a nonce may look like: enough to name a store key safely, whoever wrote it.
_NONCE: Final = re.compile(r"[A-Za-z0-9_-]{16,64}")
#: The values of a link's ``disposition`` parameter.
DISPOSITIONS: Final = ("attachment", "inline")
#: When a single-use link is used up: by its first request ("get", the default), or only by a POST ("post").
CONSUME_ON: Final = ("get", "post")


class VerifiedLink(NamedTuple):
    """What a verified link says about itself, for the checks that follow the MAC's.

    ``used_fallback``: a fallback secret verified it (re-sign to refresh); ``expires_at``: Unix seconds after which
    the link is refused, None without expiry; ``nonce``: the single-use nonce, None for a link that may be used any
    number of times; ``consume_on``: "post" when only a POST may use the link up (GET and HEAD get a confirmation
    page); ``disposition`` ("attachment" or "inline") and ``filename``: how a download by this link is to be named,
    None when the link does not say; ``starts_at``: Unix seconds before which the link is refused (less
    ``CLOCK_SKEW``), None when it is valid from its signing; ``prefix``: a folder link's signed prefix, and
    ``below``: the decoded request path below it (None for a single-file link); ``group``: the link group whose
    revocation refuses it, and ``issued_us``: its issue time, Unix microseconds (None, None: no group).
    """

    used_fallback: bool
    expires_at: int | None
    nonce: str | None
    consume_on: ConsumeOn = "get"
    disposition: Disposition | None = None
    filename: str | None = None
    starts_at: int | None = None
    prefix: str | None = None
    below: str | None = None
    group: str | None = None
    issued_us: int | None = None


class URLSigner(Signer):
    """Signs and verifies URLs (absolute, or path and query) with an optional expiry."""

    domain = "url"
    #: Whether ``verify_link`` refuses a malformed download name. The edge's reference verifier does not: the name
    #: is the origin's to judge (its rules follow the Unicode version), so such links go to the origin.
    judges_download_names = True

    def __init__(
        self,
        secret: str | bytes,
        *,
        purpose: str,
        fallbacks: Iterable[str | bytes] = (),
        hasher: str = "blake2b",
        signature_param: str = "signature",
        expires_param: str = "expires",
        nonce_param: str = "once",
        consume_param: str = "consume",
        disposition_param: str = "disposition",
        filename_param: str = "filename",
        starts_param: str = "starts",
        prefix_param: str = "prefix",
        group_param: str = "group",
        issued_param: str = "issued",
        key_id_param: str = "kid",
        ignore: Iterable[str] = (),
        bind_host: bool = False,
        max_url_length: int = MAX_URL_LENGTH,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not is_count(max_url_length) or max_url_length < 1:
            raise ValueError(f"max_url_length must be a positive int; got {max_url_length!r}")
        # The text the MAC covers is the canonical form, which can outgrow the URL a little.
        super().__init__(
            secret, purpose=purpose, fallbacks=fallbacks, hasher=hasher, max_token_length=2 * max_url_length + 64
        )
        names = {
            "signature_param": signature_param,
            "expires_param": expires_param,
            "nonce_param": nonce_param,
            "consume_param": consume_param,
            "disposition_param": disposition_param,
            "filename_param": filename_param,
            "starts_param": starts_param,
            "prefix_param": prefix_param,
            "group_param": group_param,
            "issued_param": issued_param,
            "key_id_param": key_id_param,
        }
        self.ignore = check_link_parameters(names, ignore)
        if not callable(clock):
            raise TypeError("clock must be a callable returning Unix seconds, like time.time")
        self.signature_param = signature_param
        self.expires_param = expires_param
        self.nonce_param = nonce_param
        self.consume_param = consume_param
        self.disposition_param = disposition_param
        self.filename_param = filename_param
        self.starts_param = starts_param
        self.prefix_param = prefix_param
        self.group_param, self.issued_param = group_param, issued_param
        self.key_id_param = key_id_param
        self.bind_host = bool(bind_host)
        self.max_url_length = max_url_length
        self._clock = clock

    def _derive_keys(self, secrets: list[bytes]) -> None:
        """Format 1's keys, and each one's key id: a link names the key that signed it (``key_id_param``), so that
        a verifier holding several picks it instead of trying each (docs/link-format.md)."""
        self._install_keys(
            [derive_key(s, domain=self.domain, purpose=self.purpose, hasher=self.hasher) for s in secrets]
        )

    def _install_keys(self, keys: list[bytes]) -> None:
        """Key the hash states with derived keys, the current one first (a keyring's, for a verifier without the
        secret: ``edge.reference``)."""
        self._format1 = keyed_mac_keys(keys, self.hasher, DIGEST_SIZE)
        #: The current key's id, written into every link this signer signs.
        self.key_id = key_id(keys[0], self.hasher)
        #: Per key id, its keys as ``_verify`` tries them, and whether the first is a fallback.
        self._by_key_id = keys_by_id(keys, self._format1, self.hasher, KEY_ID_LENGTH)

    def _keys_named(self, name: str) -> tuple[MacKeys, bool]:
        """The keys a link's key id names, and whether they are fallbacks; SignatureMismatch for an id this signer
        does not hold (another key, another hasher, or a forgery: nothing to try)."""
        found = self._by_key_id.get(name)
        if found is None:
            raise SignatureMismatch("unknown key id")
        return found

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(purpose={self.purpose!r}, hasher={self.hasher!r}, "
            f"bind_host={self.bind_host!r}, ignore={self.ignore!r})"
        )

    def sign(
        self,
        url: str | bytes,
        *,
        expires_in: Seconds | None = None,
        bind: Bound | None = None,
        single_use: bool = False,
        consume_on: ConsumeOn | None = None,
        filename: str | None = None,
        disposition: Disposition | None = None,
        expires_at: int | datetime | None = None,
        starts: int | datetime | None = None,
        group: str | None = None,
    ) -> str:
        """Return ``url`` with ``expires`` (when asked for) and ``signature`` added.

        The expiry is ``expires_in`` from now, or ``expires_at`` (Unix seconds or an aware datetime; a
        time already past makes a link that is already expired). ``starts`` (Unix seconds or an aware
        datetime, before the expiry) adds ``starts=``: the link is refused before then, less ``CLOCK_SKEW``
        (there is no ``starts_in``: ``expires_in`` counts from the signing, not from the start).
        ``single_use=True`` adds a fresh random nonce (``once=``) for the adapters to consume; it needs an
        expiry, since the store keeps the nonce's record until then (a start changes nothing there).
        ``consume_on="post"`` (single-use links only) adds ``consume=post``: GET and HEAD then only show a
        confirmation page, whose POST uses the link up (mail scanners only GET).
        ``filename`` and ``disposition`` (``"attachment"``, the default with a filename, or ``"inline"``)
        say how the download helpers name the file; a name with a path separator, a control or
        line-separator character, or none at all is refused (ValueError). ``group`` (an id such as ``"course-42"``,
        ``links.groups``; the link needs an expiry) adds ``group=`` and ``issued=``: revoking the group refuses it.

        The parameters this signer writes are set only through these keywords: a ``url`` whose query
        already has one (``signature``, ``expires``, ``starts``, ``once``, ``consume``, ``disposition``, and
        ``filename`` when the link names its download) is refused (ValueError naming it), since it would
        be dropped, replaced or signed into a link that never verifies. A ``filename`` of the
        application's own is kept when the link does not name its download.
        """
        if isinstance(url, bytes):
            url = url.decode("ascii")
        if len(url) > self.max_url_length:
            raise ValueError(f"URL of {len(url)} characters exceeds max_url_length={self.max_url_length}")
        scheme, netloc, path, query, fragment = split(url)
        if scheme and not netloc:
            raise ValueError(f"cannot sign {url[:40]!r}: an absolute URL needs a host (scheme://host/path)")
        if path.startswith("//"):
            raise ValueError(
                f"cannot sign {url[:40]!r}: a path starting with '//' is read as a host by browsers; "
                "write the second slash as %2F (as Django's reverse() does) or sign an absolute URL"
            )
        pairs = parse_query(query)
        names = {option: getattr(self, option) for option in LINK_PARAMETERS}
        refuse_reserved(url, pairs, names, names_download=filename is not None or disposition is not None)
        expires = link_times.expiry(expires_in, expires_at, self._clock)
        starts_at = link_times.start(starts, expires)
        if expires is not None:
            pairs.append((self.expires_param, str(expires)))
        if starts_at is not None:
            pairs.append((self.starts_param, str(starts_at)))
        if group is not None:
            pairs += link_groups.signed_pairs(group, expires, self._clock, self.group_param, self.issued_param)
        if single_use:
            if expires is None:
                raise ValueError(
                    "a single-use link needs an expiry: pass expires_in or expires_at (its record stays in the "
                    "store until then, so a link that never expires could never be cleaned up)"
                )
            pairs.append((self.nonce_param, secrets.token_urlsafe(NONCE_BYTES)))
        if consume_on is not None:
            if consume_on not in CONSUME_ON:
                raise ValueError(f"consume_on must be 'get' or 'post'; got {consume_on!r}")
            if consume_on == "post":
                if not single_use:
                    raise ValueError("consume_on='post' is for single-use links: pass single_use=True")
                pairs.append((self.consume_param, "post"))
        if filename is not None or disposition is not None:
            if disposition is None:
                disposition = "attachment"
            if disposition not in DISPOSITIONS:
                raise ValueError(f"disposition must be 'attachment' or 'inline'; got {disposition!r}")
            if filename is not None:
                problem = filename_problem(filename)
                if problem is not None:
                    raise ValueError(f"cannot sign filename {filename[:40]!r}: {problem}")
            pairs.append((self.disposition_param, disposition))
            if filename is not None:
                pairs.append((self.filename_param, filename))
        try:  # what is about to be signed must be what verify accepts
            has_nonce = any(k == self.nonce_param for k, _ in pairs)
            read_link_options(pairs, self.consume_param, self.disposition_param, self.filename_param, has_nonce)
        except BadSignature as error:
            raise ValueError(f"cannot sign {url[:40]!r}: {error}") from None
        host = self._host(scheme, netloc)
        if self.bind_host and not host:
            raise ValueError("this URLSigner binds the host (bind_host=True): sign an absolute URL")
        path = canonical_path(path)
        if not scheme and ":" in path.partition("/")[0]:
            raise ValueError(
                f"cannot sign {url[:40]!r}: a relative path whose first segment has ':' is read as a scheme "
                "(javascript:, data:); sign a path starting with '/' or an absolute URL"
            )
        pairs.append((self.key_id_param, self.key_id))
        signed_query = "".join(f"{encode(k)}={encode(v)}&" for k, v in pairs)
        token = self._seal(self._canonical(host, path, pairs, bind))
        signed_query += f"{self.signature_param}={token[-MAC_LENGTH:]}"
        # Not signed (browsers never send it), but part of the link a page or a Location header will carry:
        # no control character, space or raw non-ASCII goes out.
        fragment = quote(fragment, safe=FRAGMENT_SAFE, encoding="utf-8", errors="surrogateescape")
        if scheme:
            link = urlunsplit((scheme, netloc, path, signed_query, fragment))
        else:
            link = f"{path}?{signed_query}#{fragment}" if fragment else f"{path}?{signed_query}"
        # Re-encoding and the added parameters make the link longer than its input: verify would refuse it.
        if len(link) > self.max_url_length:
            raise ValueError(
                f"signed URL of {len(link)} characters exceeds max_url_length={self.max_url_length}: "
                "sign a shorter URL or raise the limit"
            )
        return link

    def sign_prefix(
        self,
        prefix: str,
        *,
        expires_in: Seconds | None = None,
        bind: Bound | None = None,
        expires_at: int | datetime | None = None,
        starts: int | datetime | None = None,
        single_use: bool = False,
        filename: str | None = None,
        group: str | None = None,
    ) -> SignedPrefix:
        """Sign a folder, a path ending with "/" (absolute when the host is bound), with ``sign``'s times, ``bind`` and
        ``group``: its ``query`` verifies after any path inside it (``links.folders``); ValueError for ``single_use``,
        ``filename``."""
        return link_prefix.sign(self, prefix, expires_in, expires_at, starts, bind, single_use, filename, group)

    def verify(self, url: str | bytes, *, bind: Bound | None = None) -> None:
        """Raise BadSignature unless ``url`` carries a valid signature, SignatureExpired if it has expired,
        SignatureNotYetValid before its start (less ``CLOCK_SKEW``; both are BadSignature).

        ``url`` is what the server received: the path and query (``request.get_full_path()``),
        or the absolute URL when the host is bound.
        """
        self.verify_url(url, bind=bind)

    def verify_url(self, url: str | bytes, *, bind: Bound | None = None) -> bool:
        """Like ``verify``; return True when a fallback secret verified it (re-sign to refresh)."""
        return self.verify_link(url, bind=bind).used_fallback

    def verify_link(self, url: str | bytes, *, bind: Bound | None = None) -> VerifiedLink:
        """Like ``verify``; return what the link says about itself (fallback used, expiry, nonce, start).

        A nonce says the link is single-use: the caller must consume it in a shared store
        (the adapters do); ``verify`` alone cannot know whether it was used before.
        """
        if isinstance(url, bytes):
            try:
                url = url.decode("ascii")
            except UnicodeDecodeError:
                raise BadSignature("URL is not ASCII") from None
        if not isinstance(url, str):
            raise BadSignature(f"URL must be str or bytes, not {type(url).__name__}")
        if len(url) > self.max_url_length:
            raise BadSignature("URL too long")
        try:
            scheme, netloc, path, query, _ = split(url)
        except ValueError:
            raise BadSignature("malformed URL") from None
        signatures: list[str] = []
        pairs: list[tuple[str, str]] = []
        for key, value in parse_query(query):
            if key == self.signature_param:
                signatures.append(value)
            else:
                pairs.append((key, value))
        if len(signatures) != 1:
            raise BadSignature("URL has no signature" if not signatures else "URL has more than one signature")
        if self.ignore:
            pairs = [(k, v) for k, v in pairs if not self.ignores(k)]
        expiries: list[str] = []
        nonces: list[str] = []
        starts: list[str] = []
        prefixes: tuple[str, ...] = ()  # a folder link's (no list to allocate for the others)
        grouped: tuple[tuple[str, str], ...] = ()  # a grouped link's group and issue time
        key_ids: tuple[str, ...] = ()
        for key, value in pairs:  # one pass: each request by a link reads them
            if key == self.expires_param:
                expiries.append(value)
            elif key == self.nonce_param:
                nonces.append(value)
            elif key == self.starts_param:
                starts.append(value)
            elif key == self.prefix_param:
                prefixes += (value,)
            elif key == self.group_param or key == self.issued_param:
                grouped += ((key, value),)
            elif key == self.key_id_param:
                key_ids += (value,)
        if len(expiries) > 1:
            raise BadSignature("URL has more than one expiry")
        if len(nonces) > 1:
            raise BadSignature("URL has more than one nonce")
        if len(starts) > 1:
            raise BadSignature("URL has more than one start")
        if len(key_ids) > 1:
            raise BadSignature("URL has more than one key id")
        try:
            host = self._host(scheme, netloc)
            if prefixes:  # a folder link: its MAC covers the prefix, in its own form
                canonical = link_prefix.form(self._canonical(host, link_prefix.read(prefixes), pairs, bind))
            else:
                canonical = self._canonical(host, canonical_path(path), pairs, bind)
        except UnicodeEncodeError:  # a lone surrogate: no request can carry it
            raise BadSignature("URL is not valid text") from None
        if self.bind_host and not host:
            raise BadSignature("this URLSigner binds the host: verify the absolute URL")
        if len(signatures[0]) != MAC_LENGTH:
            raise BadSignature("malformed signature")
        # A link names its key; one signed before key ids is tried under each key.
        keys, fallback = self._keys_named(key_ids[0]) if key_ids else (self._format1, False)
        signed = canonical + signatures[0].encode("ascii", "replace")
        if len(signed) > self.max_token_length:
            raise BadSignature("token too long")
        # The first key here (_verify's first step, without its call, as SerializerSigner._load); _verify tries all.
        state = keys.current.copy()
        state.update(canonical)
        if not compare_digest(b2a_base64(state.digest())[:MAC_LENGTH].translate(URLSAFE), signed[-MAC_LENGTH:]):
            later = self._verify(signed, keys)[1]  # raises SignatureMismatch unless another key of the id made it
            fallback = fallback or later
        expires_at = starts_at = None
        if expiries or starts:
            expires_at, starts_at = link_times.verified_times(
                expiries[0] if expiries else None, starts[0] if starts else None, self._clock
            )
        nonce = None
        if nonces:
            nonce = nonces[0]
            if not _NONCE.fullmatch(nonce):
                raise BadSignature("malformed nonce")
            if expires_at is None:  # sign() never writes one: a record without an end could never be removed
                raise BadSignature("single-use URL without expiry")
        consume_on, disposition, filename = read_link_options(
            pairs,
            self.consume_param,
            self.disposition_param,
            self.filename_param,
            nonce is not None,
            self.judges_download_names,
        )
        group = issued = None
        if grouped:
            group, issued = link_groups.verified(grouped, self.group_param, expires_at)
        if prefixes:
            below = link_prefix.verified_below(path, prefixes[0], nonce is not None or disposition is not None)
            folder = (fallback, expires_at, None, "get", None, None, starts_at, prefixes[0], below, group, issued)
            return tuple.__new__(VerifiedLink, folder)
        # tuple.__new__: no Python call to fill the defaults (each request by a link builds one).
        fields = (fallback, expires_at, nonce, consume_on, disposition, filename, starts_at, None, None, group, issued)
        return tuple.__new__(VerifiedLink, fields)

    def ignores(self, name: str) -> bool:
        """Whether a query parameter of this name is left out of the MAC (``ignore``'s patterns)."""
        return any(fnmatchcase(name, pattern) for pattern in self.ignore)

    def _host(self, scheme: str, netloc: str) -> str:
        """The host (and non-default port), lowercased, when bound; '' otherwise."""
        if not self.bind_host:
            return ""
        host = netloc.rpartition("@")[2].lower()
        default_port = DEFAULT_PORTS.get(scheme.lower())
        if default_port and host.endswith(default_port):
            host = host[: -len(default_port)]
        return encode(host)

    def _canonical(self, host: str, path: str, pairs: list[tuple[str, str]], bind: Bound | None) -> bytes:
        kept = sorted(
            ((k, v) for k, v in pairs if k != self.signature_param and not (self.ignore and self.ignores(k))),
            key=lambda kv: kv[0],
        )
        query = "&".join(f"{encode(k)}={encode(v)}" for k, v in kept)
        bound = "" if bind is None else "=" + encode(bound_text(bind))
        return f"url1\n{host}\n{path}\n{query}\n{bound}".encode("ascii")


def get_url_signer(secret: str | bytes, **options: Any) -> URLSigner:
    """The cached ``URLSigner(secret, **options)`` (pass ``ignore`` and ``fallbacks`` as tuples)."""
    return cached(URLSigner, secret, **options)
