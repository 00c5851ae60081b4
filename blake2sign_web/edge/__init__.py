"""Links checked outside Python: the keyring a front server holds, the reference verifier, the test vectors, and
the verifiers for Cloudflare Workers, nginx (njs), Node and Go that ``python -m blake2sign_web.edge`` writes out.

The format they check is docs/link-format.md. This package reads ``links`` and ``signing``; nothing imports it.
"""
