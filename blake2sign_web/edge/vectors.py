"""The test vectors of the link format: requests a front server may see, and what the reference verifier decides.

``python -m blake2sign_web.edge vectors`` writes them (``blake2sign_web/edge/vectors.json`` is their file);
every verifier of ``edge`` runs them, and so can another implementation: docs/link-format.md, "Test vectors".
The keys are derived from published test secrets; the clock is ``NOW`` for signing and each vector says its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

from ..links import grants
from ..links.playlists import front_server_rewrite
from ..links.signer import URLSigner
from . import keyring as keyrings
from .reference import KeyringSigner, Request, Verdict, decide, playlist_query

#: The signing time of every vector: 2027-01-15T08:00:00Z.
NOW: Final = 1_800_000_000
HOUR: Final = 3600
#: Published test secrets: never use them for anything else.
SECRET: Final = "blake2sign_web link vectors: current secret"  # noqa: S105 (published on purpose)
OLD_SECRET: Final = "blake2sign_web link vectors: retired secret"  # noqa: S105
OTHER_SECRET: Final = "blake2sign_web link vectors: another site"  # noqa: S105

#: The keyrings the vectors use, by name, and the options of the origin's signer.
KEYRINGS: Final[dict[str, dict[str, Any]]] = {
    "plain": {"purpose": "downloads"},
    "rotation": {"purpose": "downloads", "fallbacks": [OLD_SECRET]},
    "host": {"purpose": "downloads", "bind_host": True},
    "names": {
        "purpose": "media",
        "signature_param": "sig",
        "expires_param": "exp",
        "prefix_param": "dir",
        "key_id_param": "k",
        "ignore": ["utm_*", "fbclid", "v?"],
    },
}


def _signer(name: str, secret: str = SECRET, hasher: str = "hmac-sha256", at: int = NOW) -> URLSigner:
    options = dict(KEYRINGS[name])
    options.pop("fallbacks", None)
    return URLSigner(secret, hasher=hasher, clock=lambda: at, **options)


def _legacy(signer: URLSigner, path: str, expires: int) -> str:
    """A link as a release before key ids signed it: no kid in the query."""
    pairs = [(signer.expires_param, str(expires))]
    tag = signer._seal(signer._canonical("", path, pairs, None))[-43:]
    return f"{path}?{signer.expires_param}={expires}&{signer.signature_param}={tag}"


def _swap(link: str, old: str, new: str) -> str:
    assert old in link, (old, link)
    return link.replace(old, new, 1)


def cases() -> Iterator[tuple[str, str, Request, int]]:
    """(name, keyring, request, now) of every vector."""
    s = _signer("plain")
    get = "GET"

    def req(
        target: str, cookie: str | None = None, method: str = get, host: str = "", scheme: str = "https"
    ) -> Request:
        return Request(method, target, host, scheme, cookie)

    # One file.
    paths = [
        "/files/report.pdf",
        "/files/a b.pdf",
        "/files/caf\u00e9.txt",
        "/files/%7Euser/x",
        "/files/a%2Fb",
        "/files/a%252Fb",
        "/a/%2E%2E/b",
        "/files/x;y=1,z",
        "/files/%E2%80%AE.txt",
        "/",
        "/files/\u65e5\u672c.mp4",
        "/files/a+b",
    ]
    for index, path in enumerate(paths):
        link = s.sign(path, expires_in=HOUR)
        yield f"file {index}: valid", "plain", req(link), NOW
        yield f"file {index}: expired", "plain", req(link), NOW + HOUR
        yield f"file {index}: last second", "plain", req(link), NOW + HOUR - 1
        yield f"file {index}: tampered path", "plain", req(link.replace("/", "/x", 1)), NOW
    link = s.sign("/files/report.pdf?page=2&lang=en", expires_in=HOUR)
    yield "query: valid", "plain", req(link), NOW
    yield "query: reordered", "plain", req(_reorder(link)), NOW
    yield "query: value changed", "plain", req(_swap(link, "page=2", "page=3")), NOW
    yield "query: pair added", "plain", req(link + "&x=1"), NOW
    yield "query: pair removed", "plain", req(_swap(link, "page=2&", "")), NOW
    yield "query: name respelled %70age", "plain", req(_swap(link, "page=", "%70age=")), NOW
    yield "query: expiry respelled %65xpires", "plain", req(_swap(link, "expires=", "%65xpires=")), NOW
    link = s.sign("/files/x?q=a b&r=%2B", expires_in=HOUR)
    yield "query: space as +", "plain", req(link), NOW
    yield "query: space as %20", "plain", req(_swap(link, "q=a%20b", "q=a+b")), NOW
    yield "query: plus respelled %2b", "plain", req(_swap(link, "%2B", "%2b")), NOW
    link = s.sign("/files/report.pdf", expires_in=HOUR)
    sig = link.rpartition("signature=")[2]
    yield "no expiry: valid", "plain", req(s.sign("/files/forever.pdf")), NOW + 100 * 365 * 86400
    yield "signature: one character changed", "plain", req(link[:-1] + ("A" if link[-1] != "A" else "B")), NOW
    yield "signature: truncated", "plain", req(link[:-1]), NOW
    yield "signature: padded with =", "plain", req(link + "%3D"), NOW
    yield "signature: twice", "plain", req(link + "&signature=" + sig), NOW
    yield "signature: missing", "plain", req(link.partition("&signature=")[0]), NOW
    yield "signature: none at all", "plain", req("/files/report.pdf"), NOW
    yield "expiry: twice", "plain", req(link + f"&expires={NOW + HOUR}"), NOW
    yield "expiry: moved later", "plain", req(_swap(link, f"expires={NOW + HOUR}", f"expires={NOW + 2 * HOUR}")), NOW
    yield "expiry: leading zero", "plain", req(_swap(link, f"expires={NOW + HOUR}", f"expires=0{NOW + HOUR}")), NOW
    yield "kid: twice", "plain", req(_swap(link, "&signature", f"&kid={s.key_id}&signature")), NOW
    yield "kid: unknown", "plain", req(_swap(link, f"kid={s.key_id}", "kid=AAAAAA")), NOW
    yield "kid: removed", "plain", req(_swap(link, f"kid={s.key_id}&", "")), NOW
    yield "kid: empty", "plain", req(_swap(link, f"kid={s.key_id}", "kid=")), NOW
    yield "method: HEAD", "plain", req(link, method="HEAD"), NOW
    yield "method: POST", "plain", req(link, method="POST"), NOW
    yield "method: OPTIONS", "plain", req(link, method="OPTIONS"), NOW
    yield "target: not ASCII", "plain", req(link.replace("report", "r\u00e9port")), NOW
    yield "target: not a path", "plain", req("files/report.pdf?" + link.partition("?")[2]), NOW
    yield "target: too long", "plain", req(link + "&pad=" + "x" * 8200), NOW
    yield "target: fragment kept", "plain", req(link + "#frag"), NOW
    yield "path: dot segment added", "plain", req(_swap(link, "/files/", "/files/./")), NOW
    yield "path: encoded letter", "plain", req(_swap(link, "report", "%72eport")), NOW
    yield "path: lower-case escape", "plain", req(s.sign("/files/%7euser", expires_in=HOUR)), NOW
    # Times.
    for offset, label in ((-120, "two minutes early"), (-59, "59 seconds early (clock skew)"), (0, "at its start")):
        link = s.sign("/live/stream.m3u8", starts=NOW + 600, expires_at=NOW + HOUR)
        yield f"starts: {label}", "plain", req(link), NOW + 600 + offset
    link = s.sign("/live/stream.m3u8", starts=NOW + 600, expires_at=NOW + HOUR)
    yield "starts: moved earlier", "plain", req(_swap(link, f"starts={NOW + 600}", f"starts={NOW}")), NOW + 600
    yield "starts: after expiry", "plain", req(link), NOW + HOUR
    # Legacy links, keys and algorithms.
    yield "legacy: no kid, valid", "plain", req(_legacy(s, "/files/old.pdf", NOW + HOUR)), NOW
    yield "legacy: no kid, expired", "plain", req(_legacy(s, "/files/old.pdf", NOW + HOUR)), NOW + HOUR
    old = _signer("plain", secret=OLD_SECRET)
    yield "rotation: current key", "rotation", req(s.sign("/files/a.pdf", expires_in=HOUR)), NOW
    yield "rotation: retired key", "rotation", req(old.sign("/files/a.pdf", expires_in=HOUR)), NOW
    retired = old.sign("/files/a.pdf", expires_in=HOUR)
    yield "rotation: retired key, tampered path", "rotation", req(_swap(retired, "/files/a", "/files/b")), NOW
    changed = retired[:-1] + ("A" if retired[-1] != "A" else "B")
    yield "rotation: retired key, signature changed", "rotation", req(changed), NOW
    retired_folder = old.sign_prefix("/videos/12/", expires_in=HOUR).link("a.ts")
    yield "rotation: retired key, folder link", "rotation", req(retired_folder), NOW
    moved = _swap(retired_folder, "prefix=%2Fvideos%2F12%2F", "prefix=%2Fvideos%2F")
    yield "rotation: retired key, folder widened", "rotation", req(moved), NOW
    yield "rotation: retired key, no kid", "rotation", req(_legacy(old, "/files/a.pdf", NOW + HOUR)), NOW
    yield "rotation: retired key, not in keyring", "plain", req(old.sign("/files/a.pdf", expires_in=HOUR)), NOW
    other = _signer("plain", secret=OTHER_SECRET)
    yield "another site's key", "plain", req(other.sign("/files/a.pdf", expires_in=HOUR)), NOW
    for hasher in ("blake2b", "blake2s", "blake3"):
        link = _signer("plain", hasher=hasher).sign("/files/a.pdf", expires_in=HOUR)
        yield f"algorithm: {hasher} link", "plain", req(link), NOW
    other_purpose = URLSigner(SECRET, purpose="avatars", hasher="hmac-sha256", clock=lambda: NOW)
    yield "another purpose", "plain", req(other_purpose.sign("/files/a.pdf", expires_in=HOUR)), NOW
    # What only the origin can check.
    yield "single use", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, single_use=True)), NOW
    yield "single use, expired", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, single_use=True)), NOW + HOUR
    yield (
        "single use, on POST",
        "plain",
        req(s.sign("/files/a.pdf", expires_in=HOUR, single_use=True, consume_on="post")),
        NOW,
    )
    yield "group", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, group="course-42")), NOW
    yield "group, expired", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, group="course-42")), NOW + 2 * HOUR
    yield "download name", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, filename="Report.pdf")), NOW
    yield "inline", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, disposition="inline")), NOW
    yield "bound to a user", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, bind=42)), NOW
    yield "bound, expired", "plain", req(s.sign("/files/a.pdf", expires_in=HOUR, bind=42)), NOW + HOUR
    # Folders.
    folder = s.sign_prefix("/videos/12/", expires_in=HOUR)
    inside = [
        "index.m3u8",
        "720p/seg-001.ts",
        "a b.ts",
        "caf%C3%A9.ts",
        "%7Euser.ts",
        "deep/er/still/x.ts",
        "",
        "x%20y.ts",
    ]
    for index, rest in enumerate(inside):
        link = f"/videos/12/{rest}?{folder.query}"
        yield f"folder {index}: inside", "plain", req(link), NOW
        yield f"folder {index}: expired", "plain", req(link), NOW + HOUR
    outside = [
        "/videos/123/index.m3u8",
        "/videos/1/index.m3u8",
        "/videos/index.m3u8",
        "/videos/12",
        "/videos/12/../13/x.ts",
        "/videos/12/%2E%2E/13/x.ts",
        "/videos/12/%2e%2e/13/x.ts",
        "/videos/12/..%2F13/x.ts",
        "/videos/12/a%2Fb.ts",
        "/videos/12/a%5Cb.ts",
        "/videos/12/./x.ts",
        "/videos/12//x.ts",
        "/videos/12/%252E%252E/x.ts",
        "/videos/12/%25252E%25252E/x.ts",
        "/videos/12/%FF.ts",
        "/videos/12/%00.ts",
        "/videos/12/a%0Ab.ts",
        "/Videos/12/x.ts",
        "/videos/12/x/..",
        "/videos/12/x/%2E",
    ]
    for index, path in enumerate(outside):
        yield f"folder outside {index}: {path}", "plain", req(f"{path}?{folder.query}"), NOW
    link = f"/videos/12/x.ts?{folder.query}"
    yield "folder: prefix changed", "plain", req(_swap(link, "prefix=%2Fvideos%2F12%2F", "prefix=%2Fvideos%2F")), NOW
    yield "folder: prefix twice", "plain", req(link + "&prefix=%2Fvideos%2F12%2F"), NOW
    yield "folder: prefix unencoded", "plain", req(_swap(link, "prefix=%2Fvideos%2F12%2F", "prefix=/videos/12/")), NOW
    yield "folder: with a single-use nonce", "plain", req(link + "&once=AAAAAAAAAAAAAAAAAAAAAA"), NOW
    file_link = s.sign("/videos/12/", expires_in=HOUR)
    yield (
        "folder: a file link's query on another file",
        "plain",
        req("/videos/12/x.ts?" + file_link.partition("?")[2]),
        NOW,
    )
    yield "folder: a file link for the folder's own path", "plain", req(file_link), NOW
    yield "folder: query added", "plain", req(link + "&t=5"), NOW
    yield "folder: HEAD", "plain", req(link, method="HEAD"), NOW
    starting = s.sign_prefix("/videos/13/", starts=NOW + 600, expires_at=NOW + HOUR)
    yield "folder: not yet valid", "plain", req(f"/videos/13/a.ts?{starting.query}"), NOW
    yield "folder: valid from its start", "plain", req(f"/videos/13/a.ts?{starting.query}"), NOW + 600
    grouped = s.sign_prefix("/videos/14/", expires_in=HOUR, group="course-42")
    yield "folder: grouped", "plain", req(f"/videos/14/a.ts?{grouped.query}"), NOW
    yield "folder: grouped, outside", "plain", req(f"/videos/15/a.ts?{grouped.query}"), NOW
    root = s.sign_prefix("/", expires_in=HOUR)
    yield "folder: the root", "plain", req(f"/anything/at/all.ts?{root.query}"), NOW
    yield "folder: the root, dot segment", "plain", req(f"/a/../b.ts?{root.query}"), NOW
    # Grant cookies.
    grant = grants.grant(s, "/videos/12/", secure=True, expires_in=HOUR)
    cookie = f"{grant.name}={grant.value}"
    for index, path in enumerate(["/videos/12/index.m3u8", "/videos/12/720p/seg-001.ts", "/videos/12/a%20b.ts"]):
        yield f"grant {index}: inside", "plain", req(path, cookie), NOW
        yield f"grant {index}: expired", "plain", req(path, cookie), NOW + HOUR
    yield "grant: with other cookies", "plain", req("/videos/12/a.ts", f"sessionid=abc; {cookie}; theme=dark"), NOW
    yield "grant: spaces around", "plain", req("/videos/12/a.ts", f"  {cookie} ;x=1"), NOW
    yield "grant: outside its folder", "plain", req("/videos/13/a.ts", cookie), NOW
    yield "grant: dot segment out", "plain", req("/videos/12/../13/a.ts", cookie), NOW
    yield "grant: encoded dot segment out", "plain", req("/videos/12/%2E%2E/13/a.ts", cookie), NOW
    yield "grant: on POST", "plain", req("/videos/12/a.ts", cookie, method="POST"), NOW
    yield "grant: a query without signature", "plain", req("/videos/12/a.ts?t=5", cookie), NOW
    yield "grant: a signed URL wins", "plain", req(s.sign("/videos/12/a.ts", expires_in=HOUR), cookie), NOW
    yield "grant: a bad signed URL is not rescued", "plain", req("/videos/12/a.ts?signature=" + "A" * 43, cookie), NOW
    yield "grant: value tampered", "plain", req("/videos/12/a.ts", cookie.replace("expires:", "expires:1")), NOW
    yield "grant: value with = instead of :", "plain", req("/videos/12/a.ts", cookie.replace(":", "=")), NOW
    yield "grant: name without __Secure-", "plain", req("/videos/12/a.ts", cookie.removeprefix("__Secure-")), NOW
    yield "grant: no cookie", "plain", req("/videos/12/a.ts", "sessionid=abc"), NOW
    yield "grant: empty header", "plain", req("/videos/12/a.ts", ""), NOW
    yield "grant: cookie twice, last bad", "plain", req("/videos/12/a.ts", f"{cookie}; {grant.name}=x"), NOW
    yield "grant: cookie twice, last good", "plain", req("/videos/12/a.ts", f"{grant.name}=x; {cookie}"), NOW
    deeper = grants.grant(s, "/videos/12/720p/", secure=True, expires_in=HOUR)
    other_folder = grants.grant(s, "/videos/99/", secure=True, expires_in=HOUR)
    both = f"{cookie}; {deeper.name}={deeper.value}; {other_folder.name}={other_folder.value}"
    yield "grants: the deepest folder's", "plain", req("/videos/12/720p/seg-001.ts", both), NOW
    yield "grants: the shallower folder's", "plain", req("/videos/12/480p/seg-001.ts", both), NOW
    yield "grants: none for this folder", "plain", req("/videos/13/a.ts", both), NOW
    yield (
        "grants: only another folder's",
        "plain",
        req("/videos/12/a.ts", f"{other_folder.name}={other_folder.value}"),
        NOW,
    )
    swapped = f"{deeper.name}={cookie.partition('=')[2]}; {other_folder.name}={other_folder.value}"
    yield "grants: a value under another folder's name", "plain", req("/videos/12/720p/a.ts", swapped), NOW
    blake = grants.grant(_signer("plain", hasher="blake2b"), "/videos/12/", secure=True, expires_in=HOUR)
    yield "grant: a BLAKE2b grant", "plain", req("/videos/12/a.ts", f"{blake.name}={blake.value}"), NOW
    root_grant = grants.grant(s, "/", secure=True, expires_in=HOUR)
    yield "grant: __Host- for the root", "plain", req("/a/b.ts", f"{root_grant.name}={root_grant.value}"), NOW
    file_query = s.sign("/videos/12/a.ts", expires_in=HOUR).partition("?")[2].replace("=", ":")
    yield "grant: a file link's query as a cookie", "plain", req("/videos/12/a.ts", f"{grant.name}={file_query}"), NOW
    # Host binding.
    h = _signer("host")
    link = h.sign("https://media.example.com/files/a.pdf", expires_in=HOUR)
    target = "/" + link.split("/", 3)[3]
    yield "host: right host", "host", req(target, host="media.example.com"), NOW
    yield "host: upper case", "host", req(target, host="MEDIA.example.COM"), NOW
    yield "host: default port", "host", req(target, host="media.example.com:443"), NOW
    yield "host: another port", "host", req(target, host="media.example.com:8443"), NOW
    yield "host: another host", "host", req(target, host="evil.example.com"), NOW
    yield "host: http scheme, same host", "host", req(target, host="media.example.com", scheme="http"), NOW
    yield "host: http default port on https", "host", req(target, host="media.example.com:80"), NOW
    port = h.sign("http://127.0.0.1:8080/files/a.pdf", expires_in=HOUR)
    target = "/" + port.split("/", 3)[3]
    yield "host: with a port", "host", req(target, host="127.0.0.1:8080", scheme="http"), NOW
    yield "host: port dropped", "host", req(target, host="127.0.0.1", scheme="http"), NOW
    hf = h.sign_prefix("https://media.example.com/videos/12/", expires_in=HOUR)
    yield "host: folder", "host", req(f"/videos/12/a.ts?{hf.query}", host="media.example.com"), NOW
    yield "host: folder, another host", "host", req(f"/videos/12/a.ts?{hf.query}", host="other.example"), NOW
    hg = grants.grant(h, "/videos/12/", secure=True, origin="https://media.example.com", expires_in=HOUR)
    yield "host: grant", "host", req("/videos/12/a.ts", f"{hg.name}={hg.value}", host="media.example.com"), NOW
    yield (
        "host: grant, another host",
        "host",
        req("/videos/12/a.ts", f"{hg.name}={hg.value}", host="other.example"),
        NOW,
    )
    # Names and ignored parameters.
    n = _signer("names")
    link = n.sign("/media/a.mp4", expires_in=HOUR)
    yield "names: valid", "names", req(link), NOW
    yield "names: ignored utm_source added", "names", req(link + "&utm_source=mail"), NOW
    yield "names: ignored fbclid added", "names", req(link + "&fbclid=abc"), NOW
    yield "names: ignored v1 added (? pattern)", "names", req(link + "&v1=x"), NOW
    yield "names: v12 is not ignored", "names", req(link + "&v12=x"), NOW
    yield "names: utm alone is not ignored", "names", req(link + "&utm=x"), NOW
    yield "names: default signature name", "names", req(link.replace("&sig=", "&signature=")), NOW
    yield "names: expired", "names", req(link), NOW + HOUR
    nf = n.sign_prefix("/media/v/", expires_in=HOUR)
    yield "names: folder", "names", req(f"/media/v/x.ts?{nf.query}"), NOW
    yield "names: folder, outside", "names", req(f"/media/w/x.ts?{nf.query}"), NOW
    yield "names: folder with utm", "names", req(f"/media/v/x.ts?utm_medium=x&{nf.query}"), NOW
    ng = grants.grant(n, "/media/v/", secure=False, expires_in=HOUR)
    yield "names: grant", "names", req("/media/v/x.ts", f"{ng.name}={ng.value}"), NOW
    yield (
        "names: plain link signed by the default names",
        "names",
        req(
            URLSigner(SECRET, purpose="media", hasher="hmac-sha256", clock=lambda: NOW).sign(
                "/media/a.mp4", expires_in=HOUR
            )
        ),
        NOW,
    )


#: Playlists a front server rewrites for a folder link: (name, text, playlist path), all under ``/videos/12/``.
PLAYLISTS: Final = (
    ("media playlist", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg0.ts\n#EXTINF:2.0,\nseg1.ts\n"
     "#EXT-X-ENDLIST\n", "/videos/12/v0/index.m3u8"),
    ("master playlist", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nv0/index.m3u8\n"
     "#EXT-X-STREAM-INF:BANDWIDTH=200000\nv1/index.m3u8\n", "/videos/12/master.m3u8"),
    ("CRLF and CR line endings", "#EXTM3U\r\n#EXTINF:2,\r\nseg0.ts\r\nseg1.ts\rseg2.ts", "/videos/12/a.m3u8"),
    ("a BOM and spaces around URIs", "\ufeff#EXTM3U\n  seg0.ts \t\n\tseg1.ts\n", "/videos/12/a.m3u8"),
    ("URI attributes", '#EXTM3U\n#EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"\n#EXT-X-KEY:METHOD=AES-128,URI="k.bin",'
     'IV=0x1\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",URI="audio/en.m3u8"\n#EXT-X-I-FRAME-STREAM-INF:URI="if.m3u8"\n',
     "/videos/12/a.m3u8"),
    ("an attribute list that cannot be read", '#EXT-X-KEY:METHOD=AES-128,URI="k.bin" junk\n#EXT-X-MAP:URI=x.mp4\n',
     "/videos/12/a.m3u8"),
    ("tags no player fetches", '#EXTM3U\n#EXT-X-DATERANGE:ID="a",X-URI="x.ts"\n#EXT-NOT-A-TAG:URI="x.ts"\n'
     "# seg0.ts\n", "/videos/12/a.m3u8"),
    ("URIs outside the folder or not simple", "../13/x.ts\n./seg0.ts\n/videos/12/seg0.ts\nhttps://cdn.example/x.ts\n"
     "//cdn.example/x.ts\nseg0.ts?t=1\nseg%200.ts\na b.ts\nseg0.ts#t=5\ndata:x\n.hidden\nx/../y.ts\n",
     "/videos/12/a.m3u8"),
    ("deeper playlists", "seg0.ts\nsub/seg1.ts\n", "/videos/12/720p/x/index.m3u8"),
    ("a playlist at the prefix", "seg0.ts\n", "/videos/12/index.m3u8"),
    ("empty", "", "/videos/12/a.m3u8"),
    ("blank lines kept", "\n\n#EXTM3U\n\nseg0.ts\n\n", "/videos/12/a.m3u8"),
    ("a URI line of unreserved punctuation", "a-b_c~d.e.ts\n~\n...\n", "/videos/12/a.m3u8"),
)  # fmt: skip


def playlist_cases() -> Iterator[dict[str, Any]]:
    """Playlists, and the queries their URIs get: ``front_server_rewrite``'s vectors."""
    signer = _signer("plain")
    folder = signer.sign_prefix("/videos/12/", expires_in=HOUR)
    query = playlist_query(KeyringSigner(keyrings.make(SECRET, purpose="downloads")), f"/x?{folder.query}")
    assert query is not None
    for name, text, path in PLAYLISTS:
        expect = front_server_rewrite(text, query, path, folder.prefix)
        yield {"name": name, "text": text, "query": query, "path": path, "prefix": folder.prefix, "expect": expect}


