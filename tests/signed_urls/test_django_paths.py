"""Django links whose path reverse() had to escape: signed as reverse() writes them, verified as Django routes them.

This module is its own URLconf: the catch-all ``<path:rest>`` route sits at the root, the one
place where reverse() writes a leading "//" as "/%2F" (Django's escape_leading_slashes).
"""

from __future__ import annotations

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path, reverse

from blake2sign_web.django import sign_url, signed_url_required


@signed_url_required
def echo_rest(request: HttpRequest, rest: str) -> HttpResponse:
    return HttpResponse(rest, content_type="text/plain; charset=utf-8")


urlpatterns = [path("<path:rest>", echo_rest, name="root-rest")]

pytestmark = pytest.mark.urls(__name__)


@pytest.mark.parametrize(
    "rest",
    ["/evil.example/x", "//evil.example/x", "report.pdf", "a/b c/é.txt", "/%2F/x", "100%/x"],
)
def test_reverse_links_with_escaped_slashes_verify_and_reach_the_same_arguments(client: Client, rest: str) -> None:
    link = sign_url(reverse("root-rest", kwargs={"rest": rest}), expires_in=60)
    assert not link.startswith("//")
    response = client.get(link)
    assert response.status_code == 200, link
    assert response.content.decode() == rest


def test_a_link_for_one_path_does_not_verify_for_the_path_a_decoded_slash_makes(client: Client) -> None:
    link = sign_url("/a%2Fb", expires_in=60)  # hand-built: reverse() never writes a %2F after the first segment
    assert client.get(link).status_code == 403
    assert client.get(link.replace("%2F", "/")).status_code == 403
