"""Write the seed corpus: real tokens, cookies, links and headers, in each target's input layout.

    python -m tests.fuzz.make_corpus                   # rewrites tests/fuzz/corpus/<target>/ of every target
    python -m tests.fuzz.make_corpus encrypted_loads   # of the targets named

Seeds start the fuzzer from inputs that pass the MAC and reach the parsers behind it;
libFuzzer mutates copies of them (the tests never write here). Files are named by a
hash of their content. Tokens are issued at ``targets.NOW`` by the targets' fixed clock,
so they stay valid; the Django and Starlette-migration seeds are signed with the real
clock by keys the targets share and age out after two weeks, after which they still
exercise everything up to the expiry check.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.fuzz import targets as t

CORPUS = Path(__file__).resolve().parent / "corpus"

#: Values a session or a link holds in practice, and a few that take the rarer paths.
VALUES: tuple[Any, ...] = (
    {},
    {"user_id": 42},
    {"_auth_user_id": "7", "cart": [{"sku": "A-1", "qty": 2}], "flash": ["Saved."], "theme": "dark"},
    {"csrf": "x" * 64, "history": [f"/shop/item/{n}" for n in range(40)]},  # long enough to compress
    {"big": 2**70, "text": "caf\u00e9 \u2603"},  # beyond 64 bits: written by Python's json
    [1, 2.5, None, True, "list, not a session"],
)


def serializer_seeds() -> Iterator[tuple[str, bytes]]:
    for index, signer in enumerate(t.SERIALIZERS):
        for value in VALUES:
            try:
                token = signer.dumps(value)
            except ValueError:  # over this signer's max_decompressed_size
                continue
            yield "serializer_loads", t.serializer_loads_input(index, token)
            yield "serializer_body", t.serializer_body_input(index, token)
        if signer.format == 2:
            token = signer.dumps({"user_id": 42}, expires_in=3600, session_id=b"fuzz-sid")
            yield "serializer_loads", t.serializer_loads_input(index, token, mode=0x10 | 2)
            yield "serializer_body", t.serializer_body_input(index, token)
    # Signed with the fallback secret of signer 5, which still accepts it.
    old = t.SerializerSigner(t.OLD_SECRET, purpose="fuzz", clock=t.fixed_clock, dictionary=t.DICTIONARY)
    yield "serializer_loads", t.serializer_loads_input(5, old.dumps({"user_id": 42}), mode=0x10 | 1)


def payload_seeds() -> Iterator[tuple[str, bytes]]:
    options = (
        0,
        t.PAYLOAD_ZSTD,
        t.PAYLOAD_DICTIONARY,
        t.PAYLOAD_DICTIONARY | t.PAYLOAD_SESSION_ID | t.PAYLOAD_EXPIRES,
        t.PAYLOAD_FORMAT_1 | t.PAYLOAD_ZSTD,
        t.PAYLOAD_FORMAT_1 | t.PAYLOAD_EXPIRES,
    )
    for index, value in enumerate(VALUES):
        for bits in options:
            yield "serializer_payload", t.serializer_payload_input(index % len(t.SERIALIZERS), bits, value)
    texts = (b'{"n":123456789012345678901234567890}', b'{"s":"\\ud800"}', b'{"f":1e308,"g":-0.0}', b"[[[[[]]]]]")
    for text in texts:
        yield "serializer_payload", bytes([0, t.PAYLOAD_PYTHON_JSON]) + text
        yield "serializer_payload", bytes([2, t.PAYLOAD_PYTHON_JSON | t.PAYLOAD_DICTIONARY]) + text


def signer_seeds() -> Iterator[tuple[str, bytes]]:
    old = t.Signer(t.OLD_SECRET, purpose="fuzz", hasher="blake3")
    for data in (b"", b"hello", bytes(range(256)), b"/files/report.pdf"):
        for index, signer in enumerate(t.SIGNERS):
            if len(data) < 64 or signer.max_token_length > 512:  # the short signer takes 128 characters
                yield "signer_unsign", t.signer_unsign_input(index, signer.sign(data))
        yield "signer_unsign", t.signer_unsign_input(1, old.sign(data))


URLS = (
    "/files/report.pdf?download=1",
    "/files/a%2Fb/c.txt",
    "/caf%C3%A9/menu?q=a+b&q=c&empty=",
    "/d/%2E%2E/x/./y",
    "/p?utm_source=mail&fbclid=1&id=7#top",
    "relative/path?x=1",
    "https://Example.COM:443/x?y=1#frag",
    "http://user@host:8080/%7Euser/",
)


def url_seeds() -> Iterator[tuple[str, bytes]]:
    for url in URLS:
        for kind in (0, 1, 3):
            yield "url_sign_verify", t.url_sign_verify_input(0, 0, kind, url)
        yield "url_sign_verify", t.url_sign_verify_input(1, 2, 1, url)
        for index, signer in enumerate(t.URL_SIGNERS):
            for binding, expires_in, single_use in ((0, None, False), (1, 3600, False), (2, 60, True)):
                try:
                    link = signer.sign(url, bind=t.BINDINGS[binding], expires_in=expires_in, single_use=single_use)
                except ValueError:  # a relative URL for the host-bound signer, or over max_url_length
                    continue
                if binding != 2:  # the single-use links vary (a random nonce): keep the corpus stable
                    yield "url_verify", t.url_verify_input(index, binding, link)


def starlette_seeds() -> Iterator[tuple[str, bytes]]:
    plain, migrating, expiring = t._starlette_middlewares()
    for value in VALUES[:5]:
        token = plain._writer.dumps(value)
        yield "starlette_cookie", t.starlette_cookie_input(0, f"session={token}")
        yield "starlette_cookie", t.starlette_cookie_input(0, f'theme=dark; session="{token}"; lang=en')
        yield "starlette_cookie", t.starlette_cookie_input(1, f"session={migrating._writer.dumps(value)}")
        yield "starlette_cookie", t.starlette_cookie_input(2, "a=1", f"sid={expiring._writer.dumps(value)}")
    for payload in (b'{"user_id": 42}', b'{"cart": [1, 2], "n": 123456789012345678901}', b"[]", b"not json"):
        yield "starlette_cookie", t.starlette_cookie_input(1, f"session={t.legacy_cookie(payload)}")
        yield "starlette_legacy_body", payload
    for header in ('session=""', "session", "=session", "session=a\\073b", "\tsession = x ;session=y", "Session=1"):
        yield "starlette_cookie", t.starlette_cookie_input(0, header)


def django_seeds() -> Iterator[tuple[str, bytes]]:
    t.build_django_session()  # sets Django up
    from blake2sign_web.django.conf import session_config

    writer = session_config().writer
    for value in VALUES:
        yield "django_session", t.django_session_input(writer.dumps(value))
        for options in (t.PAYLOAD_DICTIONARY, t.PAYLOAD_FORMAT_1 | t.PAYLOAD_EXPIRES):
            seed = t.serializer_payload_input(0, options, value)  # the payload target's layout, less the signer
            yield "django_session", bytes([1 | seed[1] << 1]) + seed[2:]


def encrypted_seeds() -> Iterator[tuple[str, bytes]]:
    import itertools
    from datetime import date, datetime, timezone

    counter = itertools.count()
    signers = t.encrypted_signers()
    writers = list(signers)
    # The decrypt-only signer writes signed tokens: its encrypted seeds come from an encrypting twin.
    writers[3] = t.SerializerSigner(
        t.SECRET, purpose="fuzz", clock=t.fixed_clock, encrypt=True, hasher="blake3", max_decompressed_size=64
    )
    for index, writer in enumerate(writers):
        writer._random_bytes = lambda size: next(counter).to_bytes(size, "big")  # type: ignore[attr-defined]
        values = list(VALUES)
        if writer.typed:
            values.append({"at": datetime(2026, 1, 1, tzinfo=timezone.utc), "ids": (1, 2), "day": date(2026, 1, 2)})
        for value in values:
            try:
                token = writer.dumps(value)
            except ValueError:  # over this signer's max_decompressed_size
                continue
            yield "encrypted_loads", t.encrypted_loads_input(index, token)
        token = writer.dumps({"user_id": 42}, expires_in=3600, session_id=b"fuzz-sid")
        yield "encrypted_loads", t.encrypted_loads_input(index, token, mode=0x10 | 2)
    old = t.SerializerSigner(t.OLD_SECRET, purpose="fuzz", clock=t.fixed_clock, encrypt=True, typed=True)
    old._random_bytes = lambda size: bytes(size)  # type: ignore[attr-defined]
    yield "encrypted_loads", t.encrypted_loads_input(1, old.dumps({"user_id": 42}), mode=0x10 | 1)
    yield "encrypted_loads", t.encrypted_loads_input(0, "x")
    issued = t.NOW.to_bytes(4, "big")
    expires = (t.NOW + 3600).to_bytes(4, "big")
    payloads = (b"{}", b'{"user_id":42}', b'{"at":{" dt":"2026-01-01T00:00:00"},"t":{" t":[1]},"e":{" e":{" t":1}}}')
    for index in range(len(signers)):
        for payload in payloads:
            yield "encrypted_plaintext", t.encrypted_plaintext_input(index, bytes([0]) + issued + payload)
            yield "encrypted_plaintext", t.encrypted_plaintext_input(index, bytes([1]) + issued + payload)
        yield (
            "encrypted_plaintext",
            t.encrypted_plaintext_input(index, bytes([2 | 8]) + issued + expires + b"fuzz-sid{}"),
        )
        yield (
            "encrypted_plaintext",
            t.encrypted_plaintext_input(index, bytes([4]) + issued + b"123456789012345678901234"),
        )
    from blake2sign_web.signing import compression

    frame = compression.compress(b'{"user_id":42,"cart":[]}', t.DICTIONARY)
    yield "encrypted_plaintext", t.encrypted_plaintext_input(2, bytes([16]) + issued + bytes([t.DICTIONARY]) + frame)
    frame = compression.compress(b'{"history":["/a","/a","/a","/a","/a","/a"]}')
    yield "encrypted_plaintext", t.encrypted_plaintext_input(0, bytes([32]) + issued + frame)


def chunk_seeds() -> Iterator[tuple[str, bytes]]:
    """Real session tokens in the cookies split_token writes, whole or altered as a browser may send them back."""
    signer = t.SERIALIZERS[4]  # format 1, not compressed: the length is the JSON's
    # Just over what one cookie holds beside its attributes, so that both cookies fit in max_len.
    big = signer.dumps({"history": [hashlib.sha1(bytes([n])).hexdigest() for n in range(70)]})  # not security
    small = signer.dumps({"user_id": 42})
    attributes = "; Path=/; Max-Age=1209600; Secure; HttpOnly; SameSite=Lax"
    for name_index, name in enumerate(t.CHUNK_NAMES):
        cookies = t.split_token(name, big, attributes_length=len(attributes), max_chunks=t.CHUNK_LIMIT)
        assert len(cookies) >= 2
        yield "chunk_cookies", t.chunk_cookies_input(4, name_index, cookies)
        yield "chunk_cookies", t.chunk_cookies_input(4, name_index, [*cookies, (t.chunk_name(name, 5), "stale")])
        yield "chunk_cookies", t.chunk_cookies_input(4, name_index, [("theme", "dark"), (name, small)])
    name = "session"
    # A short token split under small limits, so that the seeds hold every count from 2 to 9.
    by_count: dict[int, list[tuple[str, str]]] = {}
    for limit in range(len(small) + len(name) + 1, len(name) + 5, -1):
        with contextlib.suppress(ValueError):  # past the cap, or no room left
            split = t.split_token(name, small, attributes_length=0, limit=limit, max_chunks=t.CHUNK_LIMIT)
            by_count.setdefault(len(split), split)
    for count in range(2, t.CHUNK_LIMIT + 1):
        cookies = by_count[count]
        yield "chunk_cookies", t.chunk_cookies_input(t.CHUNK_LIMIT, 0, cookies)
        if count > t.MIN_CHUNKS:
            yield "chunk_cookies", t.chunk_cookies_input(count - 1, 0, cookies)  # over the reader's cap
        yield "chunk_cookies", t.chunk_cookies_input(t.CHUNK_LIMIT, 0, cookies[:-1])  # the last chunk lost
        yield "chunk_cookies", t.chunk_cookies_input(t.CHUNK_LIMIT, 0, cookies[1:])  # the first lost (curl)
    for header in ("", ".", ".2.", ".2.abc", ".1.abc", ".0.x", ".x.abc", ".10.abc", "..abc", ".9.a"):
        yield "chunk_cookies", t.chunk_cookies_input(4, 0, [(name, header), (f"{name}.1", "piece")])
    yield "chunk_cookies", t.chunk_cookies_input(4, 0, [(f"{name}.1", "a chunk without its first cookie")])
    yield "chunk_cookies", t.chunk_cookies_input(4, 0, [])
    # The round trip: tokens of every length class, under each limit, with and without room for attributes.
    for limit_index, limit in enumerate(t.CHUNK_LIMITS):
        for token in (small, big[: limit * 3], ""):
            for max_chunks, attributes in ((t.CHUNK_LIMIT, 0), (2, 200)):
                yield (
                    "chunk_cookies",
                    t.chunk_round_trip_input(max_chunks, limit_index, limit_index, attributes, token),
                )
    yield "chunk_cookies", t.chunk_round_trip_input(4, 0, 0, 0, ".2.abc")  # a token never starts with "."


def range_seeds() -> Iterator[tuple[str, bytes]]:
    headers = (
        "bytes=0-99",
        "bytes=-500",
        "bytes=100-",
        "bytes=0-0,5-9",
        "bytes=5-1",
        "items=0-1",
        " BYTES = 1 - 2 ",
        "bytes=9999999999999999999-",
        "bytes=-0",
        "bytes=",
    )
    for size in (0, 1, 1000, 2**40):
        for choice, header in enumerate(headers):
            yield "byte_range", t.byte_range_input(size, choice % len(t.IF_RANGES), header)


def seeds() -> Iterator[tuple[str, bytes]]:
    yield from serializer_seeds()
    yield from payload_seeds()
    yield from signer_seeds()
    yield from url_seeds()
    yield from starlette_seeds()
    yield from django_seeds()
    yield from range_seeds()
    yield from encrypted_seeds()
    yield from chunk_seeds()


def main(names: list[str]) -> None:
    """Rewrite the seeds of the targets named, or of every target."""
    unknown = set(names) - set(t.BUILDERS)
    if unknown:
        sys.exit(f"no such target: {', '.join(sorted(unknown))}")
    written: dict[str, set[bytes]] = {name: set() for name in names or t.BUILDERS}
    for name, data in seeds():
        if name in written:
            written[name].add(data)
    for name, inputs in written.items():
        if not inputs:
            sys.exit(f"no seeds for {name}")
        folder = CORPUS / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for data in inputs:
            (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)  # a file name, not security
        print(f"{name}: {len(inputs)} seeds, {sum(map(len, inputs))} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
