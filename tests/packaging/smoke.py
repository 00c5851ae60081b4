"""What each extra promises, run in a clean venv that has the built wheel with that extra and nothing else.

    python smoke.py EXTRA[,EXTRA...] [REDIS_URL]

Run by tests/packaging/test_extras.py, one venv per documented combination of extras, from a folder where the
checkout is not importable: only the installed wheel answers. Each part drives its framework the way a server
does (Django's test client, an ASGI call, Flask's and Quart's test clients), so a module the extra lacks fails
here as it would in a user's first request. Standard library and the installed package only.
"""

# No "from __future__ import annotations": FastAPI reads the views' annotations, imported inside functions here.

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

SECRET = "smoke-test secret, long enough: " + "x" * 40


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"smoke: {what}")


def core() -> None:
    from blake2sign_web import BadSignature, URLSigner, get_signer

    signer = get_signer(SECRET, purpose="smoke", max_age=60)
    check(signer.loads(signer.dumps({"user": 7})) == {"user": 7}, "core: a token round trip")
    links = URLSigner(SECRET, purpose="smoke-links")
    url = links.sign("/files/a.txt", expires_in=60)
    links.verify(url)
    try:
        links.verify(url.replace("a.txt", "b.txt"))
    except BadSignature:
        pass
    else:
        raise SystemExit("smoke: core: an altered link verified")


def encrypted() -> None:
    from blake2sign_web import get_signer

    signer = get_signer(SECRET, purpose="smoke-encrypted", encrypt=True)
    token = signer.dumps({"card": "secret"})
    check("secret" not in token and signer.loads(token) == {"card": "secret"}, "encrypted: a sealed round trip")


# -- ASGI, as a server calls it (no httpx: the extras do not bring it) ------------------------------------------


async def asgi(app: Any, method: str, path: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    raw_path, _, query = path.partition("?")
    headers = [(b"host", b"testserver")] + ([(b"cookie", cookie.encode())] if cookie else [])
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    sent: list[dict[str, Any]] = []
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    response_headers: dict[str, str] = {}
    for name, value in start["headers"]:
        if name.decode().lower() == "set-cookie":
            response_headers.setdefault("set-cookie", "")
            response_headers["set-cookie"] += value.decode().split(";", 1)[0] + "; "
        else:
            response_headers[name.decode().lower()] = value.decode()
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], response_headers, body


def starlette_app(redis_url: str | None, fastapi: bool) -> Any:
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from blake2sign_web import URLSigner
    from blake2sign_web.starlette import SessionMiddleware, SignedFiles, sign_url_for

    revocation: dict[str, Any] = {}
    if redis_url:
        from blake2sign_web.starlette.revocation import RedisStore, revoke_session

        revocation["revocation"] = RedisStore(redis_url, key_prefix="smoke")

    async def visits(request: Request) -> JSONResponse:
        request.session["visits"] = request.session.get("visits", 0) + 1
        return JSONResponse({"visits": request.session["visits"]})

    async def logout(request: Request) -> JSONResponse:
        await revoke_session(request)
        return JSONResponse({"ok": True})

    links = URLSigner(SECRET, purpose="downloads")

    async def link(request: Request) -> JSONResponse:
        return JSONResponse({"url": str(sign_url_for(request, links, "files", name="a.txt", expires_in=60))})

    folder = Path(tempfile.mkdtemp())
    (folder / "a.txt").write_text("a file")
    files = SignedFiles(links, folder)
    if fastapi:
        from fastapi import FastAPI

        app: Any = FastAPI()
        app.add_api_route("/visits", visits)
        app.add_api_route("/logout", logout, methods=["POST"])
        app.add_api_route("/link", link)
        app.add_route("/files/{name:path}", files, name="files")
        app.add_middleware(SessionMiddleware, secret_key=SECRET, **revocation)
        return app
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    routes = [Route("/visits", visits), Route("/logout", logout, methods=["POST"]), Route("/link", link)]
    routes.append(Route("/files/{name:path}", files, name="files"))
    return Starlette(routes=routes, middleware=[Middleware(SessionMiddleware, secret_key=SECRET, **revocation)])


