"""The text of a link: how it is split, the canonical form its MAC covers, the names it may carry, and its times.

``URLSigner`` signs and verifies; what is written here is the text it reads and writes: the canonical path,
query and bound value, the rules of a link's own parameter names and of a signed download name, and the
``expires`` and ``starts`` it carries (Unix seconds, at most 10 digits; a start must come before the expiry,
and is honoured from ``starts - CLOCK_SKEW``). The form: docs/format.md, "Signed URLs".
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Final, Literal
from urllib.parse import parse_qsl, quote, unquote, unquote_to_bytes, urlsplit

from ..exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from ..signing.signer import is_count
from ..signing.times import CLOCK_SKEW, Seconds, to_seconds

#: Characters left as they are in a canonical path: RFC 3986 pchar and "/".
PATH_SAFE: Final = "/!$&'()*+,;=:@-._~"
#: Characters left as they are in a canonical query name or value: RFC 3986 unreserved.
QUERY_SAFE: Final = "-._~"
#: What ``quote(character, safe=QUERY_SAFE)`` writes for each ASCII character it escapes.
_QUERY_ESCAPES: Final = [
    chr(code) if chr(code).isalnum() or chr(code) in QUERY_SAFE else f"%{code:02X}" for code in range(128)
]
#: A query value that only a "/" of would be escaped.
_UNRESERVED_OR_SLASH: Final = re.compile("[A-Za-z0-9._~/-]*")
#: RFC 3986 fragment characters, and "%" so that escapes already there are kept as they are.
FRAGMENT_SAFE: Final = PATH_SAFE + "?%"
DEFAULT_PORTS: Final = {"http": ":80", "https": ":443"}
#: What makes a URL absolute (RFC 3986 scheme, then "//"): only then is a host read from it.
_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
#: An encoded slash, kept encoded in the canonical path.
_ENCODED_SLASH: Final = re.compile("%2F", re.IGNORECASE)
#: Dot segments, kept encoded in the canonical path.
_DOT_SEGMENTS: Final = {".": "%2E", "..": "%2E%2E"}
#: Longest signed download name, in characters (file systems allow 255 bytes or characters).
MAX_FILENAME_LENGTH: Final = 255

Bound = str | bytes | int
Disposition = Literal["attachment", "inline"]
ConsumeOn = Literal["get", "post"]


#: URLSigner's keywords that name a link's own query parameters, and their default names.
LINK_PARAMETERS: Final = {
    "signature_param": "signature",
    "expires_param": "expires",
    "nonce_param": "once",
    "consume_param": "consume",
    "disposition_param": "disposition",
    "filename_param": "filename",
    "starts_param": "starts",
    "prefix_param": "prefix",
    "group_param": "group",
    "issued_param": "issued",
    "key_id_param": "kid",
}
#: What to pass instead of writing each of a link's own parameters into the URL to sign (``refuse_reserved``).
_RESERVED_FIXES: Final = {
    "signature_param": "the signature: sign the URL without it",
    "expires_param": "the expiry: pass expires_in= or expires_at= instead",
    "starts_param": "the start: pass starts= instead",
    "prefix_param": "the folder: use sign_prefix() instead",
    "nonce_param": "the single-use nonce: pass single_use=True instead",
    "consume_param": "pass consume_on='post' instead",
    "disposition_param": "pass disposition= instead",
    "group_param": "the link group: pass group= instead",
    "issued_param": "the issue time of a grouped link: pass group= instead",
    "key_id_param": "the key id: the signer writes its own key's",
}


def refuse_reserved(url: str, pairs: list[tuple[str, str]], names: Mapping[str, str], *, names_download: bool) -> None:
    """ValueError when ``url`` already has a parameter that only ``URLSigner.sign``'s own keywords may write
    (``names``: its keyword, such as ``expires_param``, and the name it gives; the ``filename`` too when the link
    names its download, ``names_download``)."""
    reserved = {names[option]: (option, fix) for option, fix in _RESERVED_FIXES.items()}
    if names_download:
        reserved[names["filename_param"]] = (
            "filename_param",
            "the download name: pass filename= (sign_url_for: download_as=) only",
        )
    for name, _ in pairs:
        if name in reserved:
            option, fix = reserved[name]
            raise ValueError(
                f"cannot sign {url[:40]!r}: its query already has {name!r}, a parameter this signer writes "
                f"itself ({fix}); if it is the application's own, rename it or the signer's ({option}=)"
            )


def check_link_parameters(
    names: Mapping[str, str], ignore: Iterable[str], spell: Callable[[str], str] = lambda option: option
) -> tuple[str, ...]:
    """The rules for a link's own query parameter names and the ignored ones: the ignore patterns, as a tuple
    (ValueError or TypeError). ``names``: ``URLSigner``'s keyword and the name it gives; ``spell``: an option's
    name in the caller's framework, so that an adapter checks its settings at start-up by the same rules."""
    for option, value in names.items():
        if not isinstance(value, str) or not value or quote(value, safe=QUERY_SAFE) != value:
            raise ValueError(
                f"{spell(option)} must be a non-empty query parameter name of [A-Za-z0-9-._~]; got {value!r}"
            )
    if len(set(names.values())) != len(names):
        raise ValueError(f"the parameter names must differ: {', '.join(map(spell, names))}")
    if isinstance(ignore, str):
        raise TypeError(f"{spell('ignore')} must be a list of parameter names or patterns such as 'utm_*', not one str")
    patterns = tuple(ignore)
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern:
            raise TypeError(f"each {spell('ignore')} pattern must be a non-empty str such as 'utm_*'; got {pattern!r}")
        if any(fnmatchcase(value, pattern) for value in names.values()):
            raise ValueError(
                f"{spell('ignore')} pattern {pattern!r} would ignore the signature, expiry or nonce parameter, or "
                f"another of this signer's own ({', '.join(names.values())}), which the signature must cover"
            )
    return patterns


