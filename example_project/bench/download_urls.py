"""URLconf for the downloads benchmark's Django server."""

from __future__ import annotations

from django.urls import path

from blake2sign_web.django.views import SignedFileView

urlpatterns = [path("files/<path:name>", SignedFileView.as_view(storage="bench"))]
