"""The shop's Django views (see tests.soak.shop for what each one does and why)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from blake2sign_web.django.views import SignedFileView

from .shop import LOGIN, add_to_cart, logged_in


@require_POST
def login(request: HttpRequest) -> HttpResponse:
    request.session.update({**LOGIN, "cart": {}})
    return JsonResponse({"user": LOGIN["_auth_user_id"]})


@require_GET
def read_cart(request: HttpRequest) -> HttpResponse:
    if not logged_in(request.session):
        return HttpResponse("Not logged in.", status=403)
    return JsonResponse(request.session.get("cart", {}))


@require_POST
def add(request: HttpRequest) -> HttpResponse:
    if not logged_in(request.session):
        return HttpResponse("Not logged in.", status=403)
    try:
        request.session["cart"] = add_to_cart(request.session.get("cart", {}), request.GET.get("item", ""))
    except ValueError:
        return HttpResponse("Unknown item.", status=400)
    return JsonResponse(request.session["cart"])


urlpatterns = [
    path("login", login),
    path("cart", read_cart),
    path("cart/add", add),
    path("files/<path:name>", SignedFileView.as_view(storage="signed_test")),
]
