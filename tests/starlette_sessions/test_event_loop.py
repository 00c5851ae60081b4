"""Nothing the middleware or the file helpers do per request blocks the event loop.

Starlette builds its middleware stack at the first request, on the event loop, so "at
construction" is on the loop too: each check runs in a fresh process (nothing read or
cached yet) with blockbuster active before the app handles its first request, as
Starlette's own test suite runs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("blockbuster", reason="blockbuster is in the test dependency group")

ROOT = Path(__file__).resolve().parents[2]

APP = """
import os, tempfile
from blockbuster import BlockBuster
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from blake2sign_web import get_url_signer
from blake2sign_web.starlette import SessionMiddleware, SignedFiles

root = tempfile.mkdtemp()
with open(os.path.join(root, "report.csv"), "wb") as file:
    file.write(b"a,b\\n1,2\\n")
signer = get_url_signer("event-loop-test-secret-0123456789", purpose="files")

async def write(request):
    request.session["cart"] = ["book"] * 40  # large enough to be compressed against the dictionary
    return JSONResponse(dict(request.session))

async def read(request):
    return JSONResponse(dict(request.session))

app = Starlette(
    routes=[Route("/write", write), Route("/read", read), Route("/files/{name:path}", SignedFiles(signer, root))],
    middleware=[Middleware(SessionMiddleware, secret_key="event-loop-test-secret-0123456789")],
)
client = TestClient(app)
blockbuster = BlockBuster("starlette")
# The test client's own thread hand-off reads a pipe; that is the client's, not the app's.
blockbuster.functions["io.BufferedReader.read"].can_block_in("/starlette/testclient.py", "receive")
blockbuster.activate()
try:
    assert client.get("/write").json()["cart"][0] == "book"
    assert client.get("/read").json()["cart"][0] == "book"
    link = signer.sign("/files/report.csv", expires_in=60)
    response = client.get(link)
    assert response.status_code == 200, response.status_code
    assert response.headers["content-type"].startswith("text/csv"), response.headers["content-type"]
    assert response.content == b"a,b\\n1,2\\n"
finally:
    blockbuster.deactivate()
print("no blocking call")
"""


def test_first_requests_of_a_fresh_process_make_no_blocking_call() -> None:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(APP)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "no blocking call"