async def asgi_round_trip(app: Any, redis_url: str | None, name: str) -> None:
    status, headers, body = await asgi(app, "GET", "/visits")
    check(status == 200 and body == b'{"visits":1}', f"{name}: first visit answered {status} {body!r}")
    cookie = headers["set-cookie"]
    status, _, body = await asgi(app, "GET", "/visits", cookie)
    check(body == b'{"visits":2}', f"{name}: the session came back as {body!r}")
    status, _, body = await asgi(app, "GET", "/link")
    url = body.decode().split('"url":"', 1)[1].split('"', 1)[0].replace("http://testserver", "")
    status, _, body = await asgi(app, "GET", url)
    check(status == 200 and body == b"a file", f"{name}: a signed link answered {status}")
    status, _, _ = await asgi(app, "GET", url.replace("a.txt", "b.txt"))
    check(status in (403, 404), f"{name}: an altered link answered {status}")
    if redis_url:
        status, _, _ = await asgi(app, "POST", "/logout", cookie)
        check(status == 200, f"{name}: log out answered {status}")
        status, _, body = await asgi(app, "GET", "/visits", cookie)
        check(body == b'{"visits":1}', f"{name}: a revoked session still read as {body!r}")


def starlette(redis_url: str | None, fastapi: bool = False) -> None:
    name = "fastapi" if fastapi else "starlette"
    asyncio.run(asgi_round_trip(starlette_app(redis_url, fastapi), redis_url, name))


# -- Django -----------------------------------------------------------------------------------------------------


def django(redis_url: str | None) -> None:
    import django
    from django.conf import settings

    folder = Path(tempfile.mkdtemp())
    (folder / "a.txt").write_text("a file")
    sessions: dict[str, Any] = {}
    caches: dict[str, Any] = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    if redis_url:
        caches["sessions"] = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        sessions = {"REVOCATION_CACHE": "sessions", "REVOCATION_KEY_PREFIX": "smoke"}
    settings.configure(
        SECRET_KEY=SECRET,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "blake2sign_web.django"],
        MIDDLEWARE=["blake2sign_web.django.middleware.SessionMiddleware"],
        SESSION_ENGINE="blake2sign_web.django.sessions",
        CACHES=caches,
        DATABASES={},
        BLAKE2SIGN_WEB={"SESSIONS": sessions},
        FILES_ROOT=str(folder),
    )
    django.setup()
    from django.core import checks
    from django.test import Client

    problems = [p for p in checks.run_checks() if p.is_serious()]
    check(not problems, f"django: system checks {problems}")
    client = Client()
    check(client.get("/visits").json() == {"visits": 1}, "django: first visit")
    check(client.get("/visits").json() == {"visits": 2}, "django: the session came back")
    url = client.get("/link").json()["url"]
    response = client.get(url)
    check(response.status_code == 200 and b"".join(response.streaming_content) == b"a file", "django: a link")
    check(client.get(url.replace("a.txt", "b.txt")).status_code == 403, "django: an altered link was served")
    if redis_url:
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        check(client.post("/logout").status_code == 200, "django: log out")
        thief = Client()
        thief.cookies[settings.SESSION_COOKIE_NAME] = cookie
        check(thief.get("/visits").json() == {"visits": 1}, "django: a revoked session still read")


def django_urls() -> list[Any]:
    from django.conf import settings
    from django.http import HttpRequest, JsonResponse
    from django.urls import path

    from blake2sign_web.django.signed_urls import sign_url
    from blake2sign_web.django.views import SignedFileView

    def visits(request: HttpRequest) -> JsonResponse:
        request.session["visits"] = request.session.get("visits", 0) + 1
        return JsonResponse({"visits": request.session["visits"]})

    def logout(request: HttpRequest) -> JsonResponse:
        request.session.flush()
        return JsonResponse({"ok": True})

    def link(request: HttpRequest) -> JsonResponse:
        return JsonResponse({"url": sign_url("/files/a.txt", expires_in=60)})

    from django.core.files.storage import FileSystemStorage
    from django.views.decorators.csrf import csrf_exempt

    files = SignedFileView.as_view(storage=FileSystemStorage(location=settings.FILES_ROOT))
    return [
        path("visits", visits),
        path("logout", csrf_exempt(logout)),
        path("link", link),
        path("files/<path:name>", files),
    ]


def __getattr__(name: str) -> Any:  # ROOT_URLCONF = this module: Django reads urlpatterns after setup
    if name == "urlpatterns":
        return django_urls()
    raise AttributeError(name)


# -- Flask and Quart --------------------------------------------------------------------------------------------


