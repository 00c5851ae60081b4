"""A rolling key rotation across a fleet of real processes that share nothing but their secrets.

Django: one gunicorn (3 sync workers, WSGI) and two uvicorn processes (Django's ASGI application), one site, one
SQLite file of users. Starlette: one gunicorn with 2 uvicorn workers and one plain uvicorn. First, round trips
between random processes until every worker has accepted cookies and links issued by every other worker. Then
live visitors hold login-sized sessions and signed links through the rotation; after every single restart each
one gets a new link, shoppers change their carts, every session is read back whole by every process and every
link held is served by every process.

The procedure, for the secrets that sign sessions and links (Django: ``SECRET_KEY`` and
``SECRET_KEY_FALLBACKS``; Starlette: ``SessionMiddleware(secret_key=..., fallback_secrets=[...])`` and
``URLSigner(secret, fallbacks=[...])``), rotating from OLD to NEW:

1. **Deploy NEW as a fallback**, one process at a time: current OLD, fallbacks [NEW]. Nothing signs with NEW
   yet. Finish this step on every process before the next: a process that does not know NEW would refuse
   what step 2 signs with it.
2. **Make NEW current**, one process at a time: current NEW, fallbacks [OLD]. While this step runs, processes
   sign with either key and every process accepts both; a session moving between processes is re-signed with
   the key of each process that reads it, which is harmless.
3. **Wait**, once every process signs with NEW, until nothing signed with OLD is still needed:

   - a session is re-signed with NEW by the next request that loads it. Starlette: every request that carries
     the cookie; the new cookie goes out on that same response. Django: any request that reads
     ``request.session`` or ``request.user`` (the engine sees the fallback and saves the session again);
   - Django's auth also keeps a hash made with the secret in the session, and replaces OLD's hash with NEW's
     only in a request that resolves ``request.user``. A session that only session-reading pages saw keeps
     OLD's hash under a NEW signature, and retiring OLD logs its user out (the cart reader below). Pages that
     show the user resolve it; so does any ``login_required`` view;
   - a session nobody uses is not re-signed: wait until it has expired, which is ``SESSION_COOKIE_AGE``
     (Starlette: ``max_age``) after its last save, or the longest ``set_expiry()`` your site gives
     ("remember me");
   - a link is never re-signed: wait for the longest ``expires_in`` of the links signed before step 2 ended.
     Pages re-sign their links on every view, so a visitor who reloads holds NEW's links.

   Cutting the wait short logs out the sessions and breaks the links that only OLD signed.
4. **Retire OLD**, one process at a time: current NEW, no fallbacks. A session or link that only OLD signed is
   then refused by every process: an empty session (logged out) and a 403 for a link.

The test cannot wait two weeks. Its readers never change their sessions, so only the re-signing of a session a
fallback verified moves them to NEW; after step 2 it checks that every visitor's cookie verifies with NEW alone,
replaces each OLD-signed link a visitor holds by a fresh one (the reload), and keeps OLD-signed copies of every
session and link as probes: each process accepts them until it retires OLD and refuses them from then on.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import cycle
from pathlib import Path

import pytest

from blake2sign_web import BadSignature, URLSigner
from tests.servers import ROOT

from .django_site import PASSWORD
from .fleet import Fleet, Keys, Served, Unit, Visitor, cross_check, follow, gunicorn, running_fleet, uvicorn

pytestmark = pytest.mark.server

#: Who visits: shoppers change their session at every check, readers only read it (so only a fallback's
#: re-signing moves them to NEW), the cart reader reads the session but never ``request.user``.
ROLES = ("shopper", "shopper", "shopper", "reader", "reader", "cart reader")
VISITORS = len(ROLES)
#: Round trips (per visitor) allowed to see every process accept every other's cookies and links.
CROSS_CHECK_ROUNDS = 60
OLD = "fleet-old-" + secrets.token_urlsafe(32)
NEW = "fleet-new-" + secrets.token_urlsafe(32)


@dataclass
class Site:
    """One framework's fleet and how the test, holding the secrets, tells which one signed a token."""

    name: str
    cookie_name: str
    units: Callable[[], list[Unit]]
    session_signed_by: Callable[[str, str], bool]
    link_signed_by: Callable[[str, str], bool]
    #: The session also holds a hash made with the secret (Django's auth hash), which only a request that
    #: resolves ``request.user`` replaces.
    secret_made_auth_hash: bool


WSGI_APP = "django.core.wsgi:get_wsgi_application()"


def django_units(database: Path) -> list[Unit]:
    env = {"DJANGO_SETTINGS_MODULE": "tests.fleet.django_settings", "FLEET_DATABASE": str(database)}
    return [
        Unit("gunicorn", lambda port: gunicorn(WSGI_APP, port, 3, "--preload"), 3, env),
        Unit("uvicorn-1", lambda port: uvicorn("django.core.asgi:get_asgi_application", port), 1, env),
        Unit("uvicorn-2", lambda port: uvicorn("django.core.asgi:get_asgi_application", port), 1, env),
    ]


