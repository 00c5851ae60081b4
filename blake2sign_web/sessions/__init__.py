"""Sessions in a signed cookie, framework-neutral: every rule an adapter's session follows, written once.

It owns every option, its rule and its spelling in each framework (``options``, ``spelling``), a configuration
resolved once (``settings``), the session dict (``state``), its lifetime and timeouts (``expiry``), reading a cookie
with every outcome named (``token``), the cookies and their chunks (``cookies``, ``cookie_attributes``,
``chunks``), one request's read and response (``loading``, ``request``) and a revocable session (``revocation``).
It may import ``stores`` and ``signing``, never ``links``; the adapters use it.
"""
