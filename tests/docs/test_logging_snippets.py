"""Every page that promises a log line shows the lines that make it visible, and those lines do.

The library's loggers end in a ``NullHandler`` (the standard library's advice for libraries), so nothing is
printed until the application configures logging, and Django's default logging shows ``django.security`` only
with ``DEBUG`` on and never ``blake2sign_web``. A page that says "a ``WARNING`` on ``blake2sign_web.starlette``"
without saying so leaves a reader looking for a line that never comes. Every such page (its prose, or for the
reference pages the docstrings they render) must show, as a Python block, the same lines for each framework it
covers; and those exact lines, run under a real uvicorn and through Django's middleware, must print the
library's WARNING and INFO lines, each once, where without them nothing is printed.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from blake2sign_web import URLSigner
from tests.servers import free_port, logged_server

from .readme import DOCS_DIR, ROOT, sections
from .run_commands import pages

#: What a Starlette or FastAPI application adds to its module.
STARLETTE = """\
import logging

logging.basicConfig()  # a handler on the root logger: WARNING and above, on stderr
logging.getLogger("blake2sign_web").setLevel(logging.INFO)  # and this library's INFO lines
"""
#: What a Django project adds to settings.py (or the two loggers, to a LOGGING of its own).
DJANGO = """\
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "blake2sign_web": {"handlers": ["console"], "level": "INFO"},
        "django.security.SuspiciousSession": {"handlers": ["console"], "level": "WARNING", "propagate": False},
    },
}
"""
#: What a Flask or Quart application adds before it creates its app: Starlette's lines.
FLASK = STARLETTE
SNIPPETS = {"starlette": STARLETTE, "django": DJANGO, "flask": FLASK}

#: The pages that promise log lines, and the frameworks whose lines each must show.
PAGES = {
    "docs/django.md": {"django"},
    "docs/starlette.md": {"starlette"},
    "docs/security.md": {"django", "starlette"},
    "docs/signed-urls.md": {"django", "starlette"},
    "docs/revocation.md": {"django", "starlette"},
    "docs/conformance.md": {"django", "starlette"},
    "docs/recipes/session-timeouts.md": {"django", "starlette"},
    "docs/recipes/django-s3-and-nginx.md": {"django"},
    "docs/migrating/from-starlette.md": {"starlette"},
    "docs/migrating/from-flask.md": {"flask"},
    "docs/migrating/from-starsessions.md": {"starlette"},
    "docs/migrating/from-django-signed-cookies.md": {"django"},
    "docs/migrating/from-django-db-cache.md": {"django"},
    "docs/reference/django.md": {"django"},
    "docs/reference/starlette.md": {"starlette"},
    "docs/reference/core.md": {"django", "starlette"},
    "docs/protecting-video.md": {"django", "starlette"},
}

#: Prose that promises a log line: "an error is logged", "a `WARNING` on", "the ... logger", "logs an error",
#: "an empty session and a warning";
#: not "logged out", "logged in" or "logs the user in".
PROMISE = re.compile(
    r"\blogged\b(?! (?:out|in)\b)(?!-in)|\blog line|\blogger\b|\blogs (?:a|an|nothing)\b|`(?:WARNING|ERROR|INFO)`"
    r"|\b(?:a|an) (?:warning|error) (?:on|is logged|goes to)\b|\bempty session and a warning\b",
    re.IGNORECASE,
)


def prose(text: str) -> str:
    """A page without its fenced code: what it tells the reader, not what its examples do."""
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


def rendered_docstrings(page: Path) -> str:
    """The docstrings a reference page renders (``::: module``): the module's and its public members'."""
    found = []
    for name in re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.MULTILINE):
        try:
            shown: object = importlib.import_module(name)
            members = [
                m for n, m in vars(shown).items() if not n.startswith("_") and getattr(m, "__module__", 0) == name
            ]
        except ModuleNotFoundError:  # a class or function: ::: blake2sign_web.URLSigner
            parent, _, attribute = name.rpartition(".")
            shown = getattr(importlib.import_module(parent), attribute)
            members = []
        for member in [shown, *members]:
            found.append(inspect.getdoc(member) or "")
            for attribute_name, attribute in vars(member).items() if inspect.isclass(member) else ():
                if not attribute_name.startswith("_") and callable(attribute):
                    found.append(inspect.getdoc(attribute) or "")
    return "\n".join(found)


def promises(page: Path) -> list[str]:
    text = prose(page.read_text(encoding="utf-8"))
    if page.is_relative_to(DOCS_DIR / "reference"):
        text += "\n" + rendered_docstrings(page)
    return [match.group(0) for match in PROMISE.finditer(text)]


def test_every_page_that_promises_a_log_line_is_listed() -> None:
    promising = {str(page.relative_to(ROOT)) for page in pages() if promises(page)}
    assert promising - set(PAGES) == set(), "pages that promise log lines: add them to PAGES, and the lines to them"
    assert set(PAGES) - promising == set(), "pages in PAGES that no longer promise a log line"


@pytest.mark.parametrize(("page", "framework"), [(p, f) for p, fs in sorted(PAGES.items()) for f in sorted(fs)])
def test_the_page_shows_the_lines_that_make_them_visible(page: str, framework: str) -> None:
    blocks = [block.text for found in sections((ROOT / page).read_text(encoding="utf-8")).values() for block in found]
    assert SNIPPETS[framework] in blocks, f"{page} promises log lines without the {framework} lines that show them"


# -- The lines do what the pages say ------------------------------------------------------------------------------

SECRET = "logging-snippet-secret-0123456789abcdef"

STARLETTE_APP = """
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from blake2sign_web import URLSigner
from blake2sign_web.starlette import SessionMiddleware, signed_url_required


