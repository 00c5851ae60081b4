"""Hostile requests, byte for byte, to the shop under real gunicorn (Django) and uvicorn (FastAPI).

Garbage and oversized cookies, attacker bytes in signed links, huge and many Range headers, and every
spelling of path traversal on the download route. Never a 5xx; never a Set-Cookie, Location or log line
built from attacker bytes; no traceback in the server's log; the worker's memory bounded; and a valid
session and link still work afterwards.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from tests.longrun import examples
from tests.soak import servers
from tests.soak.report import Record
from tests.soak.servers import MIB, Shop
from tests.soak.shop import REPORT, SECRET_FILE_CONTENT

from .cases import FORGED, MARKER, Case, cookie_cases, link_cases, traversal_cases
from .raw_http import RawResponse, exchange

pytestmark = pytest.mark.server

#: Rounds of the whole barrage after the first.
ROUNDS = examples(3)
#: How much the worker's resident memory may grow from before the barrage to after it (the first round,
#: which fills caches and allocator pools, is reported apart).
RSS_BOUND = 8 * MIB
#: Characters no log line may hold: they would end, forge or recolour a line (C0 but tab and LF, DEL, C1, U+2028/9).
FORBIDDEN_IN_LOG = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
#: Django logs these handled 4xx exceptions with their traceback (django.request at WARNING for PermissionDenied,
#: django.security.* at ERROR for SuspiciousOperation): a refused link or file name, not a failure.
HANDLED_BY_DJANGO = ("django.core.exceptions.PermissionDenied: ", "django.core.exceptions.SuspiciousFileOperation: ")
#: A Set-Cookie this project writes: our cookie name, a token (or Django's deletion), our attributes.
OUR_SET_COOKIE = re.compile(rb'^(sessionid|session)=(""|null|[A-Za-z0-9_\-]+)(; [A-Za-z-]+(=[A-Za-z0-9 ,:/=-]+)?)*$')

STARTERS: dict[str, Callable[[Path], AbstractContextManager[Shop]]] = {
    "gunicorn": servers.gunicorn,
    "uvicorn": servers.uvicorn,  # h11
    "uvicorn-httptools": lambda tmp_path: servers.uvicorn(tmp_path, http="httptools"),  # uvicorn[standard]
}
#: Requests h11 refuses that httptools hands to the application, which must refuse them itself: by case label,
#: the application's answers allowed besides the case's own (httptools has no bound on a request head, and
#: takes a bare LF inside the request target).
PASSED_TO_THE_APPLICATION: dict[str, dict[str, frozenset[int]]] = {
    "uvicorn-httptools": {
        "1 MB Cookie header": frozenset({403}),  # no session: "Not logged in"
        "raw LF in the target": frozenset({403}),  # no valid signed link
    },
}


@pytest.fixture(params=sorted(STARTERS))
def shop(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shop]:
    with STARTERS[request.param](tmp_path) as running:
        yield running


def barrage(shop: Shop, session: str) -> list[Case]:
    return [
        *cookie_cases(shop.cookie_name, session),
        *link_cases(shop.signer),
        *traversal_cases(lambda target: shop.signer.sign(target, expires_in=3600)),
    ]


def problems_with(case: Case, response: RawResponse, also: frozenset[int] = frozenset()) -> list[str]:
    """What is wrong with the server's answer to one hostile request (an empty list: nothing).

    ``also``: statuses allowed besides the case's own (PASSED_TO_THE_APPLICATION)."""
    found = []
    if response.status is None:
        if not (case.oversized and response.reset):
            found.append(f"no answer (reset={response.reset}): {response.body[:200]!r}")
        return found
    if response.status >= 500:
        found.append(f"status {response.status}: {response.body[:500]!r}")
    elif response.status not in case.statuses | also:
        found.append(f"status {response.status}, expected one of {sorted(case.statuses)}: {response.body[:200]!r}")
    for name, value in response.headers:
        if MARKER in name or MARKER in value or FORGED in name:
            found.append(f"attacker bytes in a response header: {name!r}: {value[:200]!r}")
        if name.lower() == b"location":
            found.append(f"a Location header: {value[:200]!r}")
        if name.lower() == b"set-cookie" and not OUR_SET_COOKIE.match(value):
            found.append(f"a Set-Cookie this project does not write: {value[:200]!r}")
    if SECRET_FILE_CONTENT in response.body:
        found.append("the secret outside the served folder was sent")
    if case.download and response.status == 200 and not response.body.endswith(REPORT):
        found.append(f"200 without the whole file ({len(response.body)} bytes)")
    if case.download and response.status == 206 and (not response.body or response.body not in REPORT):
        found.append(f"206 with a body that is no slice of the file: {response.body[:100]!r}")
    return found


