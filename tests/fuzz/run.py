"""Run one fuzz target under atheris: ``python -m tests.fuzz.run TARGET [libFuzzer flags] [corpus dirs]``.

atheris.Setup and atheris.Fuzz take over the process (libFuzzer calls ``exit``), so the
tests start this in a subprocess. blake2sign_web is imported inside
``atheris.instrument_imports`` so that libFuzzer sees its branches; the str hook lets
it learn the prefixes our parsers compare against. The
``-max_len`` of the target is added unless the flags set one.
"""

from __future__ import annotations

import logging
import sys

import atheris


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit("usage: python -m tests.fuzz.run TARGET [libFuzzer flags] [corpus directories]")
    name, flags = argv[1], argv[2:]
    # Logging would flood the fuzzer's output (every refused cookie is a warning) and slow it down. Only here,
    # in the fuzzing process: the test session imports the targets too and must keep its logging.
    logging.disable(logging.CRITICAL)
    # Not "RegEx": atheris 3.0's pattern proxy refuses match(text, pos), which json.loads calls.
    atheris.enabled_hooks.add("str")
    with atheris.instrument_imports(include=["blake2sign_web"]):
        from tests.fuzz import targets

        target = targets.build(name)
    if not any(flag.startswith("-max_len=") for flag in flags):
        flags.append(f"-max_len={targets.max_len(name)}")
    atheris.Setup([argv[0], *flags], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
