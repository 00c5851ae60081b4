"""URLconf for the Django session revocation tests: the session test views and a password change."""

from __future__ import annotations

from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.http import HttpRequest, HttpResponse
from django.urls import path

from blake2sign_web.django.revocation import alog_out_everywhere, log_out_everywhere
from tests.django_sessions.urls import urlpatterns as session_urlpatterns


def change_password(request: HttpRequest) -> HttpResponse:
    """What PasswordChangeView does: set_password, save, then keep this session (update_session_auth_hash)."""
    user = request.user
    user.set_password(request.POST["password"])  # type: ignore[union-attr]
    user.save()  # type: ignore[union-attr]
    update_session_auth_hash(request, user)  # type: ignore[arg-type]
    return HttpResponse("changed")


def everywhere(request: HttpRequest) -> HttpResponse:
    """ "Log out my other devices": every other session of the user ends, this one is kept."""
    log_out_everywhere(request.user)
    return HttpResponse("everywhere")


def reset_password(request: HttpRequest) -> HttpResponse:
    """What PasswordResetConfirmView does with post_reset_login: set the password, save, log the user in."""
    user = get_user_model().objects.get(username=request.POST["username"])
    user.set_password(request.POST["password"])
    user.save()
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    return HttpResponse("reset")


def set_password_of(request: HttpRequest) -> HttpResponse:
    """An administrator sets another user's password (as the admin's password form does)."""
    user = get_user_model().objects.get(username=request.POST["username"])
    user.set_password(request.POST["password"])
    user.save()
    return HttpResponse("set")


async def aeverywhere(request: HttpRequest) -> HttpResponse:
    """The async "log out my other devices"."""
    await alog_out_everywhere(await request.auser())
    return HttpResponse("everywhere")


async def asave(request: HttpRequest) -> HttpResponse:
    """An async view that saves the session it never read (Django's SessionBase.asave())."""
    await request.session.asave()
    return HttpResponse("saved")


urlpatterns = [
    *session_urlpatterns,
    path("password/", change_password),
    path("everywhere/", everywhere),
    path("reset/", reset_password),
    path("set-password/", set_password_of),
    path("asave/", asave),
    path("aeverywhere/", aeverywhere),
]
