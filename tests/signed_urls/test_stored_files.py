"""What can be read of a storage's file (``stored_files``), without a framework or a storage library."""

from __future__ import annotations

import io
import logging
from datetime import datetime, timezone

import pytest

from blake2sign_web.links import confirmation, files, stored_files
from blake2sign_web.links import requests as link_requests


class Plain:
    """A storage that is not one of django-storages' backends."""


def test_opened_asks_a_storage_that_cannot_tell_the_file() -> None:
    handle = io.BytesIO(b"0123456789")
    handle.size = 10  # type: ignore[attr-defined]  # as Django's File says it

    def cannot_tell() -> int:
        raise NotImplementedError

    stored = stored_files.opened(handle, Plain(), None, cannot_tell, lambda: datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert (stored.size, stored.seekable, stored.downloads_whole) == (10, None, False)
    assert stored.mtime_ns == 1_767_225_600_000_000_000
    assert stored.sendable_range("HEAD", files.ByteRange(2, 5, 10)) == files.ByteRange(2, 5, 10)  # nothing asked
    assert stored.seekable is None
    assert stored.sendable_range("GET", files.ByteRange(2, 5, 10)) == files.ByteRange(2, 5, 10)
    assert stored.body(files.ByteRange(2, 5, 10)) == (handle, 2, 3)


def test_a_range_goes_to_the_storage_url_only_when_seeking_would_download_the_object(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stored = stored_files.StoredFile(io.BytesIO(b""), 10, None, None, seekable=None)
    wanted = files.ByteRange(2, 5, 10)
    assert not stored_files.redirects_range(stored, "GET", wanted, single_use=False, offloaded=False)
    stored.downloads_whole = True
    assert stored_files.redirects_range(stored, "GET", wanted, single_use=False, offloaded=False)
    assert not stored_files.redirects_range(stored, "GET", wanted, single_use=True, offloaded=False)
    assert not stored_files.redirects_range(stored, "HEAD", wanted, single_use=False, offloaded=False)
    assert not stored_files.redirects_range(stored, "GET", None, single_use=False, offloaded=False)
    with caplog.at_level(logging.INFO, "blake2sign_web.signed_urls"):
        headers = stored_files.range_redirect(lambda: "https://bucket.example/a?X-Sig=1", "/files/a", "a", Plain())
    assert headers == {"Location": "https://bucket.example/a?X-Sig=1", **link_requests.REDIRECT_HEADERS}
    assert "redirected a range" in caplog.text
    assert stored_files.range_redirect(lambda: "/media/a", "/files/a", "a", Plain()) is None

    def no_url() -> str:
        raise NotImplementedError("no URL")

    assert stored_files.range_redirect(no_url, "/files/a", "a", Plain()) is None
    with pytest.raises(ValueError, match="range_fallback must be one of"):
        stored_files.check_range_fallback("download")


def test_built_in_confirmation_page() -> None:
    body, headers = confirmation.built_in({"csrfmiddlewaretoken": "t"})
    assert b'name="csrfmiddlewaretoken" value="t"' in body
    assert headers["Content-Length"] == str(len(body))
    assert confirmation.built_in()[0] == confirmation.PAGE.encode()
