"""A Flask app behind Flask-WTF's ``CSRFProtect`` whose single-use links are signed with ``consume_on="post"``: a
sign-in view and ``SignedFiles``. The tests' (``build_flask_csrf``) and a real server's (``app_from_env``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import flask
from flask_wtf.csrf import CSRFProtect

from blake2sign_web.flask import SignedFiles, signed_url_required
from blake2sign_web.flask.revocation import RedisStore

from .flask_app import make_signer


def build_flask_csrf(root: str | os.PathLike[str], store: Any) -> flask.Flask:
    signer = make_signer()
    app = flask.Flask(__name__)
    app.config["SECRET_KEY"] = "flask-csrf-tests-secret-0123456789"
    CSRFProtect(app)

    @app.route("/sign-in", methods=["GET", "HEAD", "POST"])
    @signed_url_required(signer, single_use=store)
    def sign_in() -> str:
        flask.session["user"] = "ann"
        return "signed in"

    app.add_url_rule("/files/<path:name>", view_func=SignedFiles(signer, root, single_use=store))
    return app


def app_from_env() -> flask.Flask:
    """For gunicorn: the files under ``BLAKE2SIGN_SERVED_ROOT``, single-use links in ``BLAKE2SIGN_REDIS_URL``."""
    store = RedisStore(os.environ["BLAKE2SIGN_REDIS_URL"], key_prefix="tests")
    return build_flask_csrf(Path(os.environ["BLAKE2SIGN_SERVED_ROOT"]), store)
