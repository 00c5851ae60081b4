"""Folder links, differentially: every path a prefix link accepts is served only from inside the prefix's folder.

The paths (hypothesis, and a hand list of known tricks) go to Django's ``SignedFileView`` (through Django's test
client, which decodes the target into PATH_INFO as WSGI servers do) and Starlette's ``SignedFiles`` (an ASGI scope
built as uvicorn builds it: ``raw_path`` as sent, ``path`` percent-decoded), both serving a temporary tree with
files inside and outside the folder, a folder whose name extends the prefix's (``videos/1234``), another case
(``Videos/123``), and symbolic links inside the folder pointing out of it (to the root, to a sibling folder, out
of the root). Each file holds its own path: what a 200 sends says which file was opened.

Two properties, per framework: a 200 only ever sends a file inside ``videos/123/``; and a path that the core says
is inside the prefix (``link_prefix.below``) and that names, without any link, a regular file of the folder is
served (the check refuses nothing the folder holds). CI runs a short run; ``pytest --long`` runs at least
``LONG_PATHS`` paths per framework (the count is printed).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import pytest
from django.test import Client
from django.urls import path as route
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from blake2sign_web import URLSigner
from blake2sign_web.django import SignedFileView
from blake2sign_web.links import folders as link_prefix
from blake2sign_web.starlette import SignedFiles
from tests.django_links import use_served_storage
from tests.longrun import is_long

urlpatterns = [route("files/<path:name>", SignedFileView.as_view(storage="signed_test"))]
pytestmark = pytest.mark.urls(__name__)

#: Paths per framework in the long run (``--long``) and in CI.
LONG_PATHS = 100_000
BATCH = 50
#: Hypothesis examples (batches of ``BATCH`` paths) per framework: a margin over ``LONG_PATHS`` in the long run.
BATCHES = LONG_PATHS // BATCH + 100 if is_long() else 20
FOLDER = "videos/123"
PREFIX = "/files/videos/123/"
INSIDE = ("seg1.ts", "seg2.ts", "sub/deep.ts", "caf\u00e9 x.ts", "100%.ts", "a;b.ts", "~tilde.ts")
ELSEWHERE = ("secret.txt", "videos/1234/other.ts", "videos/12/x.ts", "Videos/123/seg1.ts", "videos/123.ts")

#: Segments the generated paths are made of: names that exist, and every spelling of a way out that is known.
SEGMENTS = [
    *("videos", "123", "1234", "12", "Videos", "VIDEOS", "seg1.ts", "seg2.ts", "sub", "deep.ts", "other.ts"),
    *("secret.txt", "x.ts", "123.ts", "to-root.ts", "to-sibling", "to-outside.ts", "caf%C3%A9%20x.ts"),
    *("cafe%CC%81%20x.ts", "100%25.ts", "a;b.ts", "~tilde.ts", "%7Etilde.ts", "seg1.TS"),
    *("", ".", "..", "%2e", "%2E", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%252e%252e", "%25252e", "%2525252e"),
    *("%2F", "%2f", "%5C", "%5c", "\\", "%255C", "%252F", "..%2F", "..%5C", "..\\", "%00", "%0a", "%0D", "%7F"),
    *("%C0%AE", "%C0%AE%C0%AE", "%E0%80%AE", "%C0%AF", "%EF%BC%8E%EF%BC%8E", "%E2%80%A5", "%C2%85", "%u002e"),
    *("%", "%zz", "%2", ";", "%3B", "%3F", "%23", "seg1.ts;x", "seg1.ts%00.txt", "..;", "%20", "+", "%2B"),
    *("videos%2F123", "videos%2f123%2fseg1.ts", "123%5Cseg1.ts", "%76ideos", "%31%32%33", "vid%65os"),
]
#: Known tricks, each tried as it is (after ``/files/``).
TRICKS = [
    "videos/123/../../secret.txt",
    "videos/123/%2e%2e/%2e%2e/secret.txt",
    "videos/123/%2E%2E%2F%2E%2E%2Fsecret.txt",
    "videos/123/..%2F..%2Fsecret.txt",
    "videos/123/..%5C..%5Csecret.txt",
    "videos/123/..\\..\\secret.txt",
    "videos/123/%252e%252e/%252e%252e/secret.txt",
    "videos/123/%C0%AE%C0%AE/%C0%AE%C0%AE/secret.txt",
    "videos/123/%C0%AE%C0%AE%C0%AFsecret.txt",
    "videos/123/%EF%BC%8E%EF%BC%8E/secret.txt",
    "videos/123//../secret.txt",
    "videos/123/./../secret.txt",
    "videos/1234/other.ts",
    "videos/123%2F../1234/other.ts",
    "Videos/123/seg1.ts",
    "videos/123/to-root.ts",
    "videos/123/to-sibling/other.ts",
    "videos/123/to-outside.ts",
    "videos/123/sub/../../1234/other.ts",
    "videos/123/seg1.ts%00.txt",
    "videos/123.ts",
    "videos/12/x.ts",
    "videos/123",
    "videos/123/",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The served root: each regular file holds its path relative to the root; links inside the folder point out."""
    root = tmp_path / "root"
    for name in (*(f"{FOLDER}/{inside}" for inside in INSIDE), *ELSEWHERE):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (tmp_path / "outside.txt").write_text("OUTSIDE THE ROOT")
    (root / FOLDER / "to-root.ts").symlink_to(root / "secret.txt")
    (root / FOLDER / "to-sibling").symlink_to(root / "videos" / "1234")
    (root / FOLDER / "to-outside.ts").symlink_to(tmp_path / "outside.txt")
    return root