def django_session_signed_by(secret: str, cookie: str) -> bool:
    from django.test import override_settings

    from blake2sign_web.django.sessions import SessionStore

    with override_settings(SECRET_KEY=secret, SECRET_KEY_FALLBACKS=[]):
        return bool(SessionStore(cookie).load())


def django_link_signed_by(secret: str, link: str) -> bool:
    return link_verifies(URLSigner(secret, purpose="blake2sign_web.signed_urls"), link)


def link_verifies(signer: URLSigner, link: str) -> bool:
    try:
        signer.verify(link)
    except BadSignature:
        return False
    return True


def starlette_units() -> list[Unit]:
    worker = ("--worker-class", "uvicorn_worker.UvicornWorker")
    return [
        Unit("gunicorn-uvicorn", lambda port: gunicorn("tests.fleet.starlette_site:app()", port, 2, *worker), 2, {}),
        Unit("uvicorn", lambda port: uvicorn("tests.fleet.starlette_site:app", port), 1, {}),
    ]


def starlette_session_signed_by(secret: str, cookie: str) -> bool:
    from blake2sign_web.starlette import SessionMiddleware

    try:
        SessionMiddleware(lambda *_: None, secret_key=secret).signer.loads(cookie)
    except BadSignature:
        return False
    return True


def starlette_link_signed_by(secret: str, link: str) -> bool:
    from .starlette_site import link_signer

    return link_verifies(link_signer(secret, []), link)


@pytest.fixture(scope="module")
def user_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The users of the Django site, in a SQLite file every process opens."""
    database = tmp_path_factory.mktemp("fleet") / "users.sqlite3"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "tests.fleet.django_settings",
        "FLEET_DATABASE": str(database),
    }
    command = f"from tests.fleet.django_site import create_users; create_users({VISITORS})"
    subprocess.run([sys.executable, "-c", command], cwd=ROOT, env=env, check=True)
    return database


@dataclass
class Row:
    """What one check found: after which restart, each process's keys, and the counts checked."""

    moment: str
    keys: str
    session_reads: int = 0
    links: int = 0
    link_requests: int = 0
    probe_requests: int = 0
    cookies_by_new: int = 0


