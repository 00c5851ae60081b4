"""URLconf for the migration and security-page tests: log in, who am I, change the password, a signed file."""

from __future__ import annotations

from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.http import HttpRequest, HttpResponse
from django.urls import path

from blake2sign_web.django.views import SignedFileView
from tests.django_sessions.views import logout_view, untouched, whoami


def login_view(request: HttpRequest) -> HttpResponse:
    """Log in and put something of the application's beside the login: a cart."""
    user = get_user_model().objects.get(username=request.POST["username"])
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    request.session["cart"] = [3, 7]
    return HttpResponse("in")


def change_password(request: HttpRequest) -> HttpResponse:
    """What Django's PasswordChangeView does: set, save, keep this session logged in."""
    user = request.user
    user.set_password(request.POST["password"])
    user.save()
    update_session_auth_hash(request, user)  # type: ignore[arg-type]
    return HttpResponse("changed")


urlpatterns = [
    path("login/", login_view),
    path("logout/", logout_view),
    path("whoami/", whoami),
    path("change-password/", change_password),
    path("untouched/", untouched),
    path("files/<path:name>", SignedFileView.as_view(storage="migrating_files"), name="migrating-file"),
]