def problems_in_log(log: bytes) -> list[str]:
    """Attacker bytes the server wrote to its log unescaped, and tracebacks of anything but a handled 4xx."""
    found = []
    try:
        text = log.decode("utf-8")
    except UnicodeDecodeError as error:
        found.append(f"bytes that are not UTF-8 in the log: {log[max(error.start - 80, 0) : error.end + 80]!r}")
        text = log.decode("utf-8", errors="replace")
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if FORBIDDEN_IN_LOG.search(line):
            found.append(f"log line {number} holds a control or line-separator character: {line[:300]!r}")
        if line.startswith(FORGED.decode()):
            found.append(f"log line {number} was forged: {line[:300]!r}")
        if "Internal Server Error" in line or " 500 " in line:
            found.append(f"log line {number}: {line[:300]!r}")
        if line.startswith("Traceback "):
            raised = next((later for later in lines[number:] if not later.startswith(" ")), "")
            if not raised.startswith(HANDLED_BY_DJANGO):
                found.append(f"log line {number}: a traceback of {raised[:300]!r}")
    return found


def still_works(shop: Shop, session: str) -> None:
    with httpx.Client(base_url=shop.url, cookies={shop.cookie_name: session}, timeout=10) as client:
        assert client.post("/cart/add", params={"item": "tea"}).json() == {"tea": 1}
        assert client.get("/cart").json() == {"tea": 1}
        link = shop.signer.sign("/files/report.bin", expires_in=60)
        assert client.get(link).content == REPORT
        ranged = client.get(link, headers={"Range": "bytes=-100"})
        assert (ranged.status_code, ranged.content) == (206, REPORT[-100:])


def test_hostile_requests_get_no_5xx_no_reflected_bytes_and_bounded_memory(shop: Shop, figures: Record) -> None:
    session = shop.login()
    cases = barrage(shop, session)
    lenient = PASSED_TO_THE_APPLICATION.get(shop.name, {})
    assert set(lenient) <= {case.label for case in cases}, "a case named in PASSED_TO_THE_APPLICATION is gone"
    problems: dict[str, list[str]] = {}
    statuses: dict[int | None, int] = {}

    def run_once() -> None:
        for case in cases:
            response = exchange(shop.port, case.request)
            statuses[response.status] = statuses.get(response.status, 0) + 1
            found = problems_with(case, response, lenient.get(case.label, frozenset()))
            if found:
                problems.setdefault(case.label, found)

    started = time.perf_counter()
    rss_start = shop.rss()
    run_once()
    rss_warm = shop.rss()
    for _ in range(ROUNDS):
        run_once()
    rss_end = shop.rss()
    elapsed = time.perf_counter() - started
    figures(
        f"hostile {shop.name}",
        {
            "requests": len(cases) * (ROUNDS + 1),
            "cases": len(cases),
            "seconds": round(elapsed, 2),
            "statuses": {str(status): count for status, count in sorted(statuses.items(), key=str)},
            "rss_start_mib": round(rss_start / MIB, 1),
            "rss_after_first_round_mib": round(rss_warm / MIB, 1),
            "rss_end_mib": round(rss_end / MIB, 1),
            "rss_bound_mib": RSS_BOUND // MIB,
        },
    )
    assert problems == {}, "\n".join(f"{label}: {found}" for label, found in problems.items())
    still_works(shop, session)
    assert rss_end <= rss_start + RSS_BOUND, f"RSS grew from {rss_start / MIB:.1f} to {rss_end / MIB:.1f} MiB"
    assert problems_in_log(shop.log_text()) == []


def test_the_checks_catch_what_they_look_for() -> None:
    """The barrage's checks, on made-up answers and logs: each would fail the test above."""
    headers = [(b"Set-Cookie", b"sessionid=x; Path=/" + MARKER), (b"Location", b"/next"), (b"set-cookie", b"evil=1")]
    echoed = RawResponse(200, headers, REPORT)
    found = problems_with(Case("made up", b"", frozenset({200}), download=True), echoed)
    assert len(found) == 3  # the marker, a Location, a Set-Cookie of another shape
    assert problems_with(Case("made up", b"", frozenset({403})), RawResponse(None)) != []
    assert problems_with(Case("made up", b"", frozenset({403})), RawResponse(502)) != []
    log = b"\n".join(
        [
            b"WARNING rejected " + FORGED,  # fine: not at the start of a line
            FORGED + b": forged",
            b"caf\xe9",
            b"a\x1b[31m",
            "a\u2028b".encode(),
            b"Traceback (most recent call last):",
            b'  File "x.py", line 1',
            b"ValueError: boom",
            b"Traceback (most recent call last):",
            b"django.core.exceptions.PermissionDenied: This link is not valid.",
        ]
    )
    assert len(problems_in_log(log)) == 5
