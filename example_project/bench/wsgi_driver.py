"""Drive a Django WSGI handler as a WSGI server does, in process, without a socket.

What gunicorn's sync worker (``handle_request``) and wsgiref (``BaseHandler.run``) do with an application:
call it with a fresh environ and a ``start_response``, iterate the response, and ``close()`` it. Django sends
``request_finished`` from ``HttpResponse.close()``, so a driver that never closes its responses never counts
what that signal's receivers cost: every request on a real server pays for them.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from typing import Any

#: What gunicorn puts in every environ, beside the request's own keys (gunicorn/http/wsgi.py ``base_environ``).
_SERVER_ENVIRON = {
    "wsgi.version": (1, 0),
    "wsgi.url_scheme": "http",
    "wsgi.errors": sys.stderr,
    "wsgi.multithread": False,
    "wsgi.multiprocess": False,
    "wsgi.run_once": False,
    "SERVER_SOFTWARE": "gunicorn/bench",
    "SERVER_PROTOCOL": "HTTP/1.1",
    "SERVER_NAME": "testserver",
    "SERVER_PORT": "80",
    "REMOTE_ADDR": "127.0.0.1",
    "REMOTE_PORT": "50000",
    "SCRIPT_NAME": "",
}


class WSGIDriver:
    """One request through a WSGI application at a time: call it, iterate the response, close it."""

    def __init__(self, application: Callable[..., Iterable[bytes]]) -> None:
        self.application = application
        #: The last response's status line and headers, as ``start_response`` got them.
        self.status = ""
        self.headers: list[tuple[str, str]] = []

    def environ(self, path: str, query: str = "", headers: dict[str, str] | None = None) -> dict[str, Any]:
        """The environ a server builds for ``GET path?query`` with ``headers`` (``HTTP_*`` keys)."""
        return {
            **_SERVER_ENVIRON,
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "RAW_URI": f"{path}?{query}" if query else path,
            "HTTP_HOST": "testserver",
            "HTTP_USER_AGENT": "bench",
            **(headers or {}),
        }

    def _start_response(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        self.status = status
        self.headers = headers

    def request(self, environ: dict[str, Any]) -> None:
        """``environ`` copied (a server builds one per request), with an empty body to read."""
        environ = {**environ, "wsgi.input": io.BytesIO(b"")}
        result = self.application(environ, self._start_response)
        try:
            for _ in result:
                pass
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # Django's HttpResponse.close() sends request_finished

    def set_cookies(self) -> list[str]:
        """The last response's Set-Cookie values."""
        return [value for name, value in self.headers if name.lower() == "set-cookie"]
