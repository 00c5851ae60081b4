"""Refusals that are responses (410, 503), not exceptions, on async class-based views."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient, Client
from django.urls import reverse

from blake2sign_web.django.signed_urls import get_signer

pytestmark = pytest.mark.urls("tests.signed_urls.django_urls")


@pytest.mark.parametrize("name", ["sig-async-class", "sig-class", "sig-async"])
def test_expired_link_is_410_on_every_kind_of_view(name: str) -> None:
    """method_decorator on an async view's dispatch: the 410 response used to be returned un-awaitable (500)."""
    expired = get_signer().sign(reverse(name), expires_at=1_000_000_000)
    response = Client().get(expired)
    assert (response.status_code, response.content) == (410, b"This link has expired.")


def test_expired_link_is_410_on_an_async_class_view_under_asgi() -> None:
    expired = get_signer().sign(reverse("sig-async-class"), expires_at=1_000_000_000)
    response = async_to_sync(AsyncClient().get)(expired)
    assert response.status_code == 410
