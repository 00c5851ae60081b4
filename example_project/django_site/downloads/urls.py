from django.urls import path

from blake2sign_web.django.views import SignedFileView

from . import views


def user_id(request):  # type: ignore[no-untyped-def]
    """What a "just for you" link is bound to: only the user it was signed for can use it."""
    return request.user.pk


urlpatterns = [
    path("", views.index, name="downloads"),
    # Any holder of the link may use it until it expires (or once, for a single-use link).
    path("files/<path:name>", SignedFileView.as_view(), name="download"),
    # Bound to the logged-in user: the id is mixed into the signature, never written in the URL.
    path("mine/<path:name>", SignedFileView.as_view(bind=user_id), name="download-mine"),
]
