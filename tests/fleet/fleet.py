"""A fleet of real server processes that share nothing but secrets, and the clients that live through its restarts.

A ``Unit`` is one server command (a gunicorn with its workers, or one uvicorn) that can be restarted with another
key set: the new process starts on a new port, then the old one stops, as a rolling deploy behind a load balancer
does. A ``Visitor`` is one browser: its own cookie jar (cookies on 127.0.0.1 go to every port, as to every server
behind one host name), the cart it expects, the links it was given. Every response names its process in
``X-Served-By``, so each check knows which process issued a cookie or link and which one accepted it.
"""

from __future__ import annotations

import http.cookiejar
import json
import random
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.servers import free_port, running_server

BIN = Path(sys.executable).parent
ONE_CONNECTION_PER_REQUEST = httpx.Limits(max_keepalive_connections=0)


@dataclass(frozen=True)
class Keys:
    """What one process is started with: the secret that signs and those that only verify."""

    current: str
    fallbacks: tuple[str, ...] = ()

    def env(self) -> dict[str, str]:
        return {"FLEET_SECRET_KEY": self.current, "FLEET_SECRET_KEY_FALLBACKS": json.dumps(list(self.fallbacks))}

    def accepts(self, secret: str) -> bool:
        return secret == self.current or secret in self.fallbacks


@dataclass
class Unit:
    """One restartable server: ``command(port)`` is its argv; ``workers`` processes answer on its port."""

    name: str
    command: Callable[[int], list[str]]
    workers: int
    env: dict[str, str]
    keys: Keys = Keys("unset-unset-unset-unset")
    base: str = ""
    _server: AbstractContextManager[str] | None = None

    def start(self, keys: Keys) -> None:
        """Start the process with ``keys`` on a fresh port; only then stop the one it replaces."""
        port = free_port()
        server = running_server(self.command(port), port, **self.env, **keys.env())
        base = server.__enter__()
        previous, self._server, self.base, self.keys = self._server, server, base, keys
        if previous is not None:
            previous.__exit__(None, None, None)

    def stop(self) -> None:
        if self._server is not None:
            self._server.__exit__(None, None, None)
            self._server = None


@dataclass
class Fleet:
    units: list[Unit]

    def start(self, keys: Keys) -> None:
        with ThreadPoolExecutor(len(self.units)) as pool:
            list(pool.map(lambda unit: unit.start(keys), self.units))

    def stop(self) -> None:
        for unit in self.units:
            unit.stop()


