"""One page that keeps a visit counter in the signed session cookie."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.utils.html import format_html


def counter(request: HttpRequest) -> HttpResponse:
    visits = request.session.get("visits", 0) + 1
    request.session["visits"] = visits
    return HttpResponse(
        format_html(
            "<h1>blake2sign_web example</h1><p>Visits in this session: <strong>{}</strong>.</p>"
            "<p>The session lives in the <code>sessionid</code> cookie, signed with keyed BLAKE2b; "
            "reload to count, clear cookies to start again.</p>",
            visits,
        )
    )


urlpatterns = [path("", counter)]
