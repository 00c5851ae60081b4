"""The hasher the suites sign sessions and links with: ``BLAKE2SIGN_TEST_HASHER``, read here and nowhere else.

Unset, the default ("blake2b"). Set (to any of ``blake2sign_web.signing.keys.HASHERS``), the conformance suite
configures every framework's sessions and links with it, and the incumbents' suites (Django's, Starlette's,
Flask's own, run in processes of their own) configure this project's engine with it; every signer a test builds
by hand to forge or read a framework's token takes it too. tox's ``starlettenewest`` environments set it to
"hmac-sha256", so CI runs the suites once with each.

Self-contained (it imports nothing of the ``tests`` package): the incumbents' plugins, which run beside another
project's ``tests`` package, load this file by its path.
"""

from __future__ import annotations

import os
from typing import Final

from blake2sign_web.signing.keys import HASHERS

#: The environment variable that switches the suites' hasher.
VARIABLE: Final = "BLAKE2SIGN_TEST_HASHER"
DEFAULT: Final = "blake2b"


def _chosen() -> str:
    value = os.environ.get(VARIABLE, "").strip() or DEFAULT
    if value not in HASHERS:
        raise ValueError(f"{VARIABLE} must be one of {', '.join(HASHERS)}, not {value!r}")
    return value


#: The hasher every suite configures sessions and links with.
HASHER: Final = _chosen()
#: A hasher other than ``HASHER``: a token signed with it must be refused (tests/conformance/test_hasher_switch.py).
OTHER: Final = "blake2s" if HASHER == DEFAULT else DEFAULT
