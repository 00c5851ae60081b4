"""A Redis store's options and client, checked once for every framework (``StoreOptions``): the base of the
blocking ``redis_stores.RedisStore`` (Flask) and of ``redis_stores.AsyncRedisStore`` (Starlette, FastAPI, Quart).
Django's ``RedisStoreCache`` shares the replica check (``stores.plans.Replicas.checked``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .plans import Replicas, StorePlans
from .revocation import (
    CLOCK,
    DEFAULT_CLOCK_SKEW,
    DEFAULT_TIMEOUT,
    Policy,
    check_clock_skew,
    check_earlier_names_until,
    check_key_prefix,
    check_policy,
    check_timeout,
)


class StoreOptions:
    """What a store does beside its I/O, its arguments checked (ValueError names the one that is wrong):
    ``timeout`` bounds each call, ``on_unavailable`` says what a call the store cannot answer does, ``clock_skew``
    is how far the clocks of the servers sharing the store may differ, ``key_prefix`` names this application in
    its keys, and ``wait_replicas`` is how many replicas must have each write. ``earlier_names_until``: while upgrading,
    the date until which records under the names of earlier releases are read too (None: never; docs/revocation.md,
    "Upgrading"). docs/revocation.md, "Deployment"."""

    def __init__(
        self,
        client: Any,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_unavailable: Policy = "closed",
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        key_prefix: str = "",
        wait_replicas: int = 0,
        earlier_names_until: object = None,
        clock: Callable[[], float] = CLOCK,
    ) -> None:
        self.timeout = check_timeout(timeout, "RedisStore timeout")
        self.on_unavailable = check_policy(on_unavailable, "RedisStore on_unavailable")
        self.clock_skew = check_clock_skew(clock_skew, "RedisStore clock_skew")
        self.key_prefix = check_key_prefix(key_prefix, "RedisStore key_prefix")
        self._replicas = Replicas.checked(wait_replicas, self.timeout, "RedisStore wait_replicas")
        self.wait_replicas = self._replicas.wanted
        #: The end of the upgrade's window (Unix seconds) in which earlier names are read; None: never.
        self.earlier_until = check_earlier_names_until(earlier_names_until, "RedisStore earlier_names_until")
        self.clock = clock
        self._plans = StorePlans(self.key_prefix, self.clock_skew, self._replicas, clock)
        self.client, self.is_cluster = self._connected(client)

    def _connected(self, client: Any) -> tuple[Any, bool]:
        """The store's client (made from a store URL, or the one given) and whether it is a cluster's; TypeError for
        what is not a client of the store's kind."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"RedisStore(timeout={self.timeout!r}, on_unavailable={self.on_unavailable!r}, "
            f"clock_skew={self.clock_skew!r}, key_prefix={self.key_prefix!r}, wait_replicas={self.wait_replicas!r}, "
            f"earlier_until={self.earlier_until!r})"
        )

    @property
    def fails_open(self) -> bool:
        """Whether a call the store cannot answer is let through (``on_unavailable="open"``), logged."""
        return self.on_unavailable == "open"
