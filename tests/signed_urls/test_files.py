"""Path safety, Range parsing, validators and Content-Disposition, without a framework."""

from __future__ import annotations

import errno
import mimetypes
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from blake2sign_web.links import files
from blake2sign_web.links.files import (
    ByteRange,
    RangeNotSatisfiable,
    UnsafePath,
    caused_by_name,
    clean_name,
    conditional_status,
    content_disposition,
    content_type_for,
    etag_for,
    http_date,
    open_under,
    parse_range,
    range_applies,
    requested_range,
    resolve_under,
)

ATTACKS = [
    "../secret.txt",
    "a/../../secret.txt",
    "a/..",
    "/etc/passwd",
    "//etc/passwd",
    "C:/Windows/win.ini",
    "a\\..\\secret.txt",
    "a.txt\x00.pdf",
    "a\nb",
    "%2e%2e/secret.txt",
    "%2E%2E%2Fsecret.txt",
    "%252e%252e/secret.txt",
    "%25252e%25252e/secret.txt",
    "a/%2f/b",
    "a//b",
    "./a.txt",
    "",
]


@pytest.mark.parametrize("name", ATTACKS)
def test_unsafe_names_are_refused(name: str, tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    with pytest.raises(UnsafePath):
        resolve_under(tmp_path / "root", name)


@pytest.mark.parametrize("name", ["a.txt", "dir/b.txt", "100%.txt", "caf\u00e9 menu.pdf", "..hidden", "a..b"])
def test_ordinary_names_pass(name: str, tmp_path: Path) -> None:
    target = tmp_path.joinpath(*name.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")
    assert clean_name(name) == name
    assert resolve_under(tmp_path, name) == target.resolve()


def test_symlink_leading_out_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "linkdir").symlink_to(tmp_path)
    for name in ("link.txt", "linkdir/secret.txt"):
        with pytest.raises(UnsafePath):
            resolve_under(root, name)


def test_symlink_inside_root_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    assert resolve_under(tmp_path, "alias.txt") == (tmp_path / "real.txt").resolve()


def test_missing_and_directories_are_not_found(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("x")
    for name in ("missing.txt", "dir", "file/below"):
        with pytest.raises(FileNotFoundError):
            resolve_under(tmp_path, name)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-0", ByteRange(0, 1, 100)),
        ("bytes=0-9", ByteRange(0, 10, 100)),
        ("bytes=90-", ByteRange(90, 100, 100)),
        ("bytes=-10", ByteRange(90, 100, 100)),
        ("bytes=-1000", ByteRange(0, 100, 100)),
        ("bytes=95-1000", ByteRange(95, 100, 100)),
        ("BYTES = 5-6", ByteRange(5, 7, 100)),
        ("bytes=5-6,", ByteRange(5, 7, 100)),
        (None, None),
        ("", None),
        ("bytes=0-1,5-6", None),
        ("bytes=0-1,0-1", None),
        ("items=0-1", None),
        ("bytes", None),
        ("bytes=", None),
        ("bytes=-", None),
        ("bytes=5-4", None),
        ("bytes=a-b", None),
        ("bytes=1-2-3", None),
        ("bytes=+1-2", None),
        ("bytes=" + "9" * 30 + "-", None),
        ("bytes=0-1" + " " * 2000, None),
    ],
)
def test_parse_range(header: str | None, expected: ByteRange | None) -> None:
    assert parse_range(header, 100) == expected


@pytest.mark.parametrize(
    ("header", "size"),
    [("bytes=100-", 100), ("bytes=200-300", 100), ("bytes=-0", 100), ("bytes=0-", 0), ("bytes=-5", 0)],
)
def test_unsatisfiable_range(header: str, size: int) -> None:
    with pytest.raises(RangeNotSatisfiable) as caught:
        parse_range(header, size)
    assert caught.value.content_range == f"bytes */{size}"


def test_content_range() -> None:
    assert ByteRange(90, 100, 100).content_range == "bytes 90-99/100"
    assert ByteRange(90, 100, 100).length == 10


def test_if_range() -> None:
    etag, date = etag_for(1, 2), http_date(0)
    assert range_applies(None, etag, date)
    assert range_applies(etag, etag, date)
    assert range_applies(date, etag, date)
    assert not range_applies('"other"', etag, date)
    assert not range_applies("W/" + etag, etag, date)
    assert not range_applies(http_date(1), etag, date)


def test_requested_range_honours_range_only_when_if_range_matches() -> None:
    etag, date = etag_for(100, 2), http_date(0)
    assert requested_range("bytes=0-9", None, 100, etag, date) == ByteRange(0, 10, 100)
    assert requested_range("bytes=0-9", etag, 100, etag, date) == ByteRange(0, 10, 100)
    assert requested_range("bytes=0-9", '"other"', 100, etag, date) is None
    assert requested_range(None, None, 100, etag, date) is None
    with pytest.raises(RangeNotSatisfiable):
        requested_range("bytes=100-", None, 100, etag, date)
    # A stale If-Range wins over an unsatisfiable Range: the whole (new) file, not 416.
    assert requested_range("bytes=100-", '"other"', 100, etag, date) is None


def test_etag_changes_with_size_and_time() -> None:
    assert etag_for(1, 2) == etag_for(1, 2)
    assert len({etag_for(1, 2), etag_for(2, 2), etag_for(1, 3)}) == 3
    assert etag_for(1, 2).startswith('"')
    assert etag_for(1, 2).endswith('"')


