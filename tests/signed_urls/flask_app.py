"""The Flask app the Flask link tests (and the real-server test on gunicorn) serve."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import flask

from blake2sign_web import URLSigner
from blake2sign_web.flask.links import SignedFiles, grant_cookie, send_signed_file, sign_url, signed_url_required

SECRET = "flask-links-tests-secret-0123456789"
PUBLIC_URL = "https://files.example.com"


def make_signer(**options: Any) -> URLSigner:
    return URLSigner(SECRET, purpose="downloads", **options)


def build_flask(root: str | os.PathLike[str], signer: URLSigner | None = None, **files: Any) -> flask.Flask:
    """Signed views and ``SignedFiles`` on ``root`` (``files``: more options of the latter)."""
    signer = signer or make_signer()
    app = flask.Flask(__name__)

    @app.get("/hello/<who>")
    @signed_url_required(signer)
    def hello(who: str) -> str:
        return f"hello {who} ({flask.g.signed_link.expires_at is not None})"

    @app.get("/echo")
    @signed_url_required(signer)
    def echo() -> str:
        return flask.request.args["q"]

    @app.get("/bound")
    @signed_url_required(signer, bind=lambda request: request.headers.get("X-User"))
    def bound() -> str:
        return "bound"

    @app.get("/report/<path:name>")
    @signed_url_required(signer)
    def report(name: str) -> Any:
        return send_signed_file(root, name, as_attachment=False)

    @app.get("/link")
    def link() -> str:
        return sign_url(signer, "signed_files", expires_in=60, name=flask.request.args["n"])

    @app.get("/mail-link")
    def mail_link() -> str:
        return sign_url(signer, "signed_files", base_url=PUBLIC_URL, expires_in=60, name=flask.request.args["n"])

    @app.get("/grant/<path:folder>")
    def grant(folder: str) -> flask.Response:
        response = flask.make_response("granted")
        grant_cookie(response, signer, flask.url_for("signed_files", name=folder), expires_in=60)
        return response

    app.add_url_rule("/files/<path:name>", view_func=SignedFiles(signer, root, **files))
    inline = SignedFiles(signer, root, as_attachment=False, path_param="file", endpoint="inline")
    app.add_url_rule("/inline/<path:file>", view_func=inline)
    return app


def app_from_env() -> flask.Flask:
    """For gunicorn in the real-server tests: ``BLAKE2SIGN_ACCEL`` hands files to nginx."""
    accel = os.environ.get("BLAKE2SIGN_ACCEL")
    return build_flask(Path(os.environ["BLAKE2SIGN_SERVED_ROOT"]), accel_redirect=accel)
