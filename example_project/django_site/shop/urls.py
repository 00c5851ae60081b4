from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="shop"),
    path("cart/", views.cart, name="cart"),
    path("cart/add/", views.add_to_cart, name="add-to-cart"),
    path("cart/empty/", views.empty_cart, name="empty-cart"),
]