def test_not_modified() -> None:
    etag = etag_for(1, 2)

    def status(if_none_match: str | None, if_modified_since: str | None, mtime: int) -> int | None:
        headers = {"if-none-match": if_none_match, "if-modified-since": if_modified_since}
        return conditional_status("GET", {k: v for k, v in headers.items() if v is not None}, etag, mtime)

    assert status(etag, None, 0) == 304
    assert status(f'"x", W/{etag}', None, 0) == 304
    assert status("*", None, 0) == 304
    assert status('"x"', http_date(100), 0) is None
    assert status(None, http_date(100), 100) == 304
    assert status(None, http_date(100), 101) is None
    assert status(None, "not a date", 0) is None
    assert status(None, None, 0) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.pdf", 'attachment; filename="report.pdf"'),
        ("dir/report.pdf", 'attachment; filename="report.pdf"'),
        ('a"b.txt', "attachment; filename=\"a_b.txt\"; filename*=UTF-8''a%22b.txt"),
        (
            "a\r\nSet-Cookie: x.txt",
            "attachment; filename=\"aSet-Cookie_ x.txt\"; filename*=UTF-8''aSet-Cookie%3A%20x.txt",
        ),
        ("café.pdf", "attachment; filename=\"caf_.pdf\"; filename*=UTF-8''caf%C3%A9.pdf"),
        ("..\\..\\boot.ini", 'attachment; filename="boot.ini"'),
        ("..", "attachment"),
    ],
)
def test_content_disposition(name: str, expected: str) -> None:
    assert content_disposition(name) == expected
    assert "\r" not in expected
    assert "\n" not in expected


def test_inline_disposition() -> None:
    assert content_disposition("a.png", as_attachment=False) == 'inline; filename="a.png"'


def test_content_type() -> None:
    assert content_type_for("a.pdf") == "application/pdf"
    assert content_type_for("a.csv.gz") == "application/octet-stream"
    assert content_type_for("noext") == "application/octet-stream"


def test_nul_in_root_join_never_reaches_the_os(tmp_path: Path) -> None:
    with pytest.raises(UnsafePath):
        resolve_under(os.fspath(tmp_path), "a\x00b")


# --- open_under: open once, from a descriptor of the root ------


def test_open_under_opens_the_file_and_stats_the_descriptor(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_bytes(b"abc")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "dir" / "a.txt")
    for name in ("dir/a.txt", "alias.txt"):
        opened = open_under(tmp_path, name)
        with opened.handle:
            assert opened.handle.read() == b"abc"
        assert opened.stat.st_size == 3
        assert opened.path == str((tmp_path / "dir" / "a.txt").resolve())


@pytest.mark.parametrize("name", ["../secret.txt", "link.txt", "linkdir/secret.txt", "a\x00b"])
def test_open_under_refuses_what_resolve_under_refuses(name: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "linkdir").symlink_to(tmp_path)
    with pytest.raises(UnsafePath):
        open_under(root, name)


def test_names_the_os_refuses_are_not_found(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "ping").symlink_to("pong")
    (tmp_path / "pong").symlink_to("ping")
    for name in ("a" * 300, "dir/" + "b" * 300 + "/c", "loop", "loop/x", "ping", "pong/x", "dir", "fifo", "missing"):
        for function in (resolve_under, open_under):
            with pytest.raises(FileNotFoundError):
                function(tmp_path, name)


def test_server_errors_are_not_hidden_as_not_found() -> None:
    assert caused_by_name(OSError(errno.ELOOP, "loop"))
    assert caused_by_name(OSError(errno.ENAMETOOLONG, "long"))
    assert not caused_by_name(OSError(errno.EMFILE, "too many open files"))


def swap_after_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """Run ``swap`` right after the name was checked: the race between check and open, made certain.

    A name with no symbolic link on its way is opened without a check (``O_NOFOLLOW`` on every segment, so no
    race); the tests reach their file through a link inside the root (``via``), which makes ``open_under``
    resolve it, check it, then open what it found.
    """
    check = files.resolve_under

    def check_then_swap(root: str | os.PathLike[str], name: str) -> Path:
        checked = check(root, name)
        swap()
        return checked

    monkeypatch.setattr(files, "resolve_under", check_then_swap)


def test_directory_swapped_for_a_link_after_the_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "dir").mkdir(parents=True)
    (root / "dir" / "a.txt").write_text("public")
    outside.mkdir()
    (outside / "a.txt").write_text("secret")
    (root / "via").symlink_to(root / "dir")
    assert open_under(root, "via/a.txt").handle.read() == b"public"

    def swap() -> None:
        (root / "dir").rename(root / "moved")
        (root / "dir").symlink_to(outside)

    swap_after_check(monkeypatch, swap)
    with pytest.raises(FileNotFoundError):
        open_under(root, "via/a.txt")


def test_file_swapped_for_a_link_or_a_fifo_after_the_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (root / "via").symlink_to(root / "dir")
    for name, replace in (
        ("link.txt", lambda path: path.symlink_to(tmp_path / "secret.txt")),
        ("fifo.txt", os.mkfifo),  # opened without O_NONBLOCK, a FIFO with no writer would hang the worker
    ):
        target = root / "dir" / name
        target.write_text("public")

        def swap(target: Path = target, replace: Callable[[Path], None] = replace) -> None:
            target.unlink()
            replace(target)

        swap_after_check(monkeypatch, swap)
        with pytest.raises(FileNotFoundError):
            open_under(root, "via/" + name)
        monkeypatch.undo()
        with pytest.raises((FileNotFoundError, UnsafePath)):  # and with the name itself: no check, the same answer
            open_under(root, "dir/" + name)


def test_a_type_added_after_start_up_is_the_type_sent() -> None:
    """mimetypes.add_type at any time is honoured (Debian's tables call .ts a Qt translation, not video)."""
    assert content_type_for("videos/clip.b2s-late-type") == "application/octet-stream"
    mimetypes.add_type("video/x-b2s-late", ".b2s-late-type")
    assert content_type_for("videos/clip.b2s-late-type") == "video/x-b2s-late"
