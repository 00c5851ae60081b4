"""``python -m blake2sign_web.edge``: write a keyring, a verifier for a front server, or the test vectors.

    python -m blake2sign_web.edge keyring --purpose downloads --out keyring.json
    python -m blake2sign_web.edge nginx --purpose downloads --out edge/      # or cloudflare, node, go
    python -m blake2sign_web.edge vectors --out vectors.json

The secret comes from an environment variable (``--secret-env``, default ``SECRET_KEY``), and each retired one
from another (``--fallback-env``, repeatable): never from the command line, which other users can read.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Final

from . import keyring as keyrings
from . import vectors

#: What each target writes: the package's files under ``verifiers/`` and their names in the output folder.
TARGETS: Final[dict[str, dict[str, str]]] = {
    "cloudflare": {
        "js/linkcheck.js": "linkcheck.js",
        "cloudflare/worker.js": "worker.js",
        "cloudflare/wrangler.toml": "wrangler.toml",
        "cloudflare/README.md": "README.md",
    },
    "nginx": {
        "js/linkcheck.js": "linkcheck.js",
        "nginx/linkcheck_njs.js": "linkcheck_njs.js",
        "nginx/nginx.conf": "nginx.conf",
        "nginx/README.md": "README.md",
    },
    "node": {
        "js/linkcheck.js": "linkcheck.js",
        "node/linkcheck-node.mjs": "linkcheck-node.mjs",
        "node/README.md": "README.md",
    },
    "go": {
        "go/linkcheck/go.mod": "go.mod",
        "go/linkcheck/linkcheck.go": "linkcheck.go",
        "go/linkcheck/middleware.go": "middleware.go",
        "go/linkcheck/playlist.go": "playlist.go",
        "go/linkcheck/README.md": "README.md",
    },
}


def write_target(target: str, out: Path, keyring: keyrings.Keyring | None) -> list[Path]:
    """Copy ``target``'s files into ``out`` (and ``keyring.json`` when given); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    root = resources.files(__package__) / "verifiers"
    written = []
    for source, name in TARGETS[target].items():
        text = root.joinpath(*source.split("/")).read_text(encoding="utf-8")
        # In the package the shared core sits in js/; in the folder written, beside the file that imports it.
        (out / name).write_text(text.replace("'../js/linkcheck.js'", "'./linkcheck.js'"), encoding="utf-8")
        written.append(out / name)
    if keyring is not None:
        keyrings.write(keyring, out / "keyring.json")
        written.append(out / "keyring.json")
    return written


def _keyring(args: argparse.Namespace) -> keyrings.Keyring:
    secret = os.environ.get(args.secret_env)
    if not secret:
        sys.exit(f"error: set the environment variable {args.secret_env} to the secret the links are signed with")
    fallbacks = []
    for name in args.fallback_env:
        value = os.environ.get(name)
        if not value:
            sys.exit(f"error: --fallback-env {name}: the environment variable {name} is not set")
        fallbacks.append(value)
    parameters = {}
    for pair in args.param:
        option, equals, value = pair.partition("=")
        if not equals:
            sys.exit(f"error: --param takes NAME=VALUE, e.g. signature_param=sig; got {pair!r}")
        parameters[option] = value
    try:
        return keyrings.make(
            secret,
            purpose=args.purpose,
            fallbacks=fallbacks,
            ignore=args.ignore,
            bind_host=args.bind_host,
            **parameters,
        )
    except (TypeError, ValueError) as error:
        sys.exit(f"error: {error}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m blake2sign_web.edge", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("keyring", *TARGETS):
        help = "write the keyring file" if name == "keyring" else f"write the {name} verifier (and its keyring)"
        command = commands.add_parser(name, help=help)
        command.add_argument("--purpose", required=name == "keyring", help="URLSigner's purpose (Django: PURPOSE)")
        command.add_argument("--secret-env", default="SECRET_KEY", help="the variable holding the secret")
        command.add_argument("--fallback-env", action="append", default=[], help="a variable holding a retired secret")
        command.add_argument("--bind-host", action="store_true", help="the links bind the host (bind_host=True)")
        command.add_argument("--ignore", action="append", default=[], help="an ignored parameter pattern, e.g. utm_*")
        command.add_argument("--param", action="append", default=[], help="a parameter name, e.g. signature_param=sig")
        command.add_argument("--out", type=Path, required=True, help="the file (keyring) or folder to write")
    commands.add_parser("vectors", help="write the test vectors").add_argument("--out", type=Path, required=True)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "vectors":
        args.out.write_text(vectors.dumps())
        print(f"wrote {args.out}")
    elif args.command == "keyring":
        keyrings.write(_keyring(args), args.out)
        print(f"wrote {args.out}: the link keys of purpose {args.purpose!r} (keep it as secret as the key itself)")
    else:
        keyring = _keyring(args) if args.purpose else None
        for path in write_target(args.command, args.out, keyring):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
