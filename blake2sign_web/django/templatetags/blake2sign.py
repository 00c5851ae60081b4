"""``{% load blake2sign %}``: ``{% signed_url "route-name" arg1 key=value expires_in=3600 %}``.

Takes what ``{% url %}`` takes, plus ``expires_in`` (seconds), ``absolute=True``
(a full URL built from the request, for e-mails) and ``single_use=True`` (the link works
once; needs ``expires_in`` and ``SINGLE_USE_CACHE``); ``as name`` stores the result.
"""

from __future__ import annotations

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
    return sign_url(path, expires_in=expires_in, request=request, single_use=single_use)
