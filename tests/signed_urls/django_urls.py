"""URLconf for the Django signed-URL tests (pytest.mark.urls("tests.signed_urls.django_urls"))."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path, re_path, reverse
from django.utils.decorators import method_decorator
from django.views import View

from blake2sign_web.django import grant_cookie, signed_url_required
from blake2sign_web.django.views import SignedFileView


@signed_url_required
def plain(request: HttpRequest, n: int) -> HttpResponse:
    return HttpResponse(f"plain {n}")


@signed_url_required
async def async_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("async")


@signed_url_required
def echo(request: HttpRequest) -> HttpResponse:
    """The query parameter ``q`` as the view reads it."""
    return HttpResponse(request.GET.get("q", ""), content_type="text/plain; charset=utf-8")


@signed_url_required(bind=lambda request: request.headers.get("X-User"))
def bound(request: HttpRequest) -> HttpResponse:
    return HttpResponse("bound")


@method_decorator(signed_url_required, name="dispatch")
class ClassBased(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("class")


@method_decorator(signed_url_required, name="dispatch")
class AsyncClassBased(View):
    async def get(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("async class")


def grant(request: HttpRequest, folder: str) -> HttpResponse:
    """Grants this browser the folder ``files/<folder>`` by cookie (a real view checks who asks first), and writes
    the session in the same response."""
    request.session["granted"] = folder
    response = HttpResponse("granted")
    grant_cookie(response, request, reverse("sig-files", kwargs={"name": folder}), expires_in=60)
    return response


def grant_bound(request: HttpRequest, folder: str) -> HttpResponse:
    """Grants ``bound-files/<folder>`` to the user named by X-User only."""
    response = HttpResponse("granted")
    grant_cookie(response, request, "/bound-files/" + folder, expires_in=60, bind=request.headers["X-User"])
    return response


urlpatterns = [
    path("grant/<path:folder>", grant),
    path("grant-bound/<path:folder>", grant_bound),
    path("plain/<int:n>/", plain, name="sig-plain"),
    path("echo/", echo, name="sig-echo"),
    re_path(r"^anything/[\s\S]*$", echo),
    path("async/", async_view, name="sig-async"),
    path("bound/", bound, name="sig-bound"),
    path("class/", ClassBased.as_view(), name="sig-class"),
    path("async-class/", AsyncClassBased.as_view(), name="sig-async-class"),
    path("files/<path:name>", SignedFileView.as_view(storage="signed_test"), name="sig-files"),
    path("inline/<path:name>", SignedFileView.as_view(storage="signed_test", as_attachment=False)),
    path("accel/<path:name>", SignedFileView.as_view(storage="signed_test", accel_redirect="/protected/")),
    path("raw-playlists/<path:name>", SignedFileView.as_view(storage="signed_test", sign_playlists=False)),
    path("sendfile/<path:name>", SignedFileView.as_view(storage="signed_test", sendfile=True)),
    path("memory/<path:name>", SignedFileView.as_view(storage="signed_memory")),
    path("remote/<path:name>", SignedFileView.as_view(storage="signed_remote")),
    path("stream/<path:name>", SignedFileView.as_view(storage="signed_stream")),
    path(
        "bound-files/<path:name>",
        SignedFileView.as_view(storage="signed_test", bind=lambda request: request.headers.get("X-User")),
    ),
]