def filename_problem(filename: object) -> str | None:
    """Why ``filename`` cannot be a signed download name (None: it can).

    A name is one path segment: no ``/`` or ``\\``, not ``.`` or ``..``, no control, format
    or line-separator character (CR, LF, NUL, U+2028, bidirectional overrides), not only dots
    and spaces, at most ``MAX_FILENAME_LENGTH`` characters. Quotes and non-ASCII are allowed:
    ``files.content_disposition`` encodes them.
    """
    if not isinstance(filename, str):
        return f"a filename must be a str, not {type(filename).__name__}"
    if not filename.strip(" ."):
        return "a filename must have a character other than dots and spaces"
    if len(filename) > MAX_FILENAME_LENGTH:
        return f"a filename has at most {MAX_FILENAME_LENGTH} characters"
    if "/" in filename or "\\" in filename:
        return "a filename is one path segment: no '/' or '\\'"
    if any(unicodedata.category(char) in _UNSAFE_CATEGORIES for char in filename):
        return "a filename has no control, format or line-separator character"
    return None


def read_link_options(
    pairs: list[tuple[str, str]],
    consume_param: str,
    disposition_param: str,
    filename_param: str,
    has_nonce: bool,
    check_filename: bool = True,
) -> tuple[ConsumeOn, Disposition | None, str | None]:
    """``consume_on``, ``disposition`` and ``filename`` of a link's (signed) pairs, after the MAC was checked (and
    by ``sign``, on what it is about to sign); BadSignature if malformed. ``check_filename=False``: the name is
    left to whoever serves the download (a front server passes such links on: docs/link-format.md)."""
    consumes: tuple[str, ...] = ()
    dispositions: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    for key, value in pairs:  # one pass, no comprehension to build: each request by a link reads them
        if key == consume_param:
            consumes += (value,)
        elif key == disposition_param:
            dispositions += (value,)
        elif key == filename_param:
            filenames += (value,)
    if len(consumes) > 1 or len(dispositions) > 1 or (dispositions and len(filenames) > 1):
        # (A filename without a disposition is the application's own parameter, which it may repeat.)
        raise BadSignature("URL repeats a consume, disposition or filename parameter")
    consume_on: ConsumeOn = "get"
    if consumes:
        if consumes[0] != "post":
            raise BadSignature("malformed consume parameter")
        if not has_nonce:
            raise BadSignature("consume=post on a URL that is not single-use")
        consume_on = "post"
    if not dispositions:
        # A filename alone is the application's own parameter, as in links signed before this option.
        return consume_on, None, None
    disposition = dispositions[0]
    if disposition == "attachment":
        checked: Disposition = "attachment"
    elif disposition == "inline":
        checked = "inline"
    else:
        raise BadSignature("malformed disposition")
    filename = filenames[0] if filenames else None
    if check_filename and filename is not None and filename_problem(filename) is not None:
        raise BadSignature("malformed filename")
    return consume_on, checked, filename


#: Unicode categories refused in a filename: controls (CR, LF, NUL), format (bidi overrides), surrogates,
#: private use, unassigned, line and paragraph separators.
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def parse_query(query: str) -> list[tuple[str, str]]:
    """``parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")``, written out for
    each request's query: surrogateescape keeps bytes that are not UTF-8 distinct instead of folding them into
    U+FFFD."""
    if not query.isascii():
        return parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")
    pairs = []
    for field in query.split("&"):
        if field:
            name, _, value = field.partition("=")
            pairs.append((_unquote(name), _unquote(value)))
    return pairs


def _unquote(text: str) -> str:
    """``unquote(text.replace("+", " "), errors="surrogateescape")`` of an ASCII ``text``."""
    if "+" in text:
        text = text.replace("+", " ")
    if "%" not in text:
        return text
    plain = text.replace("%2F", "/")  # a folder link's prefix: often its only escape
    if "%" not in plain:
        return plain
    return unquote_to_bytes(text).decode("utf-8", "surrogateescape")