def served_inside(body: bytes) -> bool:
    return body.decode("utf-8").startswith(FOLDER + "/")


def must_serve(root: Path, target: str) -> bool:
    """Whether the core says ``target`` is inside the prefix and it names a regular file of the folder on disk."""
    rest = link_prefix.below(target, PREFIX)
    if rest is None or not rest or rest.endswith("/"):
        return False
    candidate = root / FOLDER / rest
    try:
        return candidate.is_file() and Path(os.path.realpath(candidate)).is_relative_to(os.path.realpath(root / FOLDER))
    except (ValueError, OSError):  # a NUL, a name too long: no such file
        return False


def check(
    root: Path,
    targets: list[str],
    fetch: Callable[[list[str]], list[tuple[int, bytes]]],
    query: str,
    *,
    raw: bool = False,
) -> None:
    """The properties, for each target. ``raw``: the view verifies the target as sent (ASGI's ``raw_path``), so
    it refuses (403) exactly what the core says is outside; under WSGI the server decodes it first (``%2F``)."""
    answers = fetch([f"{target}?{query}" for target in targets])
    for target, (status, body) in zip(targets, answers, strict=True):
        if status == 200:
            assert served_inside(body), f"{target!r} served {body[:60]!r}"
        if must_serve(root, target):
            assert status == 200, f"{target!r} is inside the prefix but got {status}"
        if raw:
            inside = link_prefix.below(target, PREFIX) is not None
            assert (status != 403) == inside, f"{target!r} got {status}, inside: {inside}"


def django_fetch(client: Client) -> Callable[[list[str]], list[tuple[int, bytes]]]:
    def fetch(urls: list[str]) -> list[tuple[int, bytes]]:
        answers = []
        for url in urls:
            # Django's test client parses the URL with urlparse, which drops ";params" from the last segment;
            # a WSGI server decodes ";" and "%3B" alike into PATH_INFO, so the view sees what a server gives it.
            response = client.get(url.replace(";", "%3B"))
            body = b"".join(response.streaming_content) if response.streaming else response.content
            answers.append((response.status_code, body))
        return answers

    return fetch