def flask(redis_url: str | None) -> None:
    from flask import Flask, session

    from blake2sign_web.flask import FlaskSessions, SignedFiles, sign_url

    app = Flask("smoke")
    app.config["SECRET_KEY"] = SECRET
    if redis_url:
        from blake2sign_web.flask.revocation import RedisStore, revoke_session

        app.config["BLAKE2SIGN_WEB"] = {"REVOCATION": RedisStore(redis_url, key_prefix="smoke")}
    FlaskSessions(app)
    folder = Path(tempfile.mkdtemp())
    (folder / "a.txt").write_text("a file")
    from blake2sign_web import URLSigner

    links = URLSigner(SECRET, purpose="downloads")
    app.add_url_rule("/files/<path:name>", view_func=SignedFiles(links, folder))

    @app.get("/visits")
    def visits() -> dict[str, int]:
        session["visits"] = session.get("visits", 0) + 1
        return {"visits": session["visits"]}

    @app.post("/logout")
    def logout() -> dict[str, bool]:
        revoke_session()
        return {"ok": True}

    @app.get("/link")
    def link() -> dict[str, str]:
        return {"url": sign_url(links, "signed_files", name="a.txt", expires_in=60)}

    client = app.test_client()
    check(client.get("/visits").json == {"visits": 1}, "flask: first visit")
    check(client.get("/visits").json == {"visits": 2}, "flask: the session came back")
    url = client.get("/link").json["url"]  # type: ignore[index]
    response = client.get(url)
    check(response.status_code == 200 and response.data == b"a file", f"flask: a link answered {response.status}")
    check(client.get(url.replace("a.txt", "b.txt")).status_code == 403, "flask: an altered link was served")
    if redis_url:
        cookie = client.get_cookie("session")
        check(cookie is not None and client.post("/logout").status_code == 200, "flask: log out")
        thief = app.test_client()
        thief.set_cookie("session", cookie.value)  # type: ignore[union-attr]
        check(thief.get("/visits").json == {"visits": 1}, "flask: a revoked session still read")


def quart(redis_url: str | None) -> None:
    import quart as quart_module

    from blake2sign_web.flask import QuartSessions

    app = quart_module.Quart("smoke")
    app.config["SECRET_KEY"] = SECRET
    if redis_url:
        from blake2sign_web.flask.quart import RedisStore, revoke_session

        app.config["BLAKE2SIGN_WEB"] = {"REVOCATION": RedisStore(redis_url, key_prefix="smoke")}
    QuartSessions(app)

    @app.get("/visits")
    async def visits() -> dict[str, int]:
        quart_module.session["visits"] = quart_module.session.get("visits", 0) + 1
        return {"visits": quart_module.session["visits"]}

    @app.post("/login/<int:user>")
    async def login(user: int) -> dict[str, int]:
        quart_module.session["user"] = user
        return {"user": user}

    @app.post("/logout")
    async def logout() -> dict[str, bool]:
        await revoke_session()
        return {"ok": True}

    async def scenario() -> None:
        client = app.test_client()
        check(await (await client.get("/visits")).get_json() == {"visits": 1}, "quart: first visit")
        check(await (await client.get("/visits")).get_json() == {"visits": 2}, "quart: the session came back")
        response = await client.post("/login/7")
        check(response.status_code == 200, f"quart: log in answered {response.status_code}")
        if redis_url:
            cookie = response.headers["set-cookie"].split(";", 1)[0]
            check((await client.post("/logout")).status_code == 200, "quart: log out")
            thief = app.test_client()
            answer = await thief.get("/visits", headers={"Cookie": cookie})
            check(await answer.get_json() == {"visits": 1}, "quart: a revoked session still read")

    asyncio.run(scenario())


def main() -> None:
    extras = set(sys.argv[1].split(","))
    redis_url = sys.argv[2] if len(sys.argv) > 2 and "redis" in extras else None
    core()
    parts = {
        "encrypted": encrypted,
        "django": lambda: django(redis_url),
        "starlette": lambda: starlette(redis_url),
        "fastapi": lambda: starlette(redis_url, fastapi=True),
        "flask": lambda: flask(redis_url),
        "quart": lambda: quart(redis_url),
    }
    for extra in sorted(extras - {"redis"}):
        parts[extra]()
    print(f"smoke: [{sys.argv[1]}] ok")


if __name__ == "__main__":
    main()
