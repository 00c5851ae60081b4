"""HLS playlists signed with a folder link (``links.playlists``): which URIs get the query, which never do,
and that every URI given it verifies where a player would fetch it."""

from __future__ import annotations

import io
import logging
from urllib.parse import urljoin, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blake2sign_web import URLSigner
from blake2sign_web.links import folders as link_prefix
from blake2sign_web.links import playlists
from blake2sign_web.links.playlists import (
    MAX_LINE_LENGTH,
    MAX_PLAYLIST_SIZE,
    MAX_SERVED_SIZE,
    TOO_LARGE,
    PlaylistTooLarge,
    answer,
    is_playlist,
    link_query,
    passed_query,
    rewritten,
    served,
    sign_playlist,
    with_query,
)

SIGNER = URLSigner("playlist-tests-secret-0123456789", purpose="videos", ignore=["utm_*"])
FOLDER = SIGNER.sign_prefix("/videos/1/", expires_in=3600)
Q = FOLDER.query

MASTER = """#EXTM3U
#EXT-X-VERSION:6
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English, main",DEFAULT=YES,URI="audio/en.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=220000,RESOLUTION=160x120,CODECS="avc1.f40009,mp4a.40.2",AUDIO="aud"
v0/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=110000,CODECS="avc1.f4000a"
v1/index.m3u8
#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=20000,URI="v0/iframes.m3u8"
"""


def test_a_master_playlist_signs_its_variants_and_renditions() -> None:
    signed = sign_playlist(MASTER, FOLDER, "master.m3u8")
    assert signed == (
        MASTER.replace('"audio/en.m3u8"', f'"audio/en.m3u8?{Q}"')
        .replace("v0/index.m3u8\n", f"v0/index.m3u8?{Q}\n")
        .replace("v1/index.m3u8\n", f"v1/index.m3u8?{Q}\n")
        .replace('"v0/iframes.m3u8"', f'"v0/iframes.m3u8?{Q}"')
    )
    assert sign_playlist(MASTER, FOLDER, "/videos/1/master.m3u8") == signed  # the same playlist, by its path


def test_a_media_playlist_signs_its_key_map_byte_range_segments_and_parts() -> None:
    media = (
        "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
        '#EXT-X-KEY:METHOD=AES-128,URI="/videos/1/keys/k1.bin",IV=0x00000000000000000000000000000001\n'
        '#EXT-X-MAP:URI="init.mp4",BYTERANGE="720@0"\n'
        "#EXTINF:2.0,\n#EXT-X-BYTERANGE:75232@720\nall.mp4\n"
        "#EXTINF:2.0,\n#EXT-X-BYTERANGE:82112\nall.mp4\n"
        '#EXT-X-PART:DURATION=0.5,URI="part1.mp4",INDEPENDENT=YES\n'
        '#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part2.mp4"\n'
        '#EXT-X-RENDITION-REPORT:URI="../1/v1/index.m3u8",LAST-MSN=4\n'
        "#EXT-X-ENDLIST\n"
    )
    signed = sign_playlist(media, FOLDER, "v0/index.m3u8")
    for uri in ("/videos/1/keys/k1.bin", "init.mp4", "part1.mp4", "part2.mp4", "../1/v1/index.m3u8"):
        assert f'URI="{uri}?{Q}"' in signed
    assert signed.count(f"\nall.mp4?{Q}\n") == 2
    assert "#EXT-X-BYTERANGE:75232@720\n" in signed
    assert "IV=0x00000000000000000000000000000001\n" in signed
    assert 'BYTERANGE="720@0"' in signed