@dataclass
class Drill:
    site: Site
    fleet: Fleet
    visitors: list[Visitor]
    served: Served
    #: OLD-signed copies kept to prove retirement: (cookie, user id) and (link, n).
    session_probes: list[tuple[str, int | None]] = field(default_factory=list)
    link_probes: list[tuple[str, int]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    next_item: int = 0

    def check(self, moment: str) -> None:
        """Shoppers change their carts; every visitor gets a link and is read back whole by every process; every
        link held is served by every process; each probe is accepted exactly by the processes that accept OLD."""
        units = self.fleet.units
        row = Row(moment, " ".join(f"{unit.name}={label(unit.keys)}" for unit in units))
        start = self.next_item
        self.next_item += len(self.visitors)
        issuing = cycle(units)

        def visit(item: int, visitor: Visitor, unit: Unit) -> None:
            if visitor.role == "shopper":
                visitor.add(unit, f"sku-{item}")
            visitor.links.append((visitor.new_link(unit, item)[0], item))
            first = item % len(units)  # so that the last reader, which re-signs the cookie, differs by visitor
            for reading in units[first:] + units[:first]:
                visitor.read(reading)

        with ThreadPoolExecutor(len(self.visitors)) as pool:
            trips = [(start + i, visitor, next(issuing)) for i, visitor in enumerate(self.visitors)]
            list(pool.map(lambda trip: visit(*trip), trips))
            row.session_reads = len(self.visitors) * len(units)
            held = [link for visitor in self.visitors for link in visitor.links]
            list(pool.map(lambda job: follow(self.served, *job), [(u, *link) for link in held for u in units]))
            row.links, row.link_requests = len(held), len(held) * len(units)
            probes = [(u, *probe) for probe in self.session_probes for u in units]
            list(pool.map(lambda job: self.probe_session(*job), probes))
            link_probes = [(u, *probe) for probe in self.link_probes for u in units]
            list(pool.map(lambda job: self.probe_link(*job), link_probes))
            row.probe_requests = len(probes) + len(link_probes)
        row.cookies_by_new = sum(self.site.session_signed_by(NEW, visitor.cookie) for visitor in self.visitors)
        self.rows.append(row)

    def probe_session(self, unit: Unit, cookie: str, user: int | None) -> None:
        """An OLD-signed session, sent as it was kept: its user while the process accepts OLD, else nobody."""
        response = self.served.get(unit.base + "/me/", headers={"Cookie": f"{self.site.cookie_name}={cookie}"})
        self.served.note(unit, response)
        assert response.status_code == 200
        assert response.json()["user"] == (user if unit.keys.accepts(OLD) else None), unit.name

    def probe_link(self, unit: Unit, link: str, n: int) -> None:
        response = self.served.get(unit.base + link)
        self.served.note(unit, response)
        expected = (200, str(n)) if unit.keys.accepts(OLD) else (403, None)
        assert (response.status_code, response.text if response.status_code == 200 else None) == expected, unit.name

    def restart_each(self, keys: Keys, step: str) -> None:
        for unit in self.fleet.units:
            unit.start(keys)
            self.check(f"{step}: {unit.name} restarted")

    def refresh_before_retiring(self) -> None:
        """What waiting out step 3 achieves, for the live visitors: sessions and links that NEW alone verifies."""
        old_sessions = [v.username for v in self.visitors if not self.site.session_signed_by(NEW, v.cookie)]
        assert old_sessions == [], "sessions that reading them did not re-sign with NEW"
        assert not any(self.site.session_signed_by(OLD, visitor.cookie) for visitor in self.visitors)
        for visitor in self.visitors:
            kept = []
            for link, n in visitor.links:
                if self.site.link_signed_by(NEW, link):
                    kept.append((link, n))
                else:  # signed before step 2 ended: the visitor reloads the page that shows it
                    assert self.site.link_signed_by(OLD, link)
                    self.link_probes.append((link, n))
                    kept.append((visitor.new_link(self.fleet.units[n % len(self.fleet.units)], n)[0], n))
            visitor.links = kept

    def report(self) -> str:
        lines = [f"{self.site.name}: moment | keys per unit | session reads | links | link requests | probes | new"]
        lines += [
            f"  {r.moment} | {r.keys} | {r.session_reads} | {r.links} | {r.link_requests} | {r.probe_requests}"
            f" | {r.cookies_by_new}/{len(self.visitors)}"
            for r in self.rows
        ]
        lines.append(
            f"  {self.served.requests} requests, pids per unit: { {k: len(v) for k, v in self.served.pids.items()} }"
        )
        return "\n".join(lines)


def label(keys: Keys) -> str:
    names = {OLD: "old", NEW: "new"}
    return "+".join(names[secret] for secret in (keys.current, *keys.fallbacks))


SITES = {
    "django": lambda database: Site(
        "django", "sessionid", lambda: django_units(database), django_session_signed_by, django_link_signed_by, True
    ),
    "starlette": lambda database: Site(
        "starlette", "session", starlette_units, starlette_session_signed_by, starlette_link_signed_by, False
    ),
}


@pytest.fixture(params=list(SITES))
def drill(request: pytest.FixtureRequest, user_database: Path) -> Iterator[Drill]:
    site = SITES[request.param](user_database)
    served = Served()
    with running_fleet(site.units(), Keys(OLD)) as fleet:
        visitors = [Visitor(f"user{i}", site.cookie_name, served, role) for i, role in enumerate(ROLES)]
        try:
            yield Drill(site, fleet, visitors, served)
        finally:
            for visitor in visitors:
                visitor.http.close()
            served.close()


def test_rolling_key_rotation(drill: Drill) -> None:
    units, visitors, served = drill.fleet.units, drill.visitors, drill.served
    workers = sum(unit.workers for unit in units)

    # Any process's cookies and links are accepted by every other one, gunicorn's workers included.
    for i, visitor in enumerate(visitors):
        visitor.log_in(units[i % len(units)], PASSWORD)
    rounds = cross_check(drill.fleet, visitors, served, CROSS_CHECK_ROUNDS)
    print(
        f"{drill.site.name}: {rounds} cross-check rounds of {len(visitors)} visitors, {served.requests} requests: "
        f"{len(served.session_pairs)} (issuer, acceptor) pid pairs for sessions, {len(served.link_pairs)} for links"
    )
    assert {unit.name: len(served.pids[unit.name]) for unit in units} == {unit.name: unit.workers for unit in units}
    assert len(served.session_pairs) == len(served.link_pairs) == workers * (workers - 1), rounds
    drill.check("all on OLD")
    drill.session_probes = [(visitor.cookie, visitor.user) for visitor in visitors]
    drill.session_probes.append((drill.session_probes[0][0].swapcase(), None))  # a forgery: refused throughout
    assert all(drill.site.session_signed_by(OLD, cookie) for cookie, _ in drill.session_probes[:-1])

    drill.restart_each(Keys(OLD, (NEW,)), "step 1")
    assert all(row.cookies_by_new == 0 for row in drill.rows), "nothing signs with NEW before step 2"
    drill.restart_each(Keys(NEW, (OLD,)), "step 2")
    assert {row.cookies_by_new for row in drill.rows if row.moment.startswith("step 2")} - {0, len(visitors)}, (
        "while step 2 runs, some sessions should be signed by each key"
    )
    drill.refresh_before_retiring()
    drill.check("step 3 wait done")
    drill.restart_each(Keys(NEW), "step 3")

    # Retired: what only OLD signed is refused everywhere (the probes above were refused process by process).
    assert all(not unit.keys.accepts(OLD) for unit in units)
    assert drill.link_probes
    print(drill.report())

    # The cart reader's session was re-signed with NEW (it still reads back, above), but with Django the auth
    # hash in it is still OLD's: the first request that resolves request.user logs it out.
    cart_reader = next(visitor for visitor in visitors if visitor.role == "cart reader")
    after = cart_reader.me(units[0])
    if drill.site.secret_made_auth_hash:
        assert after == {"user": None, "cart": None}
    else:
        assert after == {"user": cart_reader.user, "cart": cart_reader.cart}
