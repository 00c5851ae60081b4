"""URLconf of the Django ``consume_on="post"`` tests: SignedFileView, decorated views with and without csrf_exempt."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from blake2sign_web.django import SignedFileView, signed_url_required
from blake2sign_web.urls import VerifiedLink

CUSTOM_PAGE = "<!DOCTYPE html><title>Sign in</title><form method=post><button>Sign in as Ann</button></form>"


def custom_page(request: HttpRequest, link: VerifiedLink) -> HttpResponse:
    response = HttpResponse(CUSTOM_PAGE)
    response["Content-Security-Policy"] = "default-src 'self'"
    return response


@csrf_exempt
@signed_url_required
def magic(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"signed in by {request.method}")


@csrf_exempt
@signed_url_required(confirm=custom_page)
def own_page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("signed in")


@signed_url_required
def protected(request: HttpRequest) -> HttpResponse:
    """Not csrf_exempt: the confirmation's POST is refused by CsrfViewMiddleware (and the page says so in the log)."""
    return HttpResponse("protected")


urlpatterns = [
    path("magic", magic, name="magic"),
    path("own-page", own_page, name="own-page"),
    path("protected", protected, name="protected"),
    path("files/<path:name>", SignedFileView.as_view(storage="signed_test"), name="files"),
]
