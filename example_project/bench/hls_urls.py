"""URLconf for the HLS benchmark's Django server: the same folder through SignedFileView and django.views.static."""

from __future__ import annotations

import os

from django.urls import path
from django.views.static import serve

from blake2sign_web.django.views import SignedFileView

urlpatterns = [
    path("signed/<path:name>", SignedFileView.as_view(storage="bench", as_attachment=False)),
    path("plain/<path:path>", serve, {"document_root": os.environ["BLAKE2SIGN_BENCH_ROOT"]}),
]
