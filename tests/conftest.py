"""Options shared by the whole suite.

``--long`` turns the bounded attack and load runs (property examples, fuzzing time, the soak) into their long
versions; CI runs the short ones. Tests read it through :mod:`tests.longrun`.

The session ends with one line saying how many hypothesis examples ran, so that a run shows the number it
claims (``HypothesisExampleCounter``).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the long versions of the property, fuzzing and soak tests (ten times the examples, minutes of load)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("long"):
        os.environ["BLAKE2SIGN_LONG"] = "1"


class HypothesisExampleCounter:
    """How many examples hypothesis ran in this session, so that CI output shows the number, not a guess.

    An example is a test case that ran the property to its end, passing or failing, in any phase
    (generation, replay of the database, shrinking); cases hypothesis discarded (``assume``, a filter,
    data too large) are not counted, nor explicit ``@example`` cases. Counted from the statistics hypothesis
    hands its own pytest plugin (``--hypothesis-show-statistics``), which this passes on unchanged.
    """

    def __init__(self) -> None:
        self.examples = 0
        self.properties: set[str] = set()

    def add(self, nodeid: str, statistics: Mapping[str, Any]) -> None:
        self.properties.add(nodeid)
        for phase in statistics.values():
            if isinstance(phase, Mapping):
                self.examples += sum(case["status"] in ("valid", "interesting") for case in phase.get("test-cases", ()))

    def summary(self) -> str:
        noun = "property" if len(self.properties) == 1 else "properties"
        return f"hypothesis: {self.examples:,} examples in {len(self.properties)} {noun}"


HYPOTHESIS_EXAMPLES = HypothesisExampleCounter()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    # trylast: inside hypothesis' own wrapper, whose statistics collector is then the one to chain to.
    if not getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        yield
        return
    from hypothesis.statistics import collector

    outer = collector.value

    def note_statistics(statistics: Mapping[str, Any]) -> None:
        HYPOTHESIS_EXAMPLES.add(item.nodeid, statistics)
        if outer is not None:
            outer(statistics)

    with collector.with_value(note_statistics):
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if HYPOTHESIS_EXAMPLES.properties:
        terminalreporter.write_line(HYPOTHESIS_EXAMPLES.summary())
