"""Default URLconf for Django tests; each test module may use its own with pytest.mark.urls."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