@pytest.mark.parametrize(
    "uri",
    [
        "../../2/seg.ts",  # resolves to /videos/2/
        "/videos/10/seg.ts",
        "/videos/seg.ts",
        "https://cdn.example.com/videos/1/seg.ts",  # another host would learn the signature
        "//cdn.example.com/videos/1/seg.ts",
        "data:text/plain;base64,AAAA",
        "javascript:alert(1)",
        "seg.ts?token=1",  # its own query: the folder's MAC would not cover it
        "%2e%2e/2/seg.ts",  # a dot segment no player removes: below() refuses it
        "a%2Fb.ts",
        "caf\u00e9.ts",
        "with space.ts",
        "skey://key-id",
        "\\\\cdn.example.com/videos/1/seg.ts",  # a browser reads "\\host" as "//host"
        "/\t/cdn.example.com/videos/1/seg.ts",  # and drops the tab: "//host"
        "seg\x0b.ts",
    ],
)
def test_uris_outside_the_prefix_or_unsafe_to_sign_are_left_alone(uri: str) -> None:
    for text in (f"#EXTM3U\n#EXTINF:1,\n{uri}\n", f'#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI="{uri}"\n'):
        assert sign_playlist(text, FOLDER, "v0/index.m3u8", origin="https://example.com") == text


def test_dot_segments_that_resolve_inside_the_prefix_are_signed_as_written() -> None:
    text = "#EXTINF:1,\n../v1/seg.ts\n#EXTINF:1,\n./seg.ts\n#EXTINF:1,\n../../1/seg.ts\n"
    signed = sign_playlist(text, FOLDER, "v0/index.m3u8")
    assert signed == text.replace(".ts\n", f".ts?{Q}\n")


def test_absolute_urls_are_signed_only_on_the_playlists_own_origin() -> None:
    text = "https://example.com/videos/1/a.ts\nhttp://example.com/videos/1/b.ts\n//example.com/videos/1/c.ts\n"
    signed = sign_playlist(text, FOLDER, "master.m3u8", origin="https://EXAMPLE.com")
    assert signed.splitlines() == [
        f"https://example.com/videos/1/a.ts?{Q}",
        "http://example.com/videos/1/b.ts",  # another scheme: another origin
        f"//example.com/videos/1/c.ts?{Q}",
    ]
    assert sign_playlist(text, FOLDER, "master.m3u8") == text  # no origin given: no absolute URL is signed
    bound = URLSigner("playlist-tests-secret-0123456789", purpose="videos", bind_host=True)
    folder = bound.sign_prefix("https://example.com/videos/1/", expires_in=60)
    assert (
        sign_playlist(text, folder, "master.m3u8").splitlines()[0]
        == f"https://example.com/videos/1/a.ts?{folder.query}"
    )


def test_line_endings_a_bom_fragments_and_blank_lines_are_kept() -> None:
    text = "\ufeff#EXTM3U\r\n#EXTINF:1,\r\nseg0.ts\r\n\r\n#EXTINF:1,\rseg1.ts#t=1\r  seg2.ts  \n"
    signed = sign_playlist(text, FOLDER, "index.m3u8")
    assert signed == (
        f"\ufeff#EXTM3U\r\n#EXTINF:1,\r\nseg0.ts?{Q}\r\n\r\n#EXTINF:1,\rseg1.ts?{Q}#t=1\r  seg2.ts?{Q}  \n"
    )


def test_attributes_are_read_as_a_list_not_searched() -> None:
    # A quoted value holding ',URI="' is one attribute's value, not another URI.
    text = '#EXT-X-MEDIA:TYPE=AUDIO,NAME="a,URI=",URI="en.m3u8",GROUP-ID="g"\n#EXT-X-KEY:METHOD=NONE\n'
    assert sign_playlist(text, FOLDER, "master.m3u8") == text.replace('"en.m3u8"', f'"en.m3u8?{Q}"')
    unreadable = '#EXT-X-KEY:METHOD=AES-128,URI="k.bin"garbage\n#EXT-X-UNKNOWN:URI="x.ts"\n'
    assert sign_playlist(unreadable, FOLDER, "master.m3u8") == unreadable


def test_limits() -> None:
    with pytest.raises(PlaylistTooLarge):
        with_query("#" * (MAX_PLAYLIST_SIZE + 1), Q, "/videos/1/m.m3u8", FOLDER.prefix)
    with pytest.raises(PlaylistTooLarge):
        with_query("#EXTM3U\n" + "a" * (MAX_LINE_LENGTH + 1) + "\n", Q, "/videos/1/m.m3u8", FOLDER.prefix)
    assert issubclass(PlaylistTooLarge, ValueError)


