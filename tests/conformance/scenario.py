"""Scenario tables: each scenario runs once per driver, then through every driver at once, outcomes compared.

A scenario is a function of ``start`` (``start(**neutral_options)`` is a running driver, in a ``with``) that
drives requests, asserts what every framework must do, and returns its outcome (plain data). Two tests come
of each table (``conformance_tests``):

- ``test_each_driver[scenario-driver]``: the scenario's own assertions, on one framework;
- ``test_frameworks_agree[scenario]``: every driver's outcome equal (``differences.agree``).

A disagreement the frameworks' contracts do not demand, and that is not fixed yet, is ``known``: the
scenario keeps asserting the agreed behaviour, and the drivers that do not follow it are strict xfails
(as is the agreement test), so fixing it makes the suite say so.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import pytest

from .differences import agree
from .drivers import DRIVERS, Driver


class Start:
    """``start(**neutral_options)``: one driver's stack, running for the length of a ``with``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.driver_class = DRIVERS[kind]

    def __call__(self, **options: Any) -> AbstractContextManager[Driver]:
        return self.driver_class(options).running()

    def spelling(self, option: str) -> str:
        """How this framework's users write a fix (without starting it: its configuration may be refused)."""
        return self.driver_class({}).spelling(option)


@dataclass(frozen=True)
class Scenario:
    run: Callable[..., Any]
    #: Driver name -> the disagreement it shows (issue 28), for a strict xfail.
    known: dict[str, str] = field(default_factory=dict)
    #: Neutral options the scenario needs, which some drivers do not support (Driver.unsupported).
    features: frozenset[str] = frozenset()
    #: Compare outcomes across drivers (False: the outcome holds framework-specific text, e.g. messages).
    compare: bool = True
    #: Pytest fixtures the scenario takes after ``start`` (``conformance_redis``, ``caplog``).
    fixtures: tuple[str, ...] = ()


def register(table: dict[str, Scenario], **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the decorated ``scenario_<name>`` to ``table``; ``kwargs`` are the Scenario's other fields."""
    features = frozenset(kwargs.pop("features", ()))

    def add(run: Callable[..., Any]) -> Callable[..., Any]:
        name = run.__name__.removeprefix("scenario_").replace("_", "-")
        table[name] = Scenario(run, features=features, **kwargs)
        return run

    return add


def supported(kind: str, scenario: Scenario) -> bool:
    return not (scenario.features & DRIVERS[kind].unsupported)


def _xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"{reason}, issue 28")


def conformance_tests(table: dict[str, Scenario]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two tests of a scenario table, to assign to ``test_each_driver, test_frameworks_agree``."""
    each = [
        pytest.param(name, kind, id=f"{name}-{kind}", marks=[_xfail(s.known[kind])] if kind in s.known else [])
        for name, s in table.items()
        for kind in DRIVERS
        if supported(kind, s)
    ]

    @pytest.mark.parametrize(("name", "kind"), each)
    def test_each_driver(name: str, kind: str, request: pytest.FixtureRequest) -> None:
        scenario = table[name]
        scenario.run(Start(kind), *[request.getfixturevalue(f) for f in scenario.fixtures])

    compared = [
        pytest.param(name, id=name, marks=[_xfail("; ".join(sorted(set(s.known.values()))))] if s.known else [])
        for name, s in table.items()
        if s.compare
    ]

    @pytest.mark.parametrize("name", compared)
    def test_frameworks_agree(name: str, request: pytest.FixtureRequest) -> None:
        scenario = table[name]
        fixtures = [request.getfixturevalue(f) for f in scenario.fixtures]
        agree({kind: scenario.run(Start(kind), *fixtures) for kind in DRIVERS if supported(kind, scenario)})

    return test_each_driver, test_frameworks_agree
