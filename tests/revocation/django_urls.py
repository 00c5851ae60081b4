"""URLconf for the Django session revocation tests: the session test views and a password change."""

from __future__ import annotations

from django.contrib.auth import update_session_auth_hash
from django.http import HttpRequest, HttpResponse
from django.urls import path

from tests.django_sessions.urls import urlpatterns as session_urlpatterns


def change_password(request: HttpRequest) -> HttpResponse:
    """What PasswordChangeView does: set_password, save, then keep this session (update_session_auth_hash)."""
    user = request.user
    user.set_password(request.POST["password"])  # type: ignore[union-attr]
    user.save()  # type: ignore[union-attr]
    update_session_auth_hash(request, user)  # type: ignore[arg-type]
    return HttpResponse("changed")


urlpatterns = [*session_urlpatterns, path("password/", change_password)]