def test_a_query_that_could_end_an_attribute_or_a_line_is_refused() -> None:
    for query in ('a="b', "a=b\nc", "a=b c", "a=b,c", ""):
        with pytest.raises(ValueError, match="percent-encoded"):
            with_query("#EXTM3U\nseg.ts\n", query, "/videos/1/m.m3u8", FOLDER.prefix)


def test_the_playlist_itself_must_be_inside_the_prefix() -> None:
    for outside in ("/videos/2/master.m3u8", "../x.m3u8", "/videos/1/m.m3u8?x=1"):
        with pytest.raises(ValueError, match="not inside the signed prefix"):
            sign_playlist("#EXTM3U\n", FOLDER, outside)


def test_the_request_query_passed_on_is_the_signed_one_re_encoded() -> None:
    link = SIGNER.verify_link(FOLDER.link("master.m3u8"))
    query_string = "utm_source=mail%22%0A&" + FOLDER.query
    query = passed_query("v0/master.m3u8", link, query_string, SIGNER, True)
    assert query == FOLDER.query  # the ignored parameter (which could carry anything) is dropped
    assert passed_query("v0/master.m3u8", link, query_string, SIGNER, False) is None  # the option off
    assert passed_query("v0/seg0.ts", link, query_string, SIGNER, True) is None  # not a playlist
    assert passed_query("v0/master.m3u8", link, "utm_source=x", SIGNER, True) is None  # no signature in the URL
    single = SIGNER.verify_link(SIGNER.sign("/videos/1/master.m3u8", expires_in=60))
    assert passed_query("master.m3u8", single, "", SIGNER, True) is None  # a single-file link
    assert link_query("b=%22x%22&signature=s", "signature", lambda key: False) == "b=%22x%22&signature=s"


