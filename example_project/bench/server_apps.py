"""The applications the HTTP benchmark serves: one engine per server process, chosen by environment.

``BENCH_ENGINE`` names a row of ``request_cost.DJANGO_ENGINES`` or ``starlette_middlewares()``;
``BENCH_DB`` is the SQLite file the benchmark migrated; ``BENCH_SERVICES`` lists the optional
servers that answered ("redis,postgres").

    gunicorn example_project.bench.server_apps:django_app     (Django, WSGI)
    uvicorn example_project.bench.server_apps:starlette_app   (Starlette, ASGI)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..benchmarks import request_cost


def _services() -> set[str]:
    return {name for name in os.environ.get("BENCH_SERVICES", "").split(",") if name}


def _django() -> Any:
    request_cost.configure_django(Path(os.environ["BENCH_DB"]), _services(), migrate=False)
    spec = request_cost.DJANGO_ENGINES[os.environ["BENCH_ENGINE"]]
    handler = request_cost.django_handler(spec)
    request_cost.use_stores(spec)
    return handler


def _starlette() -> Any:
    middleware = request_cost.starlette_middlewares(_services())[os.environ["BENCH_ENGINE"]]
    return request_cost.starlette_app(middleware)


def __getattr__(name: str) -> Any:
    """Build only the application asked for: a Starlette server never configures Django."""
    if name == "django_app":
        return _django()
    if name == "starlette_app":
        return _starlette()
    raise AttributeError(name)
