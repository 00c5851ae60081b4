"""A storage like django-storages' S3Storage: no local paths (``path()`` raises), ``location`` a key prefix ("")."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from typing import Any, ClassVar

from django.core.files.base import File
from django.core.files.storage import Storage


class _Stream(io.RawIOBase):
    """Bytes that can be read once, front to back, like a network body."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self._data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


class KeyPrefixStorage(Storage):
    """Objects in a dict; ``seekable=False`` hands out forward-only streams."""

    objects: ClassVar[dict[str, bytes]] = {}
    location = ""
    modified = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    def __init__(self, seekable: bool = True) -> None:
        self.seekable = seekable

    def _open(self, name: str, mode: str = "rb") -> File:
        try:
            data = self.objects[name]
        except KeyError:
            raise FileNotFoundError(name) from None
        return File(io.BytesIO(data) if self.seekable else _Stream(data), name=name)

    def exists(self, name: str) -> bool:
        return name in self.objects

    def size(self, name: str) -> int:
        return len(self.objects[name])

    def get_modified_time(self, name: str) -> datetime:
        return self.modified
