"""Fast, strict signed tokens on keyed BLAKE2b / BLAKE2s / BLAKE3 for web applications."""

from .cache import CacheInfo, cached, clear_signer_cache, get_raw_signer, get_signer, signer_cache_info
from .exceptions import BadSignature, SignatureExpired
from .serializer import LoadedToken, SerializerSigner
from .signer import Signer
from .urls import URLSigner, VerifiedLink, get_url_signer

__all__ = [
    "BadSignature",
    "CacheInfo",
    "LoadedToken",
    "SerializerSigner",
    "SignatureExpired",
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
