"""The fuzz targets' tally and its summary, a plugin the root conftest loads (``pytest_plugins``)
so that the summary is printed by the process that prints the run's report: with pytest-xdist
(the default, ``-n auto``) that is the controller, which collects no test and loads no
conftest of ``tests/fuzz``; each worker hands its tally over as it ends (``workeroutput``),
and the controller adds them up. In one process (``-n 0``) the tally is that process's.

Each fuzz target records every case it runs in ``fuzz_stats`` (how it ended and how long it
took). The tally only counts: a failing case raises, so that hypothesis sees it and shrinks
it to a minimal example (hypothesis reports each distinct failure of a run, shrunk). The
summary is printed after the tests, whatever the capture mode; when a long run (``-m fuzz``)
took place and ``benchmarks/results/`` exists, it is also written there as JSON.
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

    def add(self, other: dict) -> None:
        """Add a worker's tally (its ``as_dict``) to this one."""
        self.long_run = self.long_run or other["long_run"]
        for name, theirs in other["targets"].items():
            tally = self.targets.setdefault(name, Target())
            tally.cases += theirs["cases"]
            for outcome, count in theirs["outcomes"].items():
                tally.outcomes[outcome] = tally.outcomes.get(outcome, 0) + count
            if theirs["slowest_seconds"] > tally.slowest:
                tally.slowest = theirs["slowest_seconds"]
                tally.slowest_case = theirs["slowest_case"]

    def as_dict(self) -> dict:
        return {
            "long_run": self.long_run,
            "wall_seconds": round(time.perf_counter() - self.started, 1),
            "targets": {name: t.as_dict() for name, t in sorted(self.targets.items())},
        }


STATS = pytest.StashKey[FuzzStats]()


def stats_of(config: pytest.Config) -> FuzzStats:
    """The run's tally in this process, made at its first use."""
    stats = config.stash.get(STATS, None)
    if stats is None:
        stats = config.stash[STATS] = FuzzStats()
    return stats


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its tally to the controller."""
    output = getattr(session.config, "workeroutput", None)
    stats = session.config.stash.get(STATS, None)
    if output is not None and stats is not None and stats.targets:
        output["fuzz_tally"] = stats.as_dict()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """The controller adds up each worker's tally as the worker ends."""
    found = getattr(node, "workeroutput", {}).get("fuzz_tally")
    if found is not None:
        stats_of(node.config).add(found)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = config.stash.get(STATS, None)
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
