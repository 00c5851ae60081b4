"""``sign()`` and the parameters the link format reserves (issue 27, item 15).

A URL to sign that already has one of the signer's own parameters was signed anyway: ``expires`` and
``signature`` were dropped or replaced, ``once`` (empty, or anything not a nonce) made a link that could
never verify, and ``filename`` / ``disposition`` silently became the signed download name. Each is now a
ValueError naming the parameter, from the core and from every helper that signs; each has its keyword.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import RequestFactory
from fastapi import FastAPI, Request
from starlette.testclient import TestClient

from blake2sign_web import URLSigner
from blake2sign_web.django import sign_url
from blake2sign_web.starlette import SignedFiles, sign_url_for

NOW = 1_800_000_000
NONCE = "A" * 22


def signer(**options: object) -> URLSigner:
    return URLSigner("reserved-params-secret-0123456789", purpose="downloads", clock=lambda: NOW, **options)  # type: ignore[arg-type]


#: (query the caller wrote, keywords of sign(), the parameter the ValueError must name)
REFUSED = [
    ("signature=" + "x" * 43, {}, "signature"),
    ("expires=1900000000", {}, "expires"),
    ("expires=1900000000", {"expires_in": 60}, "expires"),
    ("once=", {"expires_in": 60}, "once"),
    ("once=not-a-nonce", {"expires_in": 60}, "once"),
    (f"once={NONCE}", {"expires_in": 60}, "once"),
    (f"once={NONCE}", {"expires_in": 60, "single_use": True}, "once"),
    ("consume=post", {"expires_in": 60, "single_use": True}, "consume"),
    ("disposition=inline", {}, "disposition"),
    ("disposition=attachment", {"filename": "a.pdf"}, "disposition"),
    ("filename=evil.html", {"disposition": "inline"}, "filename"),
    ("filename=old.pdf", {"filename": "new.pdf"}, "filename"),
    ("group=course-42", {}, "group"),
    ("group=course-42", {"expires_in": 60, "group": "course-43"}, "group"),
    ("issued=1", {}, "issued"),
    ("issued=1", {"expires_in": 60, "group": "course-42"}, "issued"),
]


@pytest.mark.parametrize(("query", "keywords", "name"), REFUSED)
def test_a_reserved_parameter_in_the_url_is_a_value_error_naming_it(
    query: str, keywords: dict[str, object], name: str
) -> None:
    with pytest.raises(ValueError, match=f"its query already has '{name}'"):
        signer().sign(f"/files/a.pdf?v=1&{query}", **keywords)  # type: ignore[arg-type]
    # Spelled with escapes, the name is the same name to verify(): refused too.
    escaped = query.replace(name, "".join(f"%{ord(c):02X}" for c in name), 1)
    with pytest.raises(ValueError, match=f"'{name}'"):
        signer().sign(f"/files/a.pdf?{escaped}", **keywords)  # type: ignore[arg-type]


def test_the_keywords_say_what_the_url_said() -> None:
    link = signer().verify_link(
        signer().sign("/files/a.pdf?v=1", expires_at=NOW + 60, single_use=True, filename="b.pdf")
    )
    assert (link.expires_at, link.filename, link.disposition) == (NOW + 60, "b.pdf", "attachment")
    assert link.nonce is not None


def test_a_filename_of_the_applications_own_is_kept_when_the_link_names_no_download() -> None:
    url = signer().sign("/export?filename=a/b.csv", expires_in=60)
    link = signer().verify_link(url)
    assert (link.filename, link.disposition) == (None, None)


def test_the_signers_own_names_are_reserved_and_the_default_ones_are_free() -> None:
    custom = signer(expires_param="exp", nonce_param="n", signature_param="sig")
    with pytest.raises(ValueError, match=r"its query already has 'exp'.*expires_param="):
        custom.sign("/a?exp=1", expires_in=60)
    url = custom.sign("/a?expires=1&once=&signature=mine", expires_in=60)  # the application's own now
    custom.verify(url)


def test_django_sign_url_refuses_alike(rf: RequestFactory) -> None:
    with pytest.raises(ValueError, match="'once'"):
        sign_url("/files/a.pdf?once=", expires_in=60)
    with pytest.raises(ValueError, match="'expires'"):
        sign_url("/files/a.pdf?expires=1900000000", request=rf.get("/", HTTP_HOST="localhost"))


def test_starlette_sign_url_for_refuses_alike(tmp_path: Path) -> None:
    """url_for writes a path parameter's "?" as it is: a name that smuggles in a reserved parameter."""
    app = FastAPI()
    app.add_route("/files/{name:path}", SignedFiles(signer(), tmp_path), name="files")

    @app.get("/share")
    async def share(request: Request) -> str:
        return sign_url_for(request, signer(), "files", expires_in=60, name=request.query_params["n"])

    assert "/files/a.pdf?expires=" in TestClient(app).get("/share", params={"n": "a.pdf"}).json()
    with pytest.raises(ValueError, match="'disposition'"):
        TestClient(app).get("/share", params={"n": "a.html?disposition=inline"})


def test_an_applications_own_filename_may_repeat_when_the_link_names_no_download() -> None:
    """A filename without a disposition is the application's parameter: repeated, it signs and verifies."""
    url = signer().sign("/export?filename=a.csv&filename=b.csv", expires_in=60)
    assert signer().verify_link(url).filename is None
