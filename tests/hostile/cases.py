"""The hostile requests, as raw bytes: cookies, signed links, Range headers and path traversal.

Each carries ``MARKER`` (and ``FORGED`` where a CR or LF could start a new header or log line), so the
server's log and response headers can be searched for attacker bytes. Each names the statuses it may get:
the cookie and link checks of this project answer 403, 400 or 404 (never 5xx); the HTTP parsers answer
oversized or malformed requests themselves (gunicorn 400/431, uvicorn's h11 400).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from blake2sign_web import URLSigner

from .raw_http import request_bytes

MARKER = b"B2SW"
#: What would start a forged header or log line if a CR or LF got through.
FORGED = b"B2SWFORGED"
#: Refused by the HTTP parser before any application code runs.
PARSER = frozenset({400, 414, 431})
NOT_LOGGED_IN = frozenset({403})
#: gunicorn's documented limits (limit_request_field_size 8190, limit_request_fields 100, limit_request_line 4094)
#: answer 431, 414 or 400. uvicorn's h11 answers 400 and closes when over h11_max_incomplete_event_size (16 KiB)
#: is buffered without a complete request; a large head that arrives whole is parsed and reaches the app.
OVERSIZED = PARSER


@dataclass(frozen=True)
class Case:
    label: str
    request: bytes
    statuses: frozenset[int]
    #: The request is large enough that the server may close (or reset) the connection after answering.
    oversized: bool = False
    #: For downloads of report.bin: the body a 200 must carry (a 206 must carry a slice of it).
    download: bool = False


def cookie_cases(cookie_name: str, valid: str) -> list[Case]:
    """Against GET /cart (403 unless the session holds the user) and POST /cart/add."""
    name, token = cookie_name.encode(), valid.encode()
    flipped = token[:10] + (b"A" if token[10:11] != b"A" else b"B") + token[11:]

    def cart(label: str, cookie_lines: list[bytes], statuses: frozenset[int], **options: bool) -> Case:
        return Case(label, request_bytes("GET", b"/cart", cookie_lines), statuses, **options)

    def one(value: bytes) -> list[bytes]:
        return [b"Cookie: " + name + b"=" + value]

    hundreds = b"; ".join(MARKER + b"%d=v%d" % (i, i) for i in range(500))
    return [
        cart("garbage value", one(MARKER + b"garbage"), NOT_LOGGED_IN),
        cart("one character flipped", one(flipped), NOT_LOGGED_IN),
        cart("truncated token", one(token[:-5]), NOT_LOGGED_IN),
        cart("token with bytes appended", one(token + MARKER), NOT_LOGGED_IN),
        cart("empty value", one(b""), NOT_LOGGED_IN),
        cart("only semicolons", one(b";;;;" + MARKER + b";;"), NOT_LOGGED_IN),
        cart("5 kB value (over the browser limit)", one(MARKER + b"A" * 5000), NOT_LOGGED_IN),
        cart("1 MB Cookie header", one(MARKER + b"A" * 1_000_000), OVERSIZED, oversized=True),
        cart("500 cookies, then the session", [b"Cookie: " + hundreds + b"; " + name + b"=" + token], frozenset({200})),
        cart("500 cookies, no session", [b"Cookie: " + hundreds], NOT_LOGGED_IN),
        cart("150 Cookie lines", [b"Cookie: %s%d=v" % (MARKER, i) for i in range(150)], NOT_LOGGED_IN | PARSER),
        cart("UTF-8 in the value", one("caf\u00e9".encode() + MARKER), NOT_LOGGED_IN | PARSER),
        cart("latin-1 byte in the value", one(b"caf\xe9" + MARKER), NOT_LOGGED_IN | PARSER),
        cart("U+2028 in the value", one(b"a\xe2\x80\xa8" + FORGED), NOT_LOGGED_IN | PARSER),
        cart("NUL in the value", one(b"ab\x00" + FORGED), NOT_LOGGED_IN | PARSER),
        cart("ESC in the value", one(b"ab\x1b[31m" + FORGED), NOT_LOGGED_IN | PARSER),
        cart("quoted garbage", one(b'"' + MARKER + b'"'), NOT_LOGGED_IN),
        cart("quoted valid token", one(b'"' + token + b'"'), frozenset({200})),
        cart("quotes and semicolons inside", one(b'"' + MARKER + b'\\"; x=\\"y"'), NOT_LOGGED_IN),
        cart(
            "the session, then a garbage one",
            [b"Cookie: " + name + b"=" + token + b"; " + name + b"=" + MARKER],
            NOT_LOGGED_IN,
        ),
        cart("attributes in the value", one(b"x; Path=/" + MARKER + b"; Domain=evil.example"), NOT_LOGGED_IN),
        cart("bare CR", one(b"ab\r" + FORGED + b": x"), NOT_LOGGED_IN | PARSER),
        cart("bare LF", one(b"ab\n" + FORGED + b": x"), NOT_LOGGED_IN | PARSER),
        cart("CR LF then a header", one(b"ab\r\n" + FORGED + b": x"), NOT_LOGGED_IN | PARSER),
        cart("obsolete line folding", [*one(b"ab"), b" " + FORGED], NOT_LOGGED_IN | PARSER),
        cart("percent-encoded CR LF", one(b"ab%0d%0a" + FORGED), NOT_LOGGED_IN),
        Case(
            "write with a garbage cookie",
            request_bytes("POST", b"/cart/add?item=tea", one(MARKER + b"x")),
            NOT_LOGGED_IN,
        ),
        Case(
            "write of an item holding CR LF",
            request_bytes("POST", b"/cart/add?item=tea%0d%0aSet-Cookie:%20" + FORGED, one(token)),
            frozenset({400}),
        ),
    ]


def link_cases(signer: URLSigner) -> list[Case]:
    """Signed download links with attacker bytes in them, and Range headers on a valid one."""
    link = signer.sign("/files/report.bin", expires_in=3600).encode()
    path, _, query = link.partition(b"?")
    signature_start = link.index(b"signature=") + len(b"signature=")

    def get(
        label: str, target: bytes, statuses: frozenset[int], headers: list[bytes] | None = None, **options: bool
    ) -> Case:
        return Case(label, request_bytes("GET", target, headers or []), statuses, **options)

    def ranged(label: str, values: list[bytes], statuses: frozenset[int], oversized: bool = False) -> Case:
        headers = [b"Range: " + value for value in values]
        return get(label, link, statuses, headers, oversized=oversized, download=True)

    refused = frozenset({403})
    many_ranges = b"bytes=" + b",".join(b"%d-%d" % (i, i) for i in range(10_000))
    return [
        get("unsigned", path, refused),
        get("query parameter with CR LF appended", link + b"&" + MARKER + b"=%0d%0aSet-Cookie:%20" + FORGED, refused),
        get("signature holding NUL, CR LF, quotes", link[:signature_start] + b"%00%0d%0a%22%27%3B" + FORGED, refused),
        get(
            "signature with raw quotes and semicolon", link[:signature_start] + b'"' + MARKER + b'";x', refused | PARSER
        ),
        get("signature repeated", link + b"&signature=" + MARKER, refused),
        get("expiry tampered", link.replace(b"expires=", b"expires=9" + MARKER + b"&x="), refused),
        get("NUL appended to the path", path + b"%00" + b"?" + query, refused),
        get("raw NUL in the target", path + b"\x00" + FORGED + b"?" + query, PARSER | refused),
        get("raw CR in the target", path + b"\r" + FORGED + b"?" + query, PARSER),
        get("raw LF in the target", path + b"\n" + FORGED + b": x?" + query, PARSER),
        get("raw UTF-8 in the target", path + "\u00e9".encode() + MARKER + b"?" + query, PARSER | refused),
        get("raw U+2028 in the query", link + b"&x=\xe2\x80\xa8" + FORGED, PARSER | refused),
        get("4 kB request line", link + b"&" + MARKER + b"=" + b"x" * 4096, PARSER | refused, oversized=True),
        get(
            "signed name with CR LF",
            signer.sign("/files/a%0d%0a" + FORGED.decode() + ".txt").encode(),
            frozenset({400, 404}),
        ),
        get(
            "signed name with quotes and a semicolon",
            signer.sign("/files/" + quote('a"; ' + MARKER.decode() + '".txt')).encode(),
            frozenset({404}),
        ),
        ranged("Range with 10,000 ranges", [many_ranges], OVERSIZED | {200}, oversized=True),
        ranged("100 kB Range header", [b"bytes=0-" + b"9" * 100_000], OVERSIZED | {200}, oversized=True),
        ranged(
            "Range with 150 ranges (1 kB)",
            [b"bytes=" + b",".join(b"%d-%d" % (i, i) for i in range(0, 300, 2))[:1000]],
            frozenset({200}),
        ),
        ranged(
            "Range with 1,000 overlapping ranges", [b"bytes=" + b",".join([b"0-"] * 1000)], frozenset({200}) | PARSER
        ),
        ranged("90 Range headers", [b"bytes=0-0"] * 90, frozenset({200, 206})),
        ranged("1,000 Range headers", [b"bytes=0-0"] * 1000, OVERSIZED | {200, 206}, oversized=True),
        ranged("Range of 30 digits", [b"bytes=" + b"9" * 30 + b"-"], frozenset({200})),
        ranged("suffix Range of 30 digits", [b"bytes=-" + b"9" * 30], frozenset({200})),
        ranged("Range in Arabic-Indic digits", ["bytes=\u0661-\u0662".encode()], frozenset({200}) | PARSER),
        ranged("Range with NUL", [b"bytes=0-\x00" + FORGED], PARSER | frozenset({200})),
        ranged("Range with a marker", [b"bytes=" + MARKER + b"-" + MARKER], frozenset({200})),
        ranged("negative Range", [b"bytes=-0-5"], frozenset({200})),
        get(
            "If-Range garbage with a Range",
            link,
            frozenset({200}),
            [b"Range: bytes=0-9", b'If-Range: "' + MARKER + b'\\"'],
            download=True,
        ),
    ]


#: Every spelling of "outside the folder" after /files/, sent as the raw request target.
TRAVERSALS = [
    "../secret.txt",
    "..%2fsecret.txt",
    "..%2Fsecret.txt",
    "%2e%2e/secret.txt",
    "%2E%2E%2Fsecret.txt",
    ".%2e/secret.txt",
    "%252e%252e%252fsecret.txt",
    "%25252e%25252e%25252fsecret.txt",
    "..%5csecret.txt",
    "..\\secret.txt",
    "..%255csecret.txt",
    "%2e%2e%5c%2e%2e%5csecret.txt",
    "sub/../../secret.txt",
    "sub/%2e%2e/%2e%2e/secret.txt",
    "sub/..%2f..%2fsecret.txt",
    "/../secret.txt",
    "%2f..%2fsecret.txt",
    "%2fetc%2fpasswd",
    "/etc/passwd",
    "//etc/passwd",
    "C:%5cWindows%5cwin.ini",
    "C:/Windows/win.ini",
    "report.bin%00",
    "report.bin%00.txt",
    "%00../secret.txt",
    "%c0%ae%c0%ae/secret.txt",
    "%c0%ae%c0%ae%c0%afsecret.txt",
    "%c0%2e%c0%2e/secret.txt",
    "%e0%80%ae%e0%80%ae/secret.txt",
    "%e2%80%a4%e2%80%a4/secret.txt",
    "%ef%bc%8e%ef%bc%8e/secret.txt",
    "%ef%bc%8e%ef%bc%8e%ef%bc%8fsecret.txt",
    "%u002e%u002e/secret.txt",
    "..;/secret.txt",
    ".../secret.txt",
    "....//secret.txt",
    "./report.bin",
    "sub/./caf%C3%A9.txt",
    "escape.txt",
    "escape-dir/secret.txt",
    "%2e%2e",
    "..",
]


def traversal_cases(sign: Callable[[str], str]) -> list[Case]:
    """Each spelling unsigned (403) and signed, as an application signing a user-chosen name would.

    A signed spelling gets 400 (refused name) or 404, or 403 where the server decodes the path before the
    signature is checked (a WSGI PATH_INFO holds '/' for '%2F'): then the link is not the one signed.
    """
    cases = []
    for spelling in TRAVERSALS:
        target = "/files/" + spelling
        cases.append(
            Case(
                f"traversal {spelling!r}, unsigned",
                request_bytes("GET", target.encode(), []),
                frozenset({400, 403, 404}),
            )
        )
        try:
            signed = sign(target)
        except ValueError:  # the signer refuses it ("//" at the start): nothing to send
            continue
        cases.append(
            Case(
                f"traversal {spelling!r}, signed", request_bytes("GET", signed.encode(), []), frozenset({400, 403, 404})
            )
        )
    return cases