async def me(request):
    return PlainTextResponse(str(request.session.get("user")))


@signed_url_required(URLSigner(SECRET, purpose="logging-snippets"))
async def report(request):
    return PlainTextResponse("report")


app = Starlette(
    routes=[Route("/me", me), Route("/report", report)],
    middleware=[Middleware(SessionMiddleware, secret_key=SECRET)],
)
"""

STARLETTE_LINES = [
    "WARNING:blake2sign_web.starlette:Rejected session cookie 'session': ",
    "INFO:blake2sign_web.signed_urls:expired signed URL for '/report'",
]


def starlette_output(tmp_path: Path, snippet: str) -> str:
    """uvicorn's output after a forged cookie and an expired link, the app's module opening with ``snippet``."""
    (tmp_path / "logged_app.py").write_text(f"{snippet}\nSECRET = {SECRET!r}\n{STARLETTE_APP}", encoding="utf-8")
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "logged_app:app", "--app-dir", str(tmp_path)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--lifespan", "on"]
    expired = URLSigner(SECRET, purpose="logging-snippets", clock=lambda: time.time() - 3600).sign(
        "/report", expires_in=60
    )
    log = tmp_path / "uvicorn.log"
    with logged_server(command, port, log) as (url, _process):
        assert httpx.get(f"{url}/me", headers={"cookie": "session=forged-session-cookie"}, timeout=10).text == "None"
        assert httpx.get(f"{url}{expired}", timeout=10).status_code == 410
    return log.read_text(encoding="utf-8")


@pytest.mark.server
def test_the_starlette_lines_print_the_warning_and_info_lines_under_uvicorn(tmp_path: Path) -> None:
    output = starlette_output(tmp_path, STARLETTE)
    assert [output.count(line) for line in STARLETTE_LINES] == [1, 1], output


@pytest.mark.server
def test_without_the_starlette_lines_uvicorn_prints_neither(tmp_path: Path) -> None:
    output = starlette_output(tmp_path, "")
    assert [output.count(line) for line in STARLETTE_LINES] == [0, 0], output
    assert '"GET /me HTTP/1.1" 200' in output  # the requests were made, and uvicorn's own log is there


DJANGO_SCRIPT = textwrap.dedent(
    """
    import sys
    import time
    import types

    import django
    from django.conf import settings
    from django.http import HttpResponse
    from django.urls import path

    namespace = {}
    exec(sys.argv[2], namespace)
    urls = types.ModuleType("logging_snippet_urls")
    sys.modules[urls.__name__] = urls
    settings.configure(
        DEBUG=sys.argv[1] == "debug",
        SECRET_KEY="SECRET",
        ROOT_URLCONF=urls.__name__,
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=["blake2sign_web.django"],
        MIDDLEWARE=["blake2sign_web.django.middleware.SessionMiddleware"],
        SESSION_ENGINE="blake2sign_web.django.sessions",
        **{key: value for key, value in namespace.items() if key == "LOGGING"},
    )
    django.setup()
    from django.test import Client

    from blake2sign_web import URLSigner
    from blake2sign_web.django import signed_url_required

    def me(request):
        return HttpResponse(str(request.session.get("user")))

    @signed_url_required
    def report(request):
        return HttpResponse("report")

    urls.urlpatterns = [path("me/", me), path("report/", report)]
    client = Client()
    assert client.get("/me/", HTTP_COOKIE="sessionid=forged-session-cookie").content == b"None"
    signer = URLSigner(settings.SECRET_KEY, purpose="blake2sign_web.signed_urls")
    assert client.get(signer.sign("/report/", expires_in=60)).status_code == 200  # the view's own signer
    past = URLSigner(settings.SECRET_KEY, purpose="blake2sign_web.signed_urls", clock=lambda: time.time() - 3600)
    assert client.get(past.sign("/report/", expires_in=60)).status_code == 410
    """
).replace('"SECRET"', repr(SECRET))

DJANGO_LINES = ["Session cookie rejected: ", "expired signed URL for '/report/'"]


def django_output(debug: bool, snippet: str) -> str:
    """stderr of a Django process serving a forged cookie and an expired link, ``snippet`` run in its settings."""
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-c", DJANGO_SCRIPT, "debug" if debug else "production", snippet],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


@pytest.mark.parametrize("debug", [False, True], ids=["DEBUG off", "DEBUG on"])
def test_the_django_lines_print_each_line_once(debug: bool) -> None:
    output = django_output(debug, DJANGO)
    assert [output.count(line) for line in DJANGO_LINES] == [1, 1], output


def test_without_the_django_lines_nothing_is_printed_with_debug_off() -> None:
    output = django_output(False, "")
    assert [output.count(line) for line in DJANGO_LINES] == [0, 0], output


FLASK_SCRIPT = textwrap.dedent(
    """
    import flask
    from flask.sessions import SecureCookieSessionInterface

    {lines}
    from blake2sign_web.flask import FlaskSessions

    SECRET = "logging-snippet-secret-0123456789abcdef"
    old = flask.Flask("old")
    old.config["SECRET_KEY"] = SECRET
    theirs = SecureCookieSessionInterface().get_signing_serializer(old).dumps({{"user_id": 42}})
    app = flask.Flask("shop")
    app.config["SECRET_KEY"] = SECRET
    FlaskSessions(app)


    @app.get("/me")
    def me():
        return str(flask.session.get("user_id"))


    client = app.test_client()
    for cookie in ("forged", theirs, theirs):
        client.set_cookie("session", cookie)
        assert client.get("/me").text == "None"
    """
)
#: The library's line for a forged cookie, and app.logger's for a cookie of Flask's own (said once).
FLASK_LINES = (
    "WARNING:blake2sign_web.flask:Rejected session cookie 'session': malformed token",
    "set BLAKE2SIGN_WEB['ACCEPT_FLASK_COOKIES'] = True. Everyone who holds such a cookie is logged out.",
)


def flask_output(lines: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", FLASK_SCRIPT.format(lines=lines.strip())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stderr


def test_the_flask_lines_print_the_librarys_warnings_and_app_loggers_once() -> None:
    output = flask_output(FLASK)
    assert [output.count(line) for line in FLASK_LINES] == [1, 1], output


def test_without_the_flask_lines_only_app_loggers_line_is_printed() -> None:
    output = flask_output("")
    assert [output.count(line) for line in FLASK_LINES] == [0, 1], output
