"""What an endpoint checks its signed links with, in any framework: its options, checked once, and each
request's decisions in the order ``link_requests`` gives them.

An adapter builds one ``LinkGuard`` at start-up (Starlette: per ``require_signature`` or ``SignedFiles``;
Django: per ``SIGNED_URLS`` settings) and, per request, hands it plain values: ``check`` (the link, its
confirmation page, or its refusal), then for a single-use link ``use`` or ``ause`` with its store's
``consume_link`` (None when there is no store): the refusal, or None to go on. The adapter only reads the
request and writes the response.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, NamedTuple

from .link_options import check_expired_status
from .link_requests import (
    Confirmation,
    Consumption,
    Refusal,
    StoreCall,
    Wanted,
    astore_answer,
    before_store,
    check,
    consumed,
    consumption,
    store_answer,
)
from .stores import check_store
from .urls import Bound, URLSigner, VerifiedLink

NO_TERMS: Final = Consumption()


def file_use(
    link: VerifiedLink | None, method: str, size: int, wanted: Wanted
) -> tuple[VerifiedLink, Consumption] | None:
    """The single-use link a file request uses up, knowing the file (``size``, ``wanted``: its range asked for),
    with what a continuation by the same client may fetch (``link_requests.consumption``); None: nothing to use up."""
    if link is None or link.nonce is None:
        return None
    return link, consumption(link, method, file_size=size, wanted=wanted)


class LinkGuard(NamedTuple):
    """An endpoint's options of signed links: the signer, the status of an expired or used link, what to
    log when no store consumes single-use links (``no_store``: the option to set), whether a store that
    cannot answer lets the request through (``fails_open``; ``option``: how the framework spells it)."""

    signer: URLSigner
    expired_status: int
    no_store: str
    fails_open: bool = False
    option: str = "on_unavailable"

    @classmethod
    def for_store(cls, signer: URLSigner, expired_status: object, store: object) -> LinkGuard:
        """Starlette's guard: its arguments checked at start-up (ValueError, TypeError naming the argument);
        ``store``: the ``single_use`` argument, None or what has ``consume_link`` (and ``fails_open``)."""
        status = check_expired_status(expired_status)
        check_store(store, "single_use", "consume_link")
        fails_open = store is not None and bool(getattr(store, "fails_open", False))
        return cls(signer, status, "no single_use store configured for this endpoint", fails_open)

    @classmethod
    def from_settings(cls, signer: URLSigner, settings: Mapping[str, Any]) -> LinkGuard:
        """Django's guard, from ``SIGNED_URLS`` as ``link_options.from_settings`` checked it."""
        fails_open = settings["SINGLE_USE_UNAVAILABLE"] == "open"
        option = "SINGLE_USE_UNAVAILABLE"
        return cls(signer, settings["EXPIRED_STATUS"], "SINGLE_USE_CACHE is not configured", fails_open, option)

    def check(
        self, url: str | None, bound: Bound | None, path: str, method: str, serves_file: bool = False
    ) -> VerifiedLink | Confirmation | Refusal:
        """``link_requests.check`` with this guard's signer and expired status."""
        return check(self.signer, url, bound, path, method, self.expired_status, serves_file)

    def call(
        self, link: VerifiedLink, path: str, store: object, cross_site: bool, terms: Consumption
    ) -> StoreCall | Refusal | None:
        """``link_requests.before_store`` with this guard's options (``store``: None when there is none)."""
        missing = self.no_store if store is None else None
        return before_store(link, path=path, missing_store=missing, cross_site=cross_site, terms=terms)

    def use(
        self,
        link: VerifiedLink,
        path: str,
        consume: Callable[..., bool] | None,
        client: Callable[[], str],
        *,
        cross_site: bool = False,
        terms: Consumption = NO_TERMS,
    ) -> Refusal | None:
        """Use up a single-use link with a blocking store's ``consume`` (``client``: who asks, read only if the
        store is asked): None when this request may have it, else the refusal (403, 503, the expired status)."""
        call = self.call(link, path, consume, cross_site, terms)
        if type(call) is not StoreCall or consume is None:
            return call  # type: ignore[return-value]
        answer = store_answer(consume, call, client())
        return consumed(
            answer, path=path, fails_open=self.fails_open, expired_status=self.expired_status, option=self.option
        )

    async def ause(
        self,
        link: VerifiedLink,
        path: str,
        consume: Callable[..., Awaitable[bool]] | None,
        client: Callable[[], str],
        *,
        cross_site: bool = False,
        terms: Consumption = NO_TERMS,
    ) -> Refusal | None:
        """``use`` with an asynchronous store."""
        call = self.call(link, path, consume, cross_site, terms)
        if type(call) is not StoreCall or consume is None:
            return call  # type: ignore[return-value]
        answer = await astore_answer(consume, call, client())
        return consumed(
            answer, path=path, fails_open=self.fails_open, expired_status=self.expired_status, option=self.option
        )
