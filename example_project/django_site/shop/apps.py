from django.apps import AppConfig


class ShopConfig(AppConfig):
    name = "example_project.django_site.shop"
    label = "shop"
