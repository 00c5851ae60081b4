"""Signed download links: short-lived, bound to the user, or single-use (when Redis is reachable)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from blake2sign_web.django import sign_url
from example_project.files import FILES, LARGE, LARGE_SIZE

#: Seconds a link lives: short, so the countdown can be watched to the end.
EXPIRES_IN = 60


def link(url: str, kind: str, name: str) -> dict[str, object]:
    expires = parse_qs(urlsplit(url).query).get("expires", [""])[0]
    return {"url": url, "kind": kind, "name": name, "expires": int(expires) if expires.isdigit() else None}


def index(request: HttpRequest) -> HttpResponse:
    names = [*FILES, LARGE]
    links = [link(sign_url(reverse("download", args=[n]), expires_in=EXPIRES_IN), "anyone", n) for n in names]
    if request.user.is_authenticated:
        for name in names:
            url = sign_url(reverse("download-mine", args=[name]), expires_in=EXPIRES_IN, bind=request.user.pk)
            links.append(link(url, f"only {request.user.get_username()}", name))
    if settings.SINGLE_USE_LINKS:
        url = sign_url(reverse("download", args=["readme.txt"]), expires_in=EXPIRES_IN, single_use=True)
        links.append(link(url, "once", "readme.txt"))
    context = {
        "links": links,
        "large": LARGE,
        "large_mib": LARGE_SIZE // 2**20,
        "single_use": settings.SINGLE_USE_LINKS,
        "expires_in": EXPIRES_IN,
    }
    return render(request, "downloads/index.html", context)