def test_a_playlist_over_the_limit_is_refused_not_rewritten(caplog: pytest.LogCaptureFixture) -> None:
    """Over ``MAX_SERVED_SIZE`` bytes (known from the file's size: HEAD too), or with a line over
    ``MAX_LINE_LENGTH``: 500 with a message, an error naming the fix; nothing rewritten."""
    link = SIGNER.verify_link(FOLDER.link("master.m3u8"))
    large = _Stored(b"#EXTM3U\n" + b"seg.ts\n" * (MAX_SERVED_SIZE // 7))
    with caplog.at_level(logging.ERROR, "blake2sign_web.signed_urls"):
        for method in ("GET", "HEAD"):
            assert served(large, Q, link, "", "master.m3u8", False, method) == TOO_LARGE  # type: ignore[arg-type]
        long_line = _Stored(b"#EXTM3U\n" + b"a" * (MAX_LINE_LENGTH + 1) + b"\n")
        assert served(long_line, Q, link, "", "master.m3u8", False, "GET") == TOO_LARGE  # type: ignore[arg-type]
    assert TOO_LARGE == (500, "This playlist is too large to be sent by a folder link.", {})
    assert large.closed
    assert (
        f"refused the playlist 'master.m3u8': {large.size} bytes, over the 1048576 a file view rewrites" in caplog.text
    )
    assert "playlist line over 65536 characters" in caplog.text
    assert "sign_playlist()" in caplog.text
    assert FOLDER.query.rpartition("=")[2] not in caplog.text
    with pytest.raises(PlaylistTooLarge):
        rewritten(b"#" * (MAX_SERVED_SIZE + 1), Q, link, "")  # a file that grew after its size was read


def test_head_is_answered_without_reading_or_rewriting() -> None:
    link = SIGNER.verify_link(FOLDER.link("master.m3u8"))
    stored = _Stored(b"#EXTM3U\nseg.ts\n")
    found = served(stored, Q, link, "", "master.m3u8", False, "HEAD")  # type: ignore[arg-type]
    assert isinstance(found, tuple)
    answered, body = found
    assert (answered.status, body, stored.reads, stored.closed) == (200, b"", 0, True)
    assert "Content-Length" not in answered.headers  # only the rewrite tells it (RFC 9110, 9.3.2)
    assert answered.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    whole = served(_Stored(b"#EXTM3U\nseg.ts\n"), Q, link, "", "master.m3u8", False, "GET")  # type: ignore[arg-type]
    assert isinstance(whole, tuple)
    got, body = whole
    assert body == f"#EXTM3U\nseg.ts?{Q}\n".encode()
    assert got.headers["Content-Length"] == str(len(body))


class _Stored:
    """A stored file as ``served`` reads it: its size, its body, closed once."""

    def __init__(self, data: bytes) -> None:
        self.data, self.size, self.reads, self.closed = data, len(data), 0, False

    def body(self, byte_range: None) -> tuple[io.BytesIO, int, int]:
        self.reads += 1
        return io.BytesIO(self.data), 0, self.size

    def close(self) -> None:
        self.closed = True


def test_rewritten_resolves_from_the_path_the_link_verified_at_and_keeps_bytes() -> None:
    link = SIGNER.verify_link(FOLDER.link("v0/index.m3u8"))
    data = b"#EXTM3U\n#EXT-X-TITLE:\xff\xfe\nseg0.ts\n../v1/seg0.ts\n/videos/2/x.ts\n"
    q = Q.encode()
    expected = b"#EXTM3U\n#EXT-X-TITLE:\xff\xfe\nseg0.ts?" + q + b"\n../v1/seg0.ts?" + q + b"\n/videos/2/x.ts\n"
    assert rewritten(data, Q, link, "http://h") == expected


def test_the_answer_is_whole_uncached_and_typed() -> None:
    link = SIGNER.verify_link(FOLDER.link("master.m3u8"))
    found = answer("v0/master.m3u8", False, link, 123)
    assert found.status == 200
    assert found.byte_range is None
    assert found.headers["Content-Type"] == "application/vnd.apple.mpegurl"
    assert found.headers["Cache-Control"] == "private, no-store"
    assert found.headers["Content-Length"] == "123"
    assert "ETag" not in found.headers
    assert "Accept-Ranges" not in found.headers
    assert found.headers["Content-Disposition"].startswith("inline")
    assert is_playlist("a/B.M3U8")
    assert is_playlist("list.m3u")
    assert not is_playlist("seg.ts")


segment = st.text("abcv0123-_.%/", min_size=1, max_size=12)
uri = st.one_of(
    segment,
    st.builds(lambda s: "../" + s, segment),
    st.builds(lambda s: "/videos/" + s, segment),
    st.builds(lambda s: "https://example.com/videos/" + s, segment),
    st.builds(lambda s: "https://other.example/videos/1/" + s, segment),
    st.builds(lambda s: s + "?x=1", segment),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(uri, min_size=1, max_size=8), st.sampled_from(["index.m3u8", "v0/index.m3u8", "a/b/c.m3u8"]))
def test_every_uri_signed_verifies_where_a_player_fetches_it_and_no_other_is_signed(
    uris: list[str], playlist: str
) -> None:
    text = "#EXTM3U\n" + "".join(f"#EXTINF:1,\n{u}\n" for u in uris)
    lines = sign_playlist(text, FOLDER, playlist, origin="https://example.com").split("\n")[2::2]
    base = "https://example.com" + FOLDER.prefix + playlist
    for written, signed in zip(uris, lines, strict=False):
        if signed == written:
            # Left alone: a player fetches it without the folder's signature, which would not verify there anyway.
            target = urlsplit(urljoin(base, written))
            if target.netloc == "example.com" and not target.query and not written.startswith("//"):
                with pytest.raises(Exception):  # noqa: B017,PT011  # BadSignature, or a URL no player sends
                    SIGNER.verify(target.path + "?" + Q)
            continue
        assert signed == written + "?" + Q
        target = urlsplit(urljoin(base, signed))
        assert target.netloc == "example.com"  # never another host
        SIGNER.verify(f"{target.path}?{target.query}")


@given(
    st.lists(
        st.sampled_from(["a", "seg.ts", "720p", "..", ".", "a.b", "~x", "-", "_", "x..y", "..."]),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(
        ["/files/videos/123/index.m3u8", "/files/videos/123/720p/i.m3u8", "/files/videos/i.m3u8", "/x/i.m3u8"]
    ),
)
def test_a_plain_relative_uri_is_signed_as_resolving_it_would(segments: list[str], playlist: str) -> None:
    """The shortcut for a relative URI of plain segments (appended to the playlist's folder) signs exactly what
    resolving it as RFC 3986 does would sign."""
    uri = "/".join(segments)
    query = URLSigner("x" * 40, purpose="p").sign_prefix("/files/videos/123/", expires_in=60).query
    resolved = playlists._signed_uri(uri, query, f"http://playlist.invalid{playlist}", "/files/videos/123/", None)
    assert playlists.with_query(uri + "\n", query, playlist, "/files/videos/123/") == resolved + "\n"


#: Lines a playlist may hold, the awkward ones included (BOMs, spaces, dot segments, escapes, other hosts).
AWKWARD_LINES = [
    "#EXTM3U", "#EXTINF:2.0,", "seg-1.ts", "a/b.ts", "./x.ts", "../v1/s.ts", "..", ".", "...", "a/../b.ts",
    "a//b.ts", "/videos/1/s.ts", "/videos/2/s.ts", "http://h/videos/1/s.ts", "//h/videos/1/x.ts", "data:x",
    "s.ts?x=1", "s.ts#f", " s.ts", "s.ts ", "\ufeffs.ts", "\ufeff \ufeffs.ts", "\ufeff#EXTM3U",
    "\t#EXT-X-MAP:URI=\"m\"",
    '#EXT-X-KEY:METHOD=AES-128,URI="key.bin",IV=0x1', '#EXT-X-MEDIA:TYPE=AUDIO,URI="../a.m3u8"', '#EXT-X-KEY:URI="bad',
    "#EXT-X-KEYS:URI=\"k\"", "", "  ", "\x0b", "s\x0bt.ts", "s.ts\x85", "\u2028s.ts", "é.ts", "%41.ts", "a/.", "~",
]  # fmt: skip


def line_by_line(text: str, query: str, path: str, prefix: str, origin: str) -> str:
    """The rewrite as it was before the one-pass loop: every line through ``_line`` (its rule, unchanged)."""
    own = playlists._origin(origin)
    base = f"{own[0] if own else 'http'}://playlist.invalid{path}"
    folder = path[: path.rfind("/") + 1]

    def add(uri: str) -> str:
        if playlists._SIMPLE_RELATIVE.fullmatch(uri) and playlists._DOT_SEGMENTS.isdisjoint(uri.split("/")):
            return uri if link_prefix.below(folder + uri, prefix) is None else f"{uri}?{query}"
        return playlists._signed_uri(uri, query, base, prefix, own)

    pieces = playlists._LINE_BREAKS.split(text)
    return "".join(piece if n % 2 else playlists._line(piece, add) for n, piece in enumerate(pieces))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(AWKWARD_LINES), st.sampled_from(["\n", "\r\n", "\r"])), max_size=10),
    st.sampled_from(
        [
            "/videos/1/m.m3u8",
            "/videos/1/v0/m.m3u8",
            "/videos/m.m3u8",
            "/videos/1/%C3%A9/m.m3u8",
            "/videos/1/a%2Fb/m.m3u8",
            "/videos/1//m.m3u8",
        ]
    ),
    st.sampled_from(["", "http://h"]),
)
def test_the_one_pass_rewrite_is_the_line_by_line_one(lines: list[tuple[str, str]], path: str, origin: str) -> None:
    text = "".join(line + end for line, end in lines)
    assert with_query(text, Q, path, "/videos/1/", origin) == line_by_line(text, Q, path, "/videos/1/", origin)
