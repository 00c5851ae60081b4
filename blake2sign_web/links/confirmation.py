"""The page that stands in front of a single-use link signed with ``consume_on="post"``.

Mail scanners fetch every link of a message with GET before the person clicks it: a ``consume=post`` link is
never used up by GET or HEAD, which get this page (or the application's own), whose button POSTs to the URL
the browser shows. The page posts with ``Referrer-Policy: strict-origin`` (a real ``Origin`` for the CSRF check,
never the signature in a ``Referer``), cannot be framed, and is never cached or indexed: docs/signed-urls.md,
"Links in e-mails" and "Why the confirmation's POST is CSRF-checked".
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any, Final, Protocol, TypeVar

#: What the page needs to be safe, set on the built-in page and on the application's own.
SAFETY_HEADERS: Final[Mapping[str, str]] = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    # Not no-referrer: a form POST from such a page carries "Origin: null", which Django's CSRF check refuses.
    "Referrer-Policy": "strict-origin",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
}
#: The built-in page's policy: nothing loads, nothing frames it. (No form-action: the POST may answer with a
#: redirect to another origin, such as a presigned storage URL, which form-action would block.)
PAGE_POLICY: Final = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
#: Added to an application's own page that has no Content-Security-Policy of its own.
FRAME_POLICY: Final = "frame-ancestors 'none'"

#: The built-in page. The form has no ``action``: it POSTs to the document's URL, which is the link itself
#: as the browser sees it (behind any proxy or path prefix), so nothing from the request is written into it.
#: ``{fields}``: the hidden inputs of ``page()``.
TEMPLATE: Final = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="strict-origin">
<title>Continue</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5}
button{font-size:1.1rem;padding:.6rem 1.4rem}</style>
</head>
<body>
<main>
<h1>This link works once</h1>
<p>Press the button to use it.</p>
<form method="post">{fields}<button type="submit">Continue</button></form>
</main>
</body>
</html>
"""


def page(fields: Mapping[str, str] | None = None) -> str:
    """The built-in page, its form carrying ``fields`` as hidden inputs (Django's CSRF token), HTML-escaped."""
    hidden = "".join(
        f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">' for name, value in (fields or {}).items()
    )
    return TEMPLATE.replace("{fields}", hidden)


#: The page without hidden fields (Starlette's: it has no CSRF check of its own).
PAGE: Final = page()


def page_headers() -> dict[str, str]:
    """The headers of the built-in page (Content-Type included)."""
    return {"Content-Type": "text/html; charset=utf-8", **SAFETY_HEADERS, "Content-Security-Policy": PAGE_POLICY}


def built_in(fields: Mapping[str, str] | None = None) -> tuple[bytes, dict[str, str]]:
    """The built-in page as a response's body and its headers, Content-Length included (a HEAD's too).

    ``fields``: the hidden inputs of its form (Django's CSRF token; Starlette has no CSRF check of its own).
    """
    body = (page(fields) if fields else PAGE).encode()
    return body, {**page_headers(), "Content-Length": str(len(body))}


#: ``Sec-Fetch-Site`` of the page's own POST: the form posts to the document's URL.
SAME_ORIGIN: Final = "same-origin"


def cross_site_post(headers: Mapping[str, str]) -> bool:
    """Whether a browser says this confirmation POST came from another page than the link's own.

    For frameworks without a CSRF check of their own (Starlette): a link someone got for himself,
    posted from another person's browser by a page of his, would act with her cookies (log her into
    his account). Browsers (Chromium 76+, Firefox 90+, Safari 16.4+) send ``Sec-Fetch-Site``, which
    pages cannot set; the page's own form sends ``same-origin``. A request without it (an older
    browser, or a client that is not a browser and so carries no one's cookies) is let through.
    """
    site = headers.get("sec-fetch-site")
    return site is not None and site.strip().lower() != SAME_ORIGIN


class Headers(Protocol):
    """A response's case-insensitive headers: Django's ``response.headers``, Starlette's ``MutableHeaders``."""

    def __setitem__(self, key: str, value: str, /) -> None: ...

    def get(self, key: str, /) -> Any: ...


class Page(Protocol):
    """A response whose ``headers`` ``secure`` can set."""

    @property
    def headers(self) -> Any: ...


P = TypeVar("P", bound=Page)


def secured(response: P) -> P:
    """``response`` (an application's own confirmation page) after ``secure`` made its headers safe."""
    secure(response.headers)
    return response


def secure(headers: Headers) -> None:
    """Make an application's own confirmation page unframeable and uncached, keeping its own CSP if it has one."""
    for name, value in SAFETY_HEADERS.items():
        headers[name] = value
    policy = headers.get("Content-Security-Policy")
    if policy is None:
        headers["Content-Security-Policy"] = FRAME_POLICY
    elif "frame-ancestors" not in policy:
        headers["Content-Security-Policy"] = f"{policy.rstrip('; ')}; {FRAME_POLICY}"
