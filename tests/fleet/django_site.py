"""The Django site every process of the fleet serves (gunicorn's WSGI workers and uvicorn's ASGI processes alike).

- ``POST /login/`` (username, password): django.contrib.auth's login, then a small cart: a login-sized session
  (user id, backend, auth hash, cart);
- ``GET /me/`` (``?add=sku`` puts one item in the cart): the user and cart this request sees; it reads
  ``request.user``, which checks the session's auth hash against SECRET_KEY and its fallbacks;
- ``GET /cart/``: the cart alone, read from the session without ``request.user``;
- ``GET /link/<n>/``: a signed link to ``/signed/<n>/``, which answers ``n``;
- ``GET /note/?v=...``: appends ``v`` to an anonymous session's notes and returns them (the concurrency test).

Every response names the process that served it in ``X-Served-By`` (its pid).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from django.contrib.auth import authenticate, login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from blake2sign_web.django import sign_url, signed_url_required

PASSWORD = "fleet-password"  # the test users'


def served_by(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        response["X-Served-By"] = str(os.getpid())  # per request: gunicorn --preload builds this before it forks
        return response

    return middleware


@csrf_exempt  # the fleet's clients are scripts; CSRF is not what this site tests
@require_POST
def log_in(request: HttpRequest) -> HttpResponse:
    user = authenticate(request, username=request.POST["username"], password=request.POST["password"])
    if user is None:
        return JsonResponse({"user": None}, status=403)
    login(request, user)
    request.session["cart"] = ["sku-1", "sku-2"]
    return JsonResponse({"user": user.pk, "cart": request.session["cart"]})


def me(request: HttpRequest) -> HttpResponse:
    user = request.user.pk if request.user.is_authenticated else None
    if "add" in request.GET and user is not None:
        request.session["cart"] = [*request.session["cart"], request.GET["add"]]
    return JsonResponse({"user": user, "cart": request.session.get("cart")})


def cart(request: HttpRequest) -> HttpResponse:
    """The session alone, never ``request.user``: the session is re-signed, its auth hash is left as it is."""
    return JsonResponse({"cart": request.session.get("cart")})


def link(request: HttpRequest, n: int) -> HttpResponse:
    return HttpResponse(sign_url(f"/signed/{n}/", expires_in=3600), content_type="text/plain")


@signed_url_required
def signed(request: HttpRequest, n: int) -> HttpResponse:
    return HttpResponse(str(n), content_type="text/plain")


def note(request: HttpRequest) -> HttpResponse:
    notes = [*request.session.get("notes", []), request.GET["v"]]
    request.session["notes"] = notes
    return JsonResponse({"notes": notes})


urlpatterns = [
    path("login/", log_in),
    path("me/", me),
    path("cart/", cart),
    path("link/<int:n>/", link),
    path("signed/<int:n>/", signed),
    path("note/", note),
]


def create_users(count: int) -> None:
    """Migrate ``FLEET_DATABASE`` and add users ``user0``... (run once, in a process of its own, before the fleet)."""
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    for i in range(count):
        User.objects.create_user(f"user{i}", password=PASSWORD)
