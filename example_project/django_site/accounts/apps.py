from typing import Any

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "example_project.django_site.accounts"
    label = "accounts"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_logged_out

        user_logged_in.connect(say_hello, dispatch_uid="example-login-message")
        user_logged_out.connect(say_goodbye, dispatch_uid="example-logout-message")


def say_hello(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    from django.contrib import messages

    messages.success(request, f"Welcome, {user.get_username()}: you are logged in.")


def say_goodbye(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    from django.contrib import messages

    messages.info(request, "You are logged out.")
