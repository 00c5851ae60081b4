"""Instructions of one request's link check in process, by kind (callgrind counts them; docs: "Grant cookies").

    for kind in file file-nocookies prefix cookie cookie2; do for n in 1 101; do
      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=out.$kind.$n python scripts/link_cost.py $kind $n
    done; done
    # one check = (totals of out.KIND.101 - totals of out.KIND.1) / 100

Each run makes 5 warm-up checks then N, through ``LinkGuard.check`` as both adapters call it (with the
request's cookies: a session cookie, and the grant cookies of the kind): ``file`` a link to one file,
``file-nocookies`` the same with no cookies passed (the check before grant cookies), ``prefix`` a folder link,
``cookie`` a plain URL under one grant cookie, ``cookie2`` under two (the one for the path's folder found by name).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from blake2sign_web.link_cookies import grant
from blake2sign_web.link_guard import LinkGuard
from blake2sign_web.urls import URLSigner, VerifiedLink

PATH = "/files/videos/123/720p/seg-001.ts"


def main(kind: str, n: int) -> None:
    signer = URLSigner("a measuring secret, long enough to sign with", purpose="downloads")
    guard = LinkGuard(signer, 410, "no store", False, "option", None, lambda request: "")
    jar = {"sessionid": "x" * 200}
    url = PATH
    if kind in ("file", "file-nocookies"):
        url = signer.sign(PATH, expires_in=3600)
    elif kind == "prefix":
        url = signer.sign_prefix("/files/videos/123/", expires_in=3600).link("720p/seg-001.ts")
    elif kind in ("cookie", "cookie2"):
        folders = ["/files/videos/123/"] if kind == "cookie" else ["/files/videos/123/", "/files/videos/"]
        for folder in folders:
            cookie = grant(signer, folder, secure=True, expires_in=3600)
            jar[cookie.name] = cookie.value
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    cookies: Callable[[], Mapping[str, str]] = lambda: jar  # noqa: E731
    for _ in range(5 + n):
        value = None if kind == "file-nocookies" else guard.grant(url, "GET", cookies)
        link = guard.check(url, None, PATH, "GET", True, value)
        assert type(link) is VerifiedLink, link


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