def playlist_query_cases(rings: dict[str, keyrings.Keyring]) -> Iterator[dict[str, Any]]:
    """Request targets of allowed folder links and the query their playlist's URIs get (None: none)."""
    plain, names = _signer("plain"), _signer("names")
    folder, named = plain.sign_prefix("/videos/12/", expires_in=HOUR), names.sign_prefix("/media/v/", expires_in=HOUR)
    targets = [
        ("plain", f"/videos/12/a.m3u8?{folder.query}"),
        ("plain", f"/videos/12/a.m3u8?{_reorder('x?' + folder.query).partition('?')[2]}"),
        ("plain", f"/videos/12/a.m3u8?{folder.query}&t=5"),
        ("plain", f"/videos/12/a.m3u8?{folder.query.replace('prefix=', '%70refix=')}"),
        ("plain", f"/videos/12/a.m3u8?x=a+b%2b&{folder.query}#frag"),
        ("plain", "/videos/12/a.m3u8"),
        ("plain", "/videos/12/a.m3u8?t=5"),
        ("names", f"/media/v/a.m3u8?utm_source=x&{named.query}&fbclid=1"),
    ]
    for ring, target in targets:
        yield {"keyring": ring, "target": target, "expect": playlist_query(KeyringSigner(rings[ring]), target)}


