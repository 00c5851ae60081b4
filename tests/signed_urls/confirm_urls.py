"""URLconf of the Django ``consume_on="post"`` tests: SignedFileView, decorated views with and without csrf_exempt.

The confirmation's POST passes Django's CSRF check in each of them (csrf_exempt or not): the built-in page
carries the token, and the application's own page has ``{% csrf_token %}``.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template import RequestContext, Template
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from blake2sign_web.django import SignedFileView, signed_url_required
from blake2sign_web.links.signer import VerifiedLink

#: The application's own page: a Django template, whose form carries the CSRF token as any form of the site.
CUSTOM_PAGE = (
    "<!DOCTYPE html><title>Sign in</title><form method=post>{% csrf_token %}<button>Sign in as Ann</button></form>"
)


def custom_page(request: HttpRequest, link: VerifiedLink) -> HttpResponse:
    response = HttpResponse(Template(CUSTOM_PAGE).render(RequestContext(request)))
    response["Content-Security-Policy"] = "default-src 'self'"
    return response


@csrf_exempt  # as the docs once advised: the confirmation's POST is CSRF-checked all the same
@signed_url_required
def magic(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"signed in by {request.method}")


@csrf_exempt
@signed_url_required(confirm=custom_page)
def own_page(request: HttpRequest) -> HttpResponse:
    return HttpResponse("signed in")


@signed_url_required
def protected(request: HttpRequest) -> HttpResponse:
    """Not csrf_exempt, as the docs say: CsrfViewMiddleware checks the confirmation's POST, whose form has the token."""
    return HttpResponse("protected")


@csrf_exempt
@signed_url_required
async def magic_async(request: HttpRequest) -> HttpResponse:
    """An async view: the CSRF check runs in the thread that uses the link up."""
    return HttpResponse(f"signed in by async {request.method}")


urlpatterns = [
    path("magic", magic, name="magic"),
    path("magic-async", magic_async, name="magic-async"),
    path("own-page", own_page, name="own-page"),
    path("protected", protected, name="protected"),
    path("files/<path:name>", SignedFileView.as_view(storage="signed_test"), name="files"),
]
