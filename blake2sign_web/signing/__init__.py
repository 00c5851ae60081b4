"""The token layer: bytes in, a signed (or encrypted) token out, and back, with no notion of a web request.

It owns key derivation and the keyed hashes (``keys``), the ``Signer`` of bytes (``signer``), unpadded base64url
(``encoding``), the value tokens' layouts (``formats``) and times (``times``), bounded zstandard with the shipped
dictionaries (``compression``), typed values and what JSON carries (``typed``), AES-256-GCM (``encryption``), the
``SerializerSigner`` (``serializer``) and one signer per configuration per process (``cache``). It imports nothing
of ours but ``exceptions`` and ``dictionaries``; every other package stands on it.
"""