def gunicorn(app: str, port: int, workers: int, *options: str) -> list[str]:
    return [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", str(workers), *options, app]


def uvicorn(factory: str, port: int) -> list[str]:
    return [
        str(BIN / "uvicorn"), "--factory", factory, "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning", "--lifespan", "off",
    ]  # fmt: skip


@contextmanager
def running_fleet(units: list[Unit], keys: Keys) -> Iterator[Fleet]:
    fleet = Fleet(units)
    try:
        fleet.start(keys)
        yield fleet
    finally:
        fleet.stop()


class Served:
    """Which process answered what: pids per unit, and (issuer, acceptor) pairs of cookies and links."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pids: dict[str, set[int]] = {}
        self.session_pairs: set[tuple[int, int]] = set()
        self.link_pairs: set[tuple[int, int]] = set()
        self.requests = 0
        self._local = threading.local()
        self._clients: list[httpx.Client] = []

    def get(self, url: str, **kwargs: object) -> httpx.Response:
        """GET without cookies, for links and probes. One client per thread: building one costs more than a
        request, and httpx's connection pool is not safe to share between threads that open and close a
        connection per request (a thread's socket can be closed under it: ``[Errno 9] Bad file descriptor``)."""
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(timeout=30, limits=ONE_CONNECTION_PER_REQUEST)
            client.cookies.jar.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            self._local.client = client
            with self.lock:
                self._clients.append(client)
        return client.get(url, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        for client in self._clients:
            client.close()

    def note(self, unit: Unit, response: httpx.Response) -> int:
        pid = int(response.headers["x-served-by"])
        with self.lock:
            self.pids.setdefault(unit.name, set()).add(pid)
            self.requests += 1
        return pid

    def all_pids(self) -> set[int]:
        return set().union(*self.pids.values())


@dataclass
class Visitor:
    """One browser with its own cookie jar, logged in as ``username``."""

    username: str
    cookie_name: str
    served: Served
    #: "shopper" (adds to its cart at every check), "reader" (only reads ``/me/``, never changes its session) or
    #: "cart reader" (only reads ``/cart/``: its session, never ``request.user``).
    role: str = "shopper"
    #: A new connection per request, so that the kernel picks a worker of a multi-worker unit for each one.
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30, limits=ONE_CONNECTION_PER_REQUEST))
    user: int | None = None
    cart: list[str] = field(default_factory=list)
    #: The links this visitor holds, as (link, the number its page answers).
    links: list[tuple[str, int]] = field(default_factory=list)
    #: pid of the process that last set the session cookie.
    cookie_from: int = 0

    @property
    def cookie(self) -> str:
        return self.http.cookies[self.cookie_name]

    def _call(self, unit: Unit, method: str, path: str, **kwargs: object) -> tuple[httpx.Response, int]:
        response = self.http.request(method, unit.base + path, **kwargs)  # type: ignore[arg-type]
        pid = self.served.note(unit, response)
        assert response.status_code == 200, (unit.name, path, response.status_code)
        if self.cookie_name in response.cookies:
            self.cookie_from = pid
        return response, pid

    def log_in(self, unit: Unit, password: str) -> None:
        response, _ = self._call(unit, "POST", "/login/", data={"username": self.username, "password": password})
        self.user = response.json()["user"]
        self.cart = response.json()["cart"]
        assert self.user is not None

    def add(self, unit: Unit, sku: str) -> None:
        issuer = self.cookie_from
        response, pid = self._call(unit, "GET", "/me/", params={"add": sku})
        self.cart.append(sku)
        assert response.json() == {"user": self.user, "cart": self.cart}, (unit.name, self.username)
        self._accepted(issuer, pid)

    def read(self, unit: Unit) -> None:
        """The session this visitor holds is read back whole by ``unit`` (the cart alone for a cart reader)."""
        issuer = self.cookie_from
        if self.role == "cart reader":
            response, pid = self._call(unit, "GET", "/cart/")
            assert response.json() == {"cart": self.cart}, (unit.name, self.username)
        else:
            response, pid = self._call(unit, "GET", "/me/")
            assert response.json() == {"user": self.user, "cart": self.cart}, (unit.name, self.username)
        self._accepted(issuer, pid)

    def me(self, unit: Unit) -> dict[str, object]:
        response, _ = self._call(unit, "GET", "/me/")
        answer: dict[str, object] = response.json()
        return answer

    def _accepted(self, issuer: int, pid: int) -> None:
        if issuer != pid:
            with self.served.lock:
                self.served.session_pairs.add((issuer, pid))

    def new_link(self, unit: Unit, n: int) -> tuple[str, int]:
        """A link to ``/signed/<n>/`` signed by ``unit``, and the pid that signed it."""
        response, pid = self._call(unit, "GET", f"/link/{n}/")
        return response.text, pid


def follow(served: Served, unit: Unit, link: str, n: int, issuer: int | None = None) -> None:
    """``unit`` serves the signed link (a fresh client: links are not tied to a cookie jar)."""
    response = served.get(unit.base + link)
    pid = served.note(unit, response)
    assert (response.status_code, response.text) == (200, str(n)), (unit.name, link)
    if issuer is not None and issuer != pid:
        with served.lock:
            served.link_pairs.add((issuer, pid))


def cross_check(fleet: Fleet, visitors: list[Visitor], served: Served, max_rounds: int, seed: int = 0) -> int:
    """Rounds of trips until every process has accepted cookies and links issued by every other (kernel-picked
    gunicorn workers included), or ``max_rounds``; returns the rounds it took. In a trip a visitor changes its
    session and takes a link at a random unit (chosen in proportion to its workers), then each unit reads that
    session and serves that link once per worker."""
    rng = random.Random(seed)
    workers = sum(unit.workers for unit in fleet.units)
    wanted = workers * (workers - 1)

    def round_trip(visitor: Visitor, issuing: Unit, n: int) -> None:
        visitor.add(issuing, f"sku-{n}")
        link, issuer = visitor.new_link(issuing, n)
        for reading in fleet.units:
            for _ in range(reading.workers):
                visitor.read(reading)
                follow(served, reading, link, n, issuer)

    with ThreadPoolExecutor(len(visitors)) as pool:
        for rounds in range(1, max_rounds + 1):
            issuing = rng.choices(fleet.units, [unit.workers for unit in fleet.units], k=len(visitors))
            trips = [(visitor, issuing[i], 1000 * rounds + i) for i, visitor in enumerate(visitors)]
            list(pool.map(lambda trip: round_trip(*trip), trips))
            if len(served.all_pids()) == workers and min(len(served.session_pairs), len(served.link_pairs)) == wanted:
                return rounds
    return max_rounds
