"""Fuzz test setup: a per-target tally of the cases run, and its summary at the end of the run.

Each fuzz target records every case it runs in ``fuzz_stats`` (how it ended and how long it
took). The tally only counts: a failing case raises, so that hypothesis sees it and shrinks
it to a minimal example (hypothesis reports each distinct failure of a run, shrunk). The
summary is printed after the tests, whatever the capture mode; when a long run (``-m fuzz``)
took place and ``benchmarks/results/`` exists, it is also written there as JSON. The tally
lives in the process that runs the tests: with pytest-xdist's workers (the default, ``-n
auto``) none reaches the summary, so the long run is run in one process (``-n 0``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"


@dataclass
class Target:
    """The tally of one fuzz target."""

    cases: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    slowest: float = 0.0
    slowest_case: str = ""

    def as_dict(self) -> dict:
        return {
            "cases": self.cases,
            "outcomes": dict(sorted(self.outcomes.items())),
            "slowest_seconds": round(self.slowest, 4),
            "slowest_case": self.slowest_case,
        }


@dataclass
class FuzzStats:
    """Every target's tally, and whether a long (``fuzz``-marked) test ran."""

    targets: dict[str, Target] = field(default_factory=dict)
    long_run: bool = False
    started: float = field(default_factory=time.perf_counter)

    def record(self, target: str, outcome: str, seconds: float, case: str) -> None:
        tally = self.targets.setdefault(target, Target())
        tally.cases += 1
        tally.outcomes[outcome] = tally.outcomes.get(outcome, 0) + 1
        if seconds > tally.slowest:
            tally.slowest, tally.slowest_case = seconds, case[:300]

    def __repr__(self) -> str:  # hypothesis prints the fixtures of a failing case
        return f"FuzzStats({sum(t.cases for t in self.targets.values())} cases)"

    def as_dict(self) -> dict:
        return {
            "long_run": self.long_run,
            "wall_seconds": round(time.perf_counter() - self.started, 1),
            "targets": {name: t.as_dict() for name, t in sorted(self.targets.items())},
        }


_STATS = pytest.StashKey[FuzzStats]()


@pytest.fixture(scope="session")
def fuzz_stats(request) -> FuzzStats:
    stats = request.config.stash.get(_STATS, None)
    if stats is None:
        stats = request.config.stash[_STATS] = FuzzStats()
    return stats


@pytest.fixture(autouse=True)
def _note_long_run(request, fuzz_stats):
    if request.node.get_closest_marker("fuzz") is not None:
        fuzz_stats.long_run = True


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = config.stash.get(_STATS, None)
    if stats is None or not stats.targets:
        return
    report = stats.as_dict()
    write = terminalreporter.write_line
    terminalreporter.section("fuzz summary")
    for name, tally in report["targets"].items():
        outcomes = ", ".join(f"{k} {v}" for k, v in tally["outcomes"].items())
        write(f"{name}: {tally['cases']} cases ({outcomes})")
        write(f"    slowest {tally['slowest_seconds']:.3f} s: {tally['slowest_case']!r}"[:400])
    if stats.long_run and RESULTS.is_dir():
        path = RESULTS / f"fuzz-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(report, indent=2) + "\n")
        write(f"written to {path}")
