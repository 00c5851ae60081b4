"""Run a fuzz target in a subprocess on a copy of its seeds and read what libFuzzer reports.

libFuzzer prints a status line per event (``#1234 NEW cov: 56 ft: 78 corp: 9/1011b ...``:
coverage counters, features, corpus entries and bytes), ``INITED`` once the seeds have
run and ``DONE`` at the end, then ``stat::`` lines with ``-print_final_stats=1``. A crash
leaves its input in the artifact folder as ``crash-<sha1>`` (``timeout-``, ``oom-``,
``leak-`` for the others).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
RSS_LIMIT_MB = 2048
#: Seconds one input may take before libFuzzer calls it a hang (a slow machine stays well under).
INPUT_TIMEOUT = 25
#: Where crashing inputs are copied, outside the repository: pytest keeps only its last few temporary folders.
CRASH_FOLDER = Path(tempfile.gettempdir()) / "blake2sign-fuzz-crashes"

_STATUS = re.compile(r"^#(\d+)\s+(INITED|NEW|REDUCE|pulse|DONE)\s+cov: (\d+) ft: (\d+) corp: (\d+)/", re.MULTILINE)
_STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.MULTILINE)
_ARTIFACT = re.compile(r"^(crash|timeout|oom|leak|slow-unit)-")


@dataclass
class Coverage:
    cov: int = 0
    ft: int = 0
    corpus: int = 0


@dataclass
class FuzzRun:
    target: str
    returncode: int
    wall_seconds: float
    output: str
    #: After the seeds ran, and at the end.
    seeded: Coverage = field(default_factory=Coverage)
    final: Coverage = field(default_factory=Coverage)
    executions: int = 0
    executions_per_second: int = 0
    new_units: int = 0
    peak_rss_mb: int = 0
    #: Inputs libFuzzer saved as crashing, hanging or running out of memory.
    crashes: list[Path] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.target}: {self.executions} executions ({self.executions_per_second}/s) in "
            f"{self.wall_seconds:.1f} s; cov {self.seeded.cov} -> {self.final.cov}, ft {self.seeded.ft} -> "
            f"{self.final.ft}, corpus {self.seeded.corpus} -> {self.final.corpus} (+{self.new_units} new); "
            f"rss {self.peak_rss_mb} MB; " + (f"{len(self.crashes)} CRASH(ES)" if self.crashes else "no crash")
        )

    def crash_report(self) -> str:
        """Each saved input (repr and path), then the end of the output, which holds the traceback."""
        lines = [f"fuzz target {self.target} exited {self.returncode}"]
        for path in self.crashes:
            lines.append(f"{path.name}: {path.read_bytes()!r}\n  saved at {path}")
        start = self.output.find("=== Uncaught Python exception: ===")
        if start >= 0:
            lines.append(self.output[start : start + 8000])
        else:  # a hang, running out of memory, or the process died
            lines.append("--- end of the fuzzer's output ---")
            lines.append(self.output[-6000:])
        return "\n".join(lines)


def fuzz(target: str, seconds: float, workdir: Path) -> FuzzRun:
    """Fuzz ``target`` for ``seconds`` on a copy of its seeds in ``workdir``; crashes are saved there too."""
    corpus = workdir / "corpus"
    shutil.copytree(CORPUS / target, corpus)
    artifacts = workdir / "artifacts"
    artifacts.mkdir()
    command = [
        sys.executable,
        "-m",
        "tests.fuzz.run",
        target,
        f"-max_total_time={max(1, round(seconds))}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-timeout={INPUT_TIMEOUT}",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        str(corpus),
    ]
    started = time.monotonic()
    completed = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, errors="replace", timeout=seconds + 300, check=False
    )
    run = FuzzRun(target, completed.returncode, time.monotonic() - started, completed.stdout + completed.stderr)
    statuses = _STATUS.findall(run.output)
    for _, event, cov, ft, corp in statuses:
        if event == "INITED":
            run.seeded = Coverage(int(cov), int(ft), int(corp))
    if statuses:
        _, _, cov, ft, corp = statuses[-1]
        run.final = Coverage(int(cov), int(ft), int(corp))
    stats = {name: int(value) for name, value in _STAT.findall(run.output)}
    run.executions = stats.get("number_of_executed_units", 0)
    run.executions_per_second = stats.get("average_exec_per_sec", 0)
    run.new_units = stats.get("new_units_added", 0)
    run.peak_rss_mb = stats.get("peak_rss_mb", 0)
    for path in sorted(artifacts.iterdir()):
        if _ARTIFACT.match(path.name):
            kept = CRASH_FOLDER / target / path.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, kept)
            run.crashes.append(kept)
    return run
