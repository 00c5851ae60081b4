from django.urls import path

from . import views

urlpatterns = [
    path("ops/", views.ops),
    path("aops/", views.aops),
    path("untouched/", views.untouched),
    path("login/", views.login_view),
    path("logout/", views.logout_view),
    path("whoami/", views.whoami),
    path("messages/add/", views.add_message),
    path("messages/", views.read_messages),
    path("csrf/", views.csrf_token),
    path("csrf/protected/", views.csrf_protected),
    path("typed/store/", views.store_typed),
    path("typed/", views.read_typed),
    path("blob/<int:size>/", views.store_blob),
    path("blob/", views.read_blob),
]
