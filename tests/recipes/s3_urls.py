"""The S3 recipe's URLs, and two views that show what SignedFileView did before ranged reads, for comparison.

- ``/whole-object/<name>``: SignedFileView with its ranged reader off and ``range_fallback="seek"``: the file
  object is read as django-storages offers it (the whole object is downloaded first).
- ``/no-ranged-read/<name>``: a storage whose files offer no ranged read (an S3Storage whose file hides its
  boto3 object, as another django-storages backend would): a Range request is redirected to its presigned URL.
"""

from __future__ import annotations

from typing import IO, Any

from django.core.files.storage import Storage
from django.urls import path
from storages.backends.s3 import S3Storage  # type: ignore[import-untyped]

from blake2sign_web.django.views import RangedObject, SignedFileView
from tests.recipes.pages import page_module


class WholeObjectView(SignedFileView):
    range_fallback = "seek"

    def ranged_reader(self, storage: Storage, handle: IO[bytes]) -> RangedObject | None:
        return None


class _NoObject:
    """An S3File without its boto3 object: reads download the whole object, as other backends' files do."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def __getattr__(self, name: str) -> Any:
        if name == "obj":
            raise AttributeError(name)
        return getattr(self._file, name)


class WholeDownloadS3Storage(S3Storage):  # type: ignore[misc]
    def _open(self, name: str, mode: str = "rb") -> Any:
        return _NoObject(super()._open(name, mode))


urlpatterns = [
    *page_module("django-s3-and-nginx.md").urlpatterns,
    path("whole-object/<path:name>", WholeObjectView.as_view(storage="private"), name="whole-object"),
    path("no-ranged-read/<path:name>", SignedFileView.as_view(storage="whole-download-s3"), name="no-ranged-read"),
]