def encode(text: str) -> str:
    # quote()'s answer, in C for the values each request encodes: numbers, names, a folder link's prefix.
    if _UNRESERVED_OR_SLASH.fullmatch(text):
        return text.replace("/", "%2F")
    if text.isascii():  # one table lookup per character
        return text.translate(_QUERY_ESCAPES)
    return quote(text, safe=QUERY_SAFE, encoding="utf-8", errors="surrogateescape")


def split(url: str) -> tuple[str, str, str, str, str]:
    """(scheme, netloc, path, query, fragment). A netloc is read only after ``scheme://``:
    urlsplit would read ``//a/b`` as host ``a`` and path ``/b``, and drop ``a`` from the MAC."""
    if url[:1] != "/" and _ABSOLUTE.match(url):
        return urlsplit(url)
    rest, _, fragment = url.partition("#")
    path, _, query = rest.partition("?")
    return "", "", path, query, fragment


def canonical_path(path: str) -> str:
    if "%2F" in path or "%2f" in path:  # an encoded slash is data, not a segment boundary: keep it encoded
        canonical = "%2F".join(_reencode(piece) for piece in _ENCODED_SLASH.split(path))
    else:  # _reencode written out: this is the per-request case
        decoded = unquote(path, encoding="utf-8", errors="surrogateescape")
        canonical = quote(decoded, safe=PATH_SAFE, encoding="utf-8", errors="surrogateescape")
    if "/." in canonical or canonical[:1] == ".":  # a dot segment, written or encoded: clients would remove it
        canonical = "/".join(_DOT_SEGMENTS.get(segment, segment) for segment in canonical.split("/"))
    return canonical or "/"


def _reencode(text: str) -> str:
    decoded = unquote(text, encoding="utf-8", errors="surrogateescape")
    return quote(decoded, safe=PATH_SAFE, encoding="utf-8", errors="surrogateescape")


def bound_text(value: Bound) -> str:
    if isinstance(value, bool):
        raise TypeError("bind must be a str, bytes or int identifying the user or session, not a bool")
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, bytes):
        return "b:" + value.hex()
    if isinstance(value, str):
        return "s:" + value
    raise TypeError(f"bind must be a str, bytes or int, not {type(value).__name__}")


#: Latest time a link can carry: ``verify`` reads at most 10 digits.
MAX_EXPIRES_AT: Final = 9_999_999_999


def unix_time(value: int | datetime, name: str) -> int:
    """``value`` (Unix seconds, or an aware datetime rounded up to the second) as Unix seconds for a link;
    TypeError or ValueError naming the keyword (``name``)."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"{name} must be an aware datetime (with tzinfo), or Unix seconds")
        value = math.ceil(value.timestamp())
    elif not is_count(value):
        raise TypeError(f"{name} must be Unix seconds (an int) or an aware datetime; got {value!r}")
    if not 0 <= value <= MAX_EXPIRES_AT:
        raise ValueError(f"{name} must be Unix seconds from 0 to {MAX_EXPIRES_AT}; got {value!r}")
    return value


def expiry(expires_in: Seconds | None, expires_at: int | datetime | None, clock: Callable[[], float]) -> int | None:
    """The link's expiry in Unix seconds, from ``expires_in`` or ``expires_at`` (at most one), or None."""
    if expires_in is not None and expires_at is not None:
        raise ValueError("pass expires_in or expires_at, not both")
    if expires_in is not None:
        return int(clock()) + to_seconds(expires_in, "expires_in")
    if expires_at is None:
        return None
    return unix_time(expires_at, "expires_at")


def start(starts: int | datetime | None, expires: int | None) -> int | None:
    """The link's start in Unix seconds, or None; ValueError for a start at or after the expiry (``expires``)."""
    if starts is None:
        return None
    starts_at = unix_time(starts, "starts")
    if expires is not None and starts_at >= expires:
        raise ValueError(
            f"starts ({starts_at}) must be before the link's expiry ({expires}): such a link would never be valid"
        )
    return starts_at


def read_time(value: str, what: str) -> int:
    """A time in a link's (signed) query; BadSignature ("malformed expiry", "malformed start") unless 1 to 10
    ASCII digits."""
    if not (value.isascii() and value.isdigit() and len(value) <= 10):
        raise BadSignature(f"malformed {what}")
    return int(value)


def verified_times(
    expires: str | None, starts: str | None, clock: Callable[[], float]
) -> tuple[int | None, int | None]:
    """The expiry and start of a link whose MAC was checked, from their text (None: the link has none), if
    ``clock()`` is within them: BadSignature if malformed, SignatureExpired, SignatureNotYetValid."""
    expires_at = None if expires is None else read_time(expires, "expiry")
    starts_at = None if starts is None else read_time(starts, "start")
    if expires_at is not None and starts_at is not None and starts_at >= expires_at:
        raise BadSignature("URL starts at or after its expiry")  # sign() never writes one
    now = clock()
    if expires_at is not None and now >= expires_at:
        raise SignatureExpired("signed URL has expired", expired_at=expires_at)
    if starts_at is not None and now < starts_at - CLOCK_SKEW:
        raise SignatureNotYetValid("signed URL is not valid yet", valid_from=starts_at)
    return expires_at, starts_at
