"""``python -m blake2sign_web.edge``: the keyring it writes, and each verifier it writes working where it lands,
away from the package (its imports rewritten), with the keyring beside it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from blake2sign_web.edge import keyring as keyrings
from blake2sign_web.edge.__main__ import TARGETS
from blake2sign_web.links.signer import URLSigner
from tests.edge.conftest import program

SECRET = "an edge CLI test secret, long enough"
OLD = "an edge CLI test's retired secret"


def edge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "OLD_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "blake2sign_web.edge", *args],
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_keyring_command_writes_link_keys_readable_by_its_owner_only(tmp_path: Path) -> None:
    out = tmp_path / "keyring.json"
    done = edge("keyring", "--purpose", "downloads", "--fallback-env", "OLD_KEY", "--ignore", "utm_*", "--out",
                str(out), env={"SECRET_KEY": SECRET, "OLD_KEY": OLD})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    text = out.read_text()
    assert SECRET not in text
    assert OLD not in text
    ring = keyrings.load(out)
    assert [k.id for k in ring.keys] == [
        URLSigner(s, purpose="downloads", hasher="hmac-sha256").key_id for s in (SECRET, OLD)
    ]
    assert ring.ignore == ("utm_*",)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["keyring", "--purpose", "downloads"], {}, "set the environment variable SECRET_KEY"),
        (["keyring", "--purpose", "downloads", "--fallback-env", "OLD_KEY"], {"SECRET_KEY": SECRET}, "OLD_KEY"),
        (["keyring", "--purpose", "downloads", "--param", "sig"], {"SECRET_KEY": SECRET}, "NAME=VALUE"),
        (["keyring", "--purpose", "downloads", "--ignore", "utm_[ab]"], {"SECRET_KEY": SECRET}, "'*' and '?'"),
        (["keyring", "--purpose", "downloads"], {"SECRET_KEY": "short"}, "fewer than the minimum"),
    ],
)
def test_the_keyring_command_says_what_is_wrong(
    tmp_path: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    done = edge(*args, "--out", str(tmp_path / "k.json"), env=env)
    assert done.returncode != 0
    assert message in done.stderr
    assert not (tmp_path / "k.json").exists()


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_target_writes_its_files_and_a_keyring(tmp_path: Path, target: str) -> None:
    done = edge(target, "--purpose", "downloads", "--out", str(tmp_path), env={"SECRET_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*TARGETS[target].values(), "keyring.json"])
    for path in tmp_path.iterdir():
        assert "'../js/linkcheck.js'" not in path.read_text(), path.name  # the core sits beside its importer


def _written(tmp_path: Path, target: str) -> tuple[Path, str]:
    """The target written with a keyring, and a link it must allow."""
    assert edge(target, "--purpose", "downloads", "--out", str(tmp_path), env={"SECRET_KEY": SECRET}).returncode == 0
    link = URLSigner(SECRET, purpose="downloads", hasher="hmac-sha256").sign_prefix("/v/", expires_in=600)
    return tmp_path, link.link("a.ts")


def test_the_written_node_middleware_decides_with_its_keyring(tmp_path: Path) -> None:
    node = program("node", "nodejs")
    out, link = _written(tmp_path, "node")
    script = f"""
        import {{ createLinkcheck }} from {json.dumps(str(out / "linkcheck-node.mjs"))};
        const check = createLinkcheck({{ keyring: {json.dumps(str(out / "keyring.json"))} }});
        const request = (target) => ({{ method: 'GET', target, host: 'x', scheme: 'https', cookie: null }});
        console.log(JSON.stringify([check.decide(request({json.dumps(link)})).decision,
                                    check.decide(request({json.dumps(link.replace("a.ts", "../b.ts"))})).decision]));
    """
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["allow", "refuse"]


def test_the_written_worker_serves_an_allowed_file_and_refuses_the_rest(tmp_path: Path) -> None:
    node = program("node", "nodejs")
    out, link = _written(tmp_path, "cloudflare")
    script = f"""
        import worker from {json.dumps(str(out / "worker.js"))};
        import {{ readFileSync }} from 'node:fs';
        const env = {{ KEYRING: readFileSync({json.dumps(str(out / "keyring.json"))}, 'utf8'),
                       FILES: {{ fetch: async (r) => new Response('file at ' + new URL(r.url).pathname + new URL(r.url).search) }} }};
        const answer = async (target) => {{
            const response = await worker.fetch(new Request('https://media.example' + target), env);
            return [response.status, await response.text()];
        }};
        console.log(JSON.stringify([await answer({json.dumps(link)}), await answer('/v/a.ts')]));
    """  # noqa: E501
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[200, "file at /v/a.ts"], [403, "Forbidden\n"]]


def test_the_written_njs_module_loads_under_njs(tmp_path: Path) -> None:
    njs = program("njs", "njs")
    out, _ = _written(tmp_path, "nginx")
    probe = out / "probe.js"
    probe.write_text(
        "import linkcheck from 'linkcheck_njs.js';\n"
        "console.log(typeof linkcheck.verdict, typeof linkcheck.playlist, typeof linkcheck.headers);\n"
    )
    done = subprocess.run([njs, "-p", str(out), str(probe)], capture_output=True, text=True, check=False, cwd=out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["function", "function", "function"]


def test_the_written_go_package_builds_alone(tmp_path: Path) -> None:
    go = program("go", "golang-go")
    out, _ = _written(tmp_path, "go")
    env = {**os.environ, "GOPROXY": "off", "GOFLAGS": "", "CGO_ENABLED": "0", "GOCACHE": str(tmp_path / "cache"),
           "GOPATH": str(tmp_path / "gopath"), "GOTOOLCHAIN": "local"}  # fmt: skip
    done = subprocess.run([go, "vet", "./..."], cwd=out, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
