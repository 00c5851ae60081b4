"""Revocation and its stores: what a revoked session, user or link group is, and how Redis is asked.

It owns the records (``records``: names, values, the records' clock, what a group id may be), revocation's
decisions sans-IO (``revocation``), what every store shares (``base``: ``StoreUnavailable``, store URLs, scripts,
the redis-py client), what each operation sends and what its replies mean (``plans``), their steps on a client
(``commands``), the options checked once (``options``) and the blocking and asyncio Redis stores
(``redis_stores``). It may import ``signing``; sessions and links use it, never the reverse.
"""