def _reorder(link: str) -> str:
    path, _, query = link.partition("?")
    return f"{path}?{'&'.join(reversed(query.split('&')))}"


def keyrings_made() -> dict[str, keyrings.Keyring]:
    """The vectors' keyrings (``KEYRINGS``), by name."""
    return {name: keyrings.make(SECRET, fallbacks=_fallbacks(name), **_options(name)) for name in KEYRINGS}


def vector(name: str, ring: str, now: int, request: Request, verdict: Verdict) -> dict[str, Any]:
    """One vector as the file holds it: the request, its time and keyring, and the reference's verdict."""
    expect = {
        "decision": verdict.decision,
        "prefix": verdict.prefix,
        "below": verdict.below,
        "granted": verdict.granted,
    }
    return {
        "name": name,
        "keyring": ring,
        "now": now,
        "request": request._asdict(),
        "expect": expect,
        "why": verdict.why,
    }


def build() -> dict[str, Any]:
    """The vectors file's content."""
    rings = keyrings_made()
    vectors = [
        vector(name, ring, now, request, decide(KeyringSigner(rings[ring], clock=_at(now)), request))
        for name, ring, request, now in cases()
    ]
    return {
        "about": "blake2sign_web link format test vectors: docs/link-format.md",
        "keyrings": {name: ring.to_json() for name, ring in rings.items()},
        "vectors": vectors,
        "playlist_queries": list(playlist_query_cases(rings)),
        "playlists": list(playlist_cases()),
    }


def _at(now: int) -> Callable[[], float]:
    return lambda: now


def _fallbacks(name: str) -> list[str]:
    return list(KEYRINGS[name].get("fallbacks", []))


def _options(name: str) -> dict[str, Any]:
    return {k: v for k, v in KEYRINGS[name].items() if k != "fallbacks"}


def dumps() -> str:
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"
