"""``{% load blake2sign %}``: ``{% signed_url "route-name" arg1 key=value expires_in=3600 %}``, what ``{% url %}``
takes and ``sign_url``'s options (docs/signed-urls.md, "Django", lists them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.urls import reverse

from ..signed_urls import sign_url

register = template.Library()


@register.simple_tag(takes_context=True)
def signed_url(
    context: template.Context,
    viewname: str,
    *args: Any,
    expires_in: int | float | None = None,
    absolute: bool = False,
    single_use: bool = False,
    consume_on: str | None = None,
    download_as: str | None = None,
    disposition: str | None = None,
    starts: int | datetime | None = None,
    **kwargs: Any,
) -> str:
    """``{% signed_url "download" name expires_in=3600 %}``: ``reverse()`` the view, then sign the path."""
    path = reverse(viewname, args=args or None, kwargs=kwargs or None)
    request = context.get("request") if absolute else None
    if absolute and request is None:
        raise template.TemplateSyntaxError(
            "{% signed_url ... absolute=True %} needs 'request' in the context "
            "(add django.template.context_processors.request)"
        )
    return sign_url(
        path,
        expires_in=expires_in,
        request=request,
        single_use=single_use,
        consume_on=consume_on,  # type: ignore[arg-type]  # checked by URLSigner.sign
        filename=download_as,
        disposition=disposition,  # type: ignore[arg-type]
        starts=starts,
    )