def starlette_fetch(app: SignedFiles) -> Callable[[list[str]], list[tuple[int, bytes]]]:
    """Each URL as uvicorn hands it over: ``raw_path`` as sent, ``path`` decoded, routed as ``/files/{name:path}``."""

    async def one(url: str) -> tuple[int, bytes]:
        raw, _, query = url.partition("?")
        decoded = unquote(raw)
        scope: dict[str, Any] = {
            "type": "http",
            "method": "GET",
            "scheme": "http",
            "server": ("testserver", 80),
            "client": ("127.0.0.1", 1234),
            "root_path": "",
            "path": decoded,
            "raw_path": raw.encode("ascii"),
            "query_string": query.encode("ascii"),
            "headers": [(b"host", b"testserver")],
            "path_params": {"name": decoded.removeprefix("/files/")},
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
        return sent[0]["status"], body

    def fetch(urls: list[str]) -> list[tuple[int, bytes]]:
        async def every() -> list[tuple[int, bytes]]:
            return [await one(url) for url in urls]

        return anyio.run(every)

    return fetch


def wire_paths() -> st.SearchStrategy[list[str]]:
    """Batches of request paths under ``/files/``: segments of ``SEGMENTS``, mostly starting with the folder."""
    segments = st.lists(st.sampled_from(SEGMENTS), min_size=0, max_size=6)
    start = st.sampled_from(["videos/123/", "videos/", "", "videos/123", "Videos/123/", "videos/1234/"])
    one = st.builds(
        lambda head, tail, slash: "/files/" + head + "/".join(tail) + slash, start, segments, st.sampled_from(["", "/"])
    )
    plain = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="?#"), max_size=30)
    return st.lists(
        st.one_of(one, one, one, plain.map(lambda text: "/files/videos/123/" + text)), min_size=BATCH, max_size=BATCH
    )


#: No shrinking: a batch of requests is slow to shrink, and a failure names the path that failed.
RUN = settings(
    max_examples=BATCHES,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture
def django_site(settings: Any, tree: Path) -> tuple[Client, str]:
    """The client and a folder link's query, once per test (each settings change nests another layer)."""
    from blake2sign_web.django.signed_urls import get_signer

    use_served_storage(settings, tree)
    return Client(), get_signer().sign_prefix(PREFIX, expires_in=3600).query


@pytest.fixture
def starlette_site(tree: Path) -> tuple[SignedFiles, str]:
    signer = URLSigner("a prefix fuzzing secret, long enough", purpose="downloads")
    return SignedFiles(signer, tree), signer.sign_prefix(PREFIX, expires_in=3600).query


def ascii_only(targets: list[str]) -> list[str]:
    # Non-ASCII raw bytes never reach a view as such: clients percent-encode them, servers refuse them.
    return [target for target in targets if target.isascii()]


def test_the_tricks_and_the_folder_on_django(django_site: tuple[Client, str], tree: Path) -> None:
    client, query = django_site
    targets = ["/files/" + trick for trick in TRICKS] + [PREFIX + name for name in ("seg1.ts", "sub/deep.ts")]
    check(tree, targets, django_fetch(client), query)
    for inside in INSIDE:
        assert django_fetch(client)([f"{PREFIX}{quote(inside)}?{query}"]) == [(200, f"{FOLDER}/{inside}".encode())]


def test_the_tricks_and_the_folder_on_starlette(starlette_site: tuple[SignedFiles, str], tree: Path) -> None:
    app, query = starlette_site
    targets = ["/files/" + trick for trick in TRICKS]
    check(tree, ascii_only(targets), starlette_fetch(app), query, raw=True)
    for inside in INSIDE:
        assert starlette_fetch(app)([f"{PREFIX}{quote(inside)}?{query}"]) == [(200, f"{FOLDER}/{inside}".encode())]


#: Paths each framework's fuzz run checked, printed (and, in the long run, checked) once the module is done.
COUNTS: dict[str, int] = {"django": 0, "starlette": 0}


@pytest.fixture(scope="module", autouse=True)
def counted() -> Iterator[None]:
    yield
    print(f"\nprefix fuzz: {COUNTS['django']} paths on Django, {COUNTS['starlette']} on Starlette")
    if is_long():  # each framework whose run was selected reached the count
        assert all(count >= LONG_PATHS for count in COUNTS.values() if count), COUNTS


@RUN
@given(targets=wire_paths())
def test_fuzzed_paths_on_django(django_site: tuple[Client, str], tree: Path, targets: list[str]) -> None:
    client, query = django_site
    targets = ascii_only(targets)
    check(tree, targets, django_fetch(client), query)
    COUNTS["django"] += len(targets)


@RUN
@given(targets=wire_paths())
def test_fuzzed_paths_on_starlette(starlette_site: tuple[SignedFiles, str], tree: Path, targets: list[str]) -> None:
    app, query = starlette_site
    targets = ascii_only(targets)
    check(tree, targets, starlette_fetch(app), query, raw=True)
    COUNTS["starlette"] += len(targets)
