"""The example FastAPI app: the Django site's tea shop, on Starlette's and starsessions' sessions and ours.

uvicorn example_project.fastapi_site.app:app --port 8001 --lifespan on
"""

from __future__ import annotations

import hmac
from html import escape
from urllib.parse import parse_qs, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SignedFiles, sign_url_for
from example_project.django_site.shop.catalogue import PRODUCTS, price
from example_project.files import FILES, LARGE, LARGE_SIZE, ensure_files

from . import pages
from .csrf import CSRFMiddleware, csrf_input
from .engines import CHOICE_COOKIE, DEFAULT, ENGINES, EngineSwitch, engine_of, secret_key
from .redis_links import single_use_store

SECRET_KEY = secret_key()
#: The demo account, as in the Django site (which keeps it in SQLite).
DEMO_USERS = {"demo": "demo"}
EXPIRES_IN = 60

signer = URLSigner(SECRET_KEY, purpose="example.downloads")
files_root = ensure_files()
links_store = single_use_store()


def user_id(request: Request) -> str | None:
    """What a "just for you" link is bound to."""
    return request.session.get("user")


inner = FastAPI(title="blake2sign_web example shop", docs_url=None, redoc_url=None, openapi_url=None)
inner.router.routes.append(
    Route(
        "/downloads/files/{name:path}",
        SignedFiles(signer, files_root, single_use=links_store),
        name="files",
    )
)
inner.router.routes.append(
    Route("/downloads/mine/{name:path}", SignedFiles(signer, files_root, bind=user_id), name="mine")
)


def flash(request: Request, message: str) -> None:
    request.session["flash"] = [*request.session.get("flash", []), message]


def page(request: Request, title: str, body: str, scripts: str = "") -> HTMLResponse:
    token = csrf_input(request)  # the forms of the layout: log out, switch engine
    flashes = request.session.pop("flash", [])
    cookie = request.cookies.get("session")
    html = pages.layout(
        title=title,
        body=body,
        user=request.session.get("user"),
        flashes=flashes,
        engine=engine_of(request.scope),
        cookie_size=len("session=") + len(cookie) if cookie else 0,
        path=request.url.path,
        scripts=scripts,
        csrf_input=token,
    )
    return HTMLResponse(html)


async def form(request: Request) -> dict[str, str]:
    """The urlencoded form body (no python-multipart needed for the example's small forms)."""
    body = (await request.body()).decode("utf-8", "replace")
    return {key: values[0] for key, values in parse_qs(body).items()}


def back(url: str) -> RedirectResponse:
    return RedirectResponse(url if url.startswith("/") and not url.startswith("//") else "/", status_code=303)


@inner.get("/", response_class=HTMLResponse)
async def shop(request: Request) -> HTMLResponse:
    token = csrf_input(request)
    items = "".join(
        f'<li>{escape(name)}, {price(cents)} <form method="post" action="/cart/add" style="display:inline">{token}'
        f'<input type="hidden" name="product" value="{key}"><button type="submit" id="add-{key}">Add to cart</button>'
        "</form></li>"
        for key, (name, cents) in PRODUCTS.items()
    )
    body = (
        "<h1>Tea shop</h1><p>The cart lives in the session; the session lives in the cookie of the middleware "
        f"below.</p><ul>{items}</ul>"
    )
    return page(request, "Tea shop", body)


@inner.post("/cart/add")
async def add_to_cart(request: Request) -> Response:
    product = (await form(request)).get("product", "")
    if product not in PRODUCTS:
        flash(request, "No such product.")
        return back("/")
    cart = dict(request.session.get("cart", {}))
    cart[product] = cart.get(product, 0) + 1
    request.session["cart"] = cart
    flash(request, f"Added {PRODUCTS[product][0]} to your cart.")
    return back("/")


@inner.post("/cart/empty")
async def empty_cart(request: Request) -> Response:
    request.session.pop("cart", None)
    flash(request, "Your cart is empty.")
    return back("/cart")


@inner.get("/cart", response_class=HTMLResponse)
async def cart(request: Request) -> HTMLResponse:
    items = {k: n for k, n in request.session.get("cart", {}).items() if k in PRODUCTS}
    if not items:
        return page(request, "Cart", '<h1>Your cart</h1><p id="cart">Nothing yet.</p>')
    rows = pages.render_rows([(PRODUCTS[k][0], f"x {n}", price(PRODUCTS[k][1] * n)) for k, n in items.items()])
    total = price(sum(PRODUCTS[k][1] * n for k, n in items.items()))
    body = (
        f'<h1>Your cart</h1><table id="cart">{rows}<tr><th>Total</th><td></td><th>{total}</th></tr></table>'
        f'<form method="post" action="/cart/empty">{csrf_input(request)}'
        '<button type="submit">Empty the cart</button></form>'
    )
    return page(request, "Cart", body)


