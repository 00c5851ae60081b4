"""The test runner of the ``auth_tests`` run (django_auth_settings.TEST_RUNNER): Django's, recording outcomes.

Django's ``runtests.py`` runs the suite with the settings' TEST_RUNNER; this is Django's
DiscoverRunner with two additions, so the outer check (runner.check) sees every test:

- the tests named in ``BLAKE2SIGN_INCUMBENT_AUTH_SKIPS`` (JSON ``{"module.Class.test": reason}``,
  from runner.DJANGO_AUTH_SKIPS) are skipped with their reason; a name that is not in the suite
  stops the run before any test runs;
- the outcome of every test is written as JSON to ``BLAKE2SIGN_INCUMBENT_AUTH_RESULTS``.

Run with ``--parallel=1``: the skips are set on the test classes of this process.
"""

from __future__ import annotations

import json
import os
import unittest
from pathlib import Path
from typing import Any

from django.test.runner import DiscoverRunner
from django.test.utils import iter_test_cases

PACKAGE = "auth_tests."


def name_of(test: unittest.TestCase) -> str:
    """``module.Class.test`` below the ``auth_tests`` package, the key of the skip list."""
    return test.id().removeprefix(PACKAGE)


class RecordingRunner(DiscoverRunner):
    def build_suite(self, *args: Any, **kwargs: Any) -> unittest.TestSuite:
        suite = super().build_suite(*args, **kwargs)
        skips: dict[str, str] = json.loads(os.environ.get("BLAKE2SIGN_INCUMBENT_AUTH_SKIPS", "{}"))
        tests = {name_of(test): test for test in iter_test_cases(suite)}
        missing = sorted(set(skips) - set(tests))
        if missing:
            raise LookupError(f"in the skip list but not in Django's auth_tests: {', '.join(missing)}: update it")
        for name, reason in skips.items():
            cls, method = type(tests[name]), tests[name]._testMethodName
            setattr(cls, method, unittest.skip(reason)(getattr(cls, method)))
        return suite

    def run_suite(self, suite: unittest.TestSuite, **kwargs: Any) -> unittest.TestResult:
        # Before the run: unittest's suites drop each test once it has run.
        cases = {name_of(test): {"name": name_of(test), "outcome": "passed"} for test in iter_test_cases(suite)}
        result = super().run_suite(suite, **kwargs)

        def record(test: Any, outcome: str, message: str) -> None:
            test = getattr(test, "test_case", test)  # a subTest's failure is its test's
            name = name_of(test) if isinstance(test, unittest.TestCase) else str(test)  # setUpClass: an _ErrorHolder
            case = cases.setdefault(name, {"name": name})
            if case.get("outcome") not in ("failed", "error"):  # the first failure of a test (its subtests) wins
                case.update(outcome=outcome, message=message)

        for test, traceback in result.failures:
            record(test, "failed", traceback)
        for test, traceback in result.errors:
            record(test, "error", traceback)
        for test, reason in result.skipped:
            record(test, "skipped", reason)
        for test in result.unexpectedSuccesses:
            record(test, "failed", "unexpected success: the test is marked expectedFailure")
        Path(os.environ["BLAKE2SIGN_INCUMBENT_AUTH_RESULTS"]).write_text(json.dumps(list(cases.values())))
        return result
