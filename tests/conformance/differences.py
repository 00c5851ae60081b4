"""Where the frameworks differ, and why: every normalization the conformance suite makes, in one place.

A scenario's outcome must be equal across frameworks. The only differences allowed are those a framework's
own contract demands; each is listed here with its reason, and docs/conformance.md repeats the list for
users. ``agree`` compares outcomes, allowing a second or two where a clock is read at different moments.
"""

from __future__ import annotations

from typing import Any, Final

DIFFERENCES: Final[dict[str, str]] = {
    "cookie name": (
        "The default session cookie is called 'sessionid' in Django (SESSION_COOKIE_NAME) and 'session' in "
        "Starlette (session_cookie): the suite calls it 'session', and its chunks 'session.1', 'session.2'..."
    ),
    "expires": (
        "Django writes Expires beside Max-Age (HttpResponse.set_cookie does, for old browsers); Starlette writes "
        "Max-Age alone, as its own middleware does. The suite checks that Expires says what Max-Age says, then "
        "compares Max-Age."
    ),
    "deletion attributes": (
        "A deleted cookie: Django's delete_cookie() sends an empty value with Max-Age=0 and Expires in 1970, no "
        "HttpOnly, and Secure only for a __Secure-/__Host- name or SameSite=None; Starlette's middleware sends "
        "'null' with Expires in 1970 and the cookie's own attributes. Both delete it in every browser: the suite "
        "compares that it is deleted, and its Path and Domain."
    ),
    "bad cookie kept or deleted": (
        "One bad session cookie (garbage, a wrong signature, truncated, too long, expired): Django's "
        "SessionMiddleware deletes the cookie of any session that was read and is empty, so a bad one is deleted "
        "once the session is read; Starlette's own SessionMiddleware leaves a cookie it cannot read in place, and "
        "so does this drop-in. Both read an empty session and log a warning. A set of chunks is this project's "
        "own: a bad one is deleted in full by both."
    ),
    "_session_expiry": (
        "Django keeps set_expiry() in the session's data (SessionBase, key '_session_expiry'), where a view "
        "sees it; Starlette's session holds only the application's keys. The suite leaves that key out."
    ),
    "flush": "Starlette's session is a dict without flush(): clear() ends it as Django's flush() does.",
    "clear": (
        "A session emptied without flush() (clear(), or deleting its last key): Django keeps the session "
        "(SessionBase.clear() keeps its key, and the middleware deletes the cookie only of a session without "
        "one), so the response sends a cookie holding an empty session; Starlette's clear() is its flush, and "
        "an emptied session's cookie is deleted. Either way the next request reads an empty session."
    ),
    "max_age=None": (
        "Starlette's max_age=None gives a browser-session cookie and no server-side limit; Django has no "
        "unlimited session: SESSION_EXPIRE_AT_BROWSER_CLOSE = True gives the browser-session cookie and keeps "
        "SESSION_COOKIE_AGE as the server's limit. The suite uses max_age=None only with a timeout, which "
        "then bounds both."
    ),
    "partitioned": (
        "Django's set_cookie() cannot write the Partitioned (CHIPS) attribute yet (its own support is an open pull "
        "request): this project's Django middleware writes it with SESSION_COOKIE_PARTITIONED = True, Django's own "
        "middleware cannot, so the Partitioned scenarios skip that driver."
    ),
    "chunked needs our Django middleware": (
        "CHUNKED needs this project's Django session middleware (system check blake2sign_web.E022): Django's "
        "writes one cookie per session. Chunk scenarios skip the driver with Django's middleware."
    ),
    "oversize 'log' under Django's middleware": (
        "Django's own SessionMiddleware writes the session key as a cookie after every save; under OVERSIZE "
        "'log' the engine hands it the client's previous cookie again (or, for a client without one, an empty "
        "session), so the client keeps what it had, as with the others, but receives a Set-Cookie."
    ),
    "re-issued unread": (
        "A cookie of a fallback secret, or an incumbent's cookie being migrated, on a request that never uses the "
        "session: Starlette's own SessionMiddleware reads every session cookie and sends it again on every "
        "response, so its drop-in re-signs it under the current secret at once; Django's contract loads a "
        "session only when the view uses it (SessionBase), and Django's own middleware saves only a session "
        "that was used, so it is re-signed on the first request that reads it. Both re-sign it once it is read."
    ),
    "logger": (
        "A rejected cookie is logged by Django's convention to 'django.security.SuspiciousSession', by "
        "Starlette's adapter to 'blake2sign_web.starlette': the suite checks that one warning is logged."
    ),
    "when a configuration error stops the process": (
        "Starlette builds its middleware when the application starts (its lifespan); Django loads middleware "
        "when the handler loads it (a server's start, the test client's first request). Both refuse the "
        "configuration before any response, naming the user's own setting."
    ),
    "token layout": (
        "Each adapter keeps set_expiry() and a session's start inside its token its own way (Django in the "
        "session's data, Starlette beside it): the drivers' sign() hides it. Not a behaviour."
    ),
}

#: Values that come from a clock read at slightly different moments: equal within this many seconds.
TOLERANT_KEYS: Final = frozenset({"max-age", "age", "date", "ttl"})
TOLERANCE: Final = 2


def differ(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two outcomes differ (empty: they agree); numbers under TOLERANT_KEYS may differ by TOLERANCE."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = [
            f"{where}/{key}: only in one ({a.get(key, '-')!r} vs {b.get(key, '-')!r})" for key in a.keys() ^ b.keys()
        ]
        for key in a.keys() & b.keys():
            found += differ(a[key], b[key], f"{where}/{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [problem for i, (x, y) in enumerate(zip(a, b, strict=True)) for problem in differ(x, y, f"{where}[{i}]")]
    last = where.rsplit("/", 1)[-1]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if numbers and last in TOLERANT_KEYS and abs(a - b) <= TOLERANCE:
        return []
    return [] if a == b else [f"{where}: {a!r} vs {b!r}"]


def agree(outcomes: dict[str, Any]) -> None:
    """Assert that every driver's outcome equals the first's (within the tolerances)."""
    (first, reference), *others = outcomes.items()
    problems = [f"{name} vs {first}: {problem}" for name, outcome in others for problem in differ(outcome, reference)]
    assert not problems, "the frameworks disagree:\n" + "\n".join(problems)