@inner.get("/accounts/login", response_class=HTMLResponse)
async def login_form(request: Request) -> HTMLResponse:
    body = (
        "<h1>Log in</h1><p>The demo account is <code>demo</code> / <code>demo</code>.</p>"
        f'<form method="post">{csrf_input(request)}'
        '<p><label>Username: <input name="username" id="id_username"></label></p>'
        '<p><label>Password: <input type="password" name="password" id="id_password"></label></p>'
        '<button type="submit" id="login-submit">Log in</button></form>'
    )
    return page(request, "Log in", body)


@inner.post("/accounts/login")
async def login(request: Request) -> Response:
    data = await form(request)
    username, password = data.get("username", ""), data.get("password", "")
    expected = DEMO_USERS.get(username)
    if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
        flash(request, "Wrong username or password.")
        return back("/accounts/login")
    request.session.clear()  # a new session for the logged-in user, nothing carried over
    request.session["user"] = username
    flash(request, f"Welcome, {username}: you are logged in.")
    return back("/")


@inner.post("/accounts/logout")
async def logout(request: Request) -> Response:
    request.session.clear()
    request.session["flash"] = ["You are logged out."]
    return back("/")


@inner.post("/engine")
async def switch_engine(request: Request) -> Response:
    """Set the engine cookie and end the session: a session of one middleware means nothing to another."""
    data = await form(request)
    name = data.get("engine", DEFAULT)
    name = name if name in ENGINES else DEFAULT
    request.session.clear()
    response = back(data.get("next", "/"))
    response.set_cookie(CHOICE_COOKIE, name, max_age=365 * 24 * 3600, httponly=True, samesite="lax")
    return response


def link(url: str, kind: str, name: str) -> tuple[str, str, str, str]:
    expires = parse_qs(urlsplit(url).query).get("expires", [""])[0]
    return url, kind, name, expires


@inner.get("/downloads", response_class=HTMLResponse)
async def downloads(request: Request) -> HTMLResponse:
    names = [*FILES, LARGE]
    links = [link(sign_url_for(request, signer, "files", expires_in=EXPIRES_IN, name=n), "anyone", n) for n in names]
    user = request.session.get("user")
    if user:
        links += [
            link(
                sign_url_for(request, signer, "mine", expires_in=EXPIRES_IN, bind=user, name=n),
                f"only {user}",
                n,
            )
            for n in names
        ]
    if links_store is not None:
        url = sign_url_for(request, signer, "files", expires_in=EXPIRES_IN, single_use=True, name="readme.txt")
        links.append(link(url, "once", "readme.txt"))
    rows = "".join(
        f'<tr><td><a class="download" data-kind="{escape(kind)}" href="{escape(url)}">{escape(name)}</a></td>'
        f'<td>{escape(kind)}</td><td class="countdown" data-expires="{escape(expires)}">{EXPIRES_IN} s</td></tr>'
        for url, kind, name, expires in links
    )
    once = (
        '<p>The "once" link works for one download: Redis remembers it was used.</p>'
        if links_store is not None
        else "<p>Single-use links need Redis: none answered at start-up "
        "(start <code>redis-server</code> and restart).</p>"
    )
    login_hint = "" if user else ' <a href="/accounts/login">Log in</a> for links bound to you.'
    body = (
        f"<h1>Downloads</h1><p>Each link is signed for {EXPIRES_IN} seconds; reload the page for fresh ones. "
        f"Change any character of a link and it is refused (403); after the countdown it is gone (410).{login_hint}</p>"
        f'<table id="links"><tr><th>file</th><th>who may use it</th><th>expires</th></tr>{rows}</table>{once}'
        f"<p><code>{LARGE}</code> is {LARGE_SIZE // 2**20} MiB (sparse on disk): it streams in chunks and resumes "
        'with <code>Range</code>, e.g. <code>curl -r 0-99 -o part "&lt;link&gt;"</code>.</p>'
    )
    countdown = """<script>
function tick() {
  const now = Date.now() / 1000;
  for (const cell of document.querySelectorAll(".countdown")) {
    const left = Math.round(Number(cell.dataset.expires) - now);
    cell.textContent = left > 0 ? `${left} s` : "expired";
  }
}
tick(); setInterval(tick, 1000);
</script>"""
    return page(request, "Downloads", body, countdown)


#: The CSRF check runs inside each engine's session middleware: it reads the token from the session.
app = EngineSwitch(CSRFMiddleware(inner), SECRET_KEY)
