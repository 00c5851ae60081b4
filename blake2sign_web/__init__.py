"""Fast, strict signed tokens on keyed BLAKE2b / BLAKE2s / BLAKE3 for web applications."""

import logging

from .exceptions import BadSignature, SignatureExpired, SignatureNotYetValid
from .links.signer import URLSigner, VerifiedLink, get_url_signer
from .signing.cache import CacheInfo, cached, clear_signer_cache, get_raw_signer, get_signer, signer_cache_info
from .signing.serializer import LoadedToken, SerializerSigner
from .signing.signer import Signer

__all__ = [
    "BadSignature",
    "CacheInfo",
    "LoadedToken",
    "SerializerSigner",
    "SignatureExpired",
    "SignatureNotYetValid",
    "Signer",
    "URLSigner",
    "VerifiedLink",
    "cached",
    "clear_signer_cache",
    "get_raw_signer",
    "get_signer",
    "get_url_signer",
    "signer_cache_info",
]
__version__ = "0.1.0"

# A library logs; the application decides where logs go. Without a handler of its own, Python
# would print our warnings (a rejected cookie or link) on stderr through logging.lastResort,
# in every test run, whatever the application configured. Records still propagate to the
# application's handlers (root, or "blake2sign_web").
logging.getLogger("blake2sign_web").addHandler(logging.NullHandler())
