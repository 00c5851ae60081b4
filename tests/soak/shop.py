"""The shop the hostile-request and soak tests serve: a logged-in session with a small cart, and signed downloads.

One definition of the session, the cart and the files for both frameworks: the FastAPI app here (uvicorn
runs ``shop:app_from_env``) and the Django views in ``django_urls`` (gunicorn runs them with
``DJANGO_SETTINGS_MODULE=tests.soak.django_settings``). Every cart endpoint answers 403 when the session
no longer holds the user, so a lost session is counted as an error by whatever drives the load.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SessionMiddleware, require_signature, signed_file_response

#: The Starlette app's secret (Django's is tests.django_settings.SECRET_KEY).
SECRET = "soak-tests-secret-0123456789-abcdefghijklmnop"
#: What django.contrib.auth.login() stores, with a password hash's HMAC of the usual length.
LOGIN: dict[str, Any] = {
    "_auth_user_id": "1",
    "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
    "_auth_user_hash": "5f0c5d1c2d3b4a69" * 4,
}
ITEMS = ("tea", "cup", "pot", "spoon", "tray")
#: Quantities wrap around, so the cart (and its cookie) stays small however long the load runs.
MAX_QUANTITY = 3
REPORT = bytes(range(256)) * 64  # 16 KiB, every offset distinguishable
#: Written just outside the served folder: no download may ever return it.
SECRET_FILE_CONTENT = b"B2SW-SECRET-FILE-CONTENT"


def write_files(root: Path) -> Path:
    """The served folder: a report, a unicode name, and links that lead outside it to a secret."""
    (root / "sub").mkdir(parents=True)
    (root / "report.bin").write_bytes(REPORT)
    (root / "sub" / "caf\u00e9.txt").write_text("menu")
    (root.parent / "secret.txt").write_bytes(SECRET_FILE_CONTENT)
    (root / "escape.txt").symlink_to(root.parent / "secret.txt")
    (root / "escape-dir").symlink_to(root.parent)
    return root


def logged_in(session: Any) -> bool:
    return bool(session.get("_auth_user_id") == LOGIN["_auth_user_id"])


def add_to_cart(cart: dict[str, int], item: str) -> dict[str, int]:
    """One more of ``item`` (1 again after MAX_QUANTITY); ValueError for an unknown item."""
    if item not in ITEMS:
        raise ValueError("unknown item")
    return {**cart, item: cart.get(item, 0) % MAX_QUANTITY + 1}


def log_to_stderr() -> None:
    """Every warning the library logs (rejected cookies and links) on stderr, where the tests read it."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s %(message)s")


def make_signer() -> URLSigner:
    return URLSigner(SECRET, purpose="downloads")


def shopper(request: Request) -> dict[str, int]:
    """The logged-in user's cart; 403 when the session no longer holds the user."""
    if not logged_in(request.session):
        raise HTTPException(403, "Not logged in.")
    cart: dict[str, int] = request.session.get("cart", {})
    return cart


Cart = Annotated[dict[str, int], Depends(shopper)]


def build_app(root: str | os.PathLike[str]) -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(SessionMiddleware, secret_key=SECRET)

    def shopper(request: Request) -> dict[str, int]:
        if not logged_in(request.session):
            raise HTTPException(403, "Not logged in.")
        cart: dict[str, int] = request.session.get("cart", {})
        return cart

    @app.post("/login")
    async def login(request: Request) -> Response:
        request.session.update({**LOGIN, "cart": {}})
        return JSONResponse({"user": LOGIN["_auth_user_id"]})

    @app.get("/cart")
    async def read_cart(cart: Cart) -> Response:
        return JSONResponse(cart)

    @app.post("/cart/add")
    async def add(request: Request, item: str, cart: Cart) -> Response:
        try:
            request.session["cart"] = add_to_cart(cart, item)
        except ValueError:
            raise HTTPException(400, "Unknown item.") from None
        return JSONResponse(request.session["cart"])

    @app.get("/files/{name:path}", dependencies=[Depends(require_signature(make_signer()))])
    async def download(request: Request, name: str) -> Response:
        response: Response = await signed_file_response(request, root, name)
        return response

    return app


def app_from_env() -> FastAPI:
    """For ``uvicorn --factory tests.soak.shop:app_from_env``."""
    log_to_stderr()
    return build_app(os.environ["BLAKE2SIGN_SERVED_ROOT"])
