"""One URLconf per app, as in Django's tutorial; the engine switch is the site's own."""

from django.urls import include, path

from . import engines

urlpatterns = [
    path("", include("example_project.django_site.shop.urls")),
    path("accounts/", include("example_project.django_site.accounts.urls")),
    path("downloads/", include("example_project.django_site.downloads.urls")),
    path("engine/", engines.switch_engine, name="switch-engine"),
]
